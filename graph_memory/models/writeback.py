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
        return f"Note refused on case {self.case_id} at {self.created_at:%Y-%m-%d %H:%M}"
