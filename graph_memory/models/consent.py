"""Memory consent (issue 31, item 4): the clients and cases a firm keeps out of the memory.

A row excludes one case, or one client (every case of it, present and future:
the rule is evaluated against the case's client when asked, see
`graph_memory.consent.exclusions`). Re-including deletes the row; both
transitions are in the access ledger (`AccessChange`, reason `consent`) and,
when made in admin, in Django's admin log. Ids and the reason only: the
reason is the firm admin's own words, never read by the memory.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from graph_memory import conf
from graph_memory.models.choices import TextChoices


class MemoryExclusion(models.Model):
    class Kind(TextChoices):
        CASE = "case", "Case"
        CLIENT = "client", "Client"

    firm = models.ForeignKey(conf.firm_model_label(), on_delete=models.CASCADE, related_name="+", db_index=False)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    # A plain id, no foreign key: the client model is the host's (named only through the adapter), and an
    # exclusion of a case that is later deleted is harmless (the case has no memory either way).
    ref_id = models.BigIntegerField(help_text="The host's id of the case or the client.")
    reason = models.TextField(help_text="Why (the client's instruction, the engagement letter): for the record.")
    excluded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    excluded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "memory exclusion"
        ordering = ["-excluded_at", "-id"]
        # Also the index of every check: (firm, kind, ref) is what each statement probes.
        constraints = [models.UniqueConstraint(fields=["firm", "kind", "ref_id"], name="gm_exclusion_unique")]

    def __str__(self) -> str:
        # Admin's pages annotate the map's label of the case or client (admin_consent.py); elsewhere its id.
        named = getattr(self, "node_label", None) or f"#{self.ref_id}"
        return f"{self.get_kind_display()} {named} excluded from the memory"
