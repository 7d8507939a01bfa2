"""When each case was last active, kept where the memory index can walk it in order."""

from __future__ import annotations

from django.db import models
from django.db.models import F

from graph_memory import conf
from graph_memory.plumbing.display import case_label, local_time


class CaseActivity(models.Model):
    """One row a case: when it was last active, the latest of three clocks (summaries/activity.py keeps it).

    The host's (the adapter's `case_activity`: when the case's header last changed), its summary's
    writing and its stale flag's raising: the order the memory index lists a viewer's cases in. Kept in
    one column of the memory's own, indexed behind the firm, so the index walks the firm's cases most
    recently active first and stops at its page, instead of sorting every case a viewer may open by
    clocks in two tables. Every case has a row, an excluded one too (a time, no case text).
    """

    case = models.OneToOneField(conf.case_model_label(), primary_key=True, on_delete=models.CASCADE, related_name="+")
    # No index of its own: the order's index starts with the firm.
    firm = models.ForeignKey(conf.firm_model_label(), on_delete=models.CASCADE, related_name="+", db_index=False)
    active_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "case activity"
        indexes = [
            models.Index(F("firm"), F("active_at").desc(nulls_last=True), F("case").desc(), name="gm_activity_order")
        ]

    def __str__(self) -> str:
        return f"{case_label(self.case)} last active {local_time(self.active_at, self.firm)}"
