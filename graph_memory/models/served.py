"""The served ledger (issue 31, item 3): one row per answer the memory gave, hash-chained per firm.

A row keeps ids and a keyed fingerprint of the query, never the query's text
nor any case text: who asked, through which endpoint or tool, which of the
cases they may open the answer drew on, how it ended, when. Firm and viewer
are plain numbers, not foreign keys: deleting a user or a case must not
rewrite a row the chain covers.

Readers write rows unsealed (`seq` null, `prev_hash` and `row_hash` empty) with one
INSERT and never touch the chain; `served_ledger.seal_firm` later gives them
their place in the firm's chain, in order, under the firm's advisory lock.
`ServedChain` holds each firm's head (and where pruning left off), so a row
deleted from either end is found as surely as one from the middle.
"""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models

from graph_memory.models.choices import TextChoices
from graph_memory.plumbing.display import endpoint_words, page_time


class ServedRow(models.Model):
    class Status(TextChoices):
        OK = "ok"
        NOT_MODIFIED = "not_modified"
        NOT_FOUND = "not_found"
        INVALID = "invalid"
        REFUSED = "refused"  # 409 crosses_wall or memory_excluded, 403 csrf_failed
        THROTTLED = "throttled"
        METHOD_NOT_ALLOWED = "method_not_allowed"
        NOT_SUPPORTED = "not_supported"
        ERROR = "error"

    id = models.BigAutoField(primary_key=True)
    firm_id = models.BigIntegerField()
    viewer_id = models.BigIntegerField(null=True)
    endpoint = models.CharField(max_length=100, help_text="api:<view>, mcp:<tool> or admin:<page>.")
    case_ids = ArrayField(
        models.BigIntegerField(), default=list, help_text="The cases the answer drew on (all of them the viewer's)."
    )
    status = models.CharField(max_length=20, choices=Status.choices)
    at = models.DateTimeField()
    query_fingerprint = models.CharField(max_length=64, help_text="HMAC of the request; never its text.")
    # Null (the hashes empty) until sealed into the firm's chain.
    seq = models.BigIntegerField(null=True)
    prev_hash = models.CharField(max_length=64, default="", db_default="")
    row_hash = models.CharField(max_length=64, default="", db_default="")

    class Meta:
        ordering = ["-at", "-id"]
        constraints = [models.UniqueConstraint(fields=["firm_id", "seq"], name="gm_served_firm_seq")]
        indexes = [
            models.Index(fields=["firm_id", "viewer_id", "at"], name="gm_served_viewer"),
            models.Index(fields=["firm_id", "at"], name="gm_served_firm_at"),
            # The sealer's work list: what is not in the chain yet, per firm, in insertion order.
            models.Index(fields=["firm_id", "id"], name="gm_served_unsealed", condition=models.Q(seq__isnull=True)),
        ]

    def __str__(self) -> str:
        return f"{endpoint_words(self.endpoint)}, answered {self.get_status_display().lower()} at {page_time(self.at)}"


class ServedChain(models.Model):
    """Per firm: the chain's head (last sealed row) and the last row pruning removed."""

    firm_id = models.BigIntegerField(primary_key=True)
    head_seq = models.BigIntegerField(default=0)
    head_hash = models.CharField(max_length=64, default="")
    pruned_seq = models.BigIntegerField(default=0)
    pruned_hash = models.CharField(max_length=64, default="")
    sealed_at = models.DateTimeField(null=True)

    def __str__(self) -> str:
        return f"Firm {self.firm_id}: row {self.head_seq}, {self.head_hash[:16]}"
