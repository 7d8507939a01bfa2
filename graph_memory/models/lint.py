"""The lint pass's record: one run per firm, its findings; the next run replaces both."""

from __future__ import annotations

from django.db import models

from graph_memory import conf
from graph_memory.models.choices import TextChoices
from graph_memory.plumbing.display import local_time


class LintRun(models.Model):
    class Status(TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    firm = models.ForeignKey(conf.firm_model_label(), on_delete=models.CASCADE, related_name="+")
    trigger = models.CharField(max_length=16, default="weekly", help_text="weekly, command or admin")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    counts = models.JSONField(default=dict, blank=True, help_text="Findings by kind.")
    error = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["firm", "-started_at"], name="gm_lintrun_firm")]

    def __str__(self) -> str:
        return f"Lint of {self.firm} at {local_time(self.started_at, self.firm)}"


class LintFinding(models.Model):
    """One thing the lint found: a plain sentence and the records involved (source ids, node and edge ids)."""

    class Kind(TextChoices):
        CONTRADICTED = "contradicted", "Contradicted by newer records"
        STALE = "stale", "Stale too long"
        WEAK = "weak", "Weak summary"
        MAP_DRIFT = "map_drift", "Map drift"
        PARTY_HYGIENE = "party_hygiene", "Party hygiene"
        SEARCH_GAP = "search_gap", "Search gap"
        CROSSING_NOTE = "crossing_note", "Note crossing the wall"
        INSTRUCTION_LIKE = "instruction_like", "Record text addressed to the assistant"

    class Severity(TextChoices):
        HIGH = "high", "High"
        MEDIUM = "medium", "Medium"
        LOW = "low", "Low"

    run = models.ForeignKey(LintRun, on_delete=models.CASCADE, related_name="findings")
    firm = models.ForeignKey(conf.firm_model_label(), on_delete=models.CASCADE, related_name="+")
    # A finding about a case goes with the case (its sentence may quote the case's records).
    case = models.ForeignKey(
        conf.case_model_label(), null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    kind = models.CharField(max_length=16, choices=Kind.choices)
    code = models.CharField(max_length=32, help_text="Which check of the kind, e.g. deadline_done, orphan_node.")
    severity = models.CharField(max_length=8, choices=Severity.choices)
    message = models.TextField()
    records = models.JSONField(default=list, blank=True, help_text="The records involved.")

    class Meta:
        ordering = ["kind", "code", "case", "id"]
        indexes = [models.Index(fields=["firm", "kind"], name="gm_lintfinding_firm_kind")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.message[:80]}"
