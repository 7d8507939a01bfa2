"""The write-back guard's record: every note it refused, without the note.

The refused text is not kept: it carries another case's facts, and a table of
them would be one more place those facts live. What is kept says who tried,
where, when, which kinds of fact matched and from which of the filer's cases
(ids only), enough for a firm admin to see a pattern and ask.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models

from graph_memory import conf
from graph_memory.plumbing.display import case_label, local_time


class NoteRefusal(models.Model):
    firm = models.ForeignKey(conf.firm_model_label(), on_delete=models.CASCADE, related_name="+")
    # The case the note was to be filed into: its refusals go with it.
    case = models.ForeignKey(conf.case_model_label(), on_delete=models.CASCADE, related_name="+", db_index=False)
    filer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    kinds = ArrayField(models.CharField(max_length=16), default=list, help_text="The kinds of fact that matched.")
    source_case_ids = ArrayField(
        models.BigIntegerField(), default=list, help_text="The filer's cases the matched facts belong to."
    )
    matches = models.PositiveIntegerField(default=0, help_text="How many facts matched.")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["firm", "-created_at"], name="gm_refusal_firm"),
            models.Index(fields=["case"], name="gm_refusal_case"),
        ]

    def __str__(self) -> str:
        return f"Note refused on {case_label(self.case)} at {local_time(self.created_at, self.firm)}"


class NoteFiling(models.Model):
    """One idempotency key's note: a note filed again with the same key gets this one back, not a second note.

    The key is a digest of the client's `Idempotency-Key` header or, without
    one, of the note's origin (the case, the conversation and the message ids
    it keeps). Inserted in the transaction that files the note, and unique per
    firm and filer: a concurrent duplicate waits on the first one's insert and
    then finds its row (`notes.note_file`), with no read-then-write. Holds no
    text, only digests and the note's key; the note itself stays the host's.
    """

    # The unique key leads with the firm: it is the firm's index too.
    firm = models.ForeignKey(conf.firm_model_label(), on_delete=models.CASCADE, related_name="+", db_index=False)
    filer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False)
    key = models.CharField(max_length=64, help_text="SHA-256 of the Idempotency-Key header, or of the note's origin.")
    case = models.ForeignKey(conf.case_model_label(), on_delete=models.CASCADE, related_name="+", db_index=False)
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of the case, title, text and origin filed.")
    note_key = models.CharField(max_length=200, blank=True, help_text="The note's key (its source id is note:<key>).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["firm", "filer", "key"], name="gm_note_filing_key")]
        indexes = [models.Index(fields=["case"], name="gm_note_filing_case")]

    def __str__(self) -> str:
        return f"Note {self.note_key} filed on case {self.case_id}"
