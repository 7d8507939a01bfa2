"""A record of one firm's nightly refresh, and of the host changes the memory missed, which it repairs."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models

from graph_memory import conf
from graph_memory.models.choices import TextChoices
from graph_memory.plumbing.display import local_time


class RefreshRun(models.Model):
    class Status(TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        # Still "running" after its lease ran out: the worker died (killed, its machine lost) without
        # finishing. Set by the firm's next run (`refresh.nightly.refresh_firm`); nothing else ends it.
        ABANDONED = "abandoned", "Abandoned (worker died)"

    firm = models.ForeignKey(conf.firm_model_label(), on_delete=models.CASCADE, related_name="+")
    trigger = models.CharField(max_length=16, default="nightly", help_text="nightly, command or admin")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    claimed = models.PositiveIntegerField(default=0)
    rewritten = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    # Summaries are embedded as they are saved; this counts the run's retry of those that failed then.
    embedded = models.PositiveIntegerField(
        "missing embeddings filled in",
        default=0,
        help_text="Summaries whose embedding had failed when they were saved, embedded by this run's retry.",
    )
    tokens_used = models.PositiveIntegerField(default=0)
    error = models.CharField(max_length=500, blank=True)
    # As long as a case's lease and renewed after every case (refresh/nightly.py): a live worker is
    # always inside it, so a "running" run past it has lost its worker.
    lease_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["firm", "-started_at"], name="gm_run_firm")]

    def __str__(self) -> str:
        return f"Refresh of {self.firm} at {local_time(self.started_at, self.firm)}"


class MissedChange(models.Model):
    """A host change the memory failed to react to (`signals.py`), kept until the next nightly run repairs it.

    The receivers never let a failure reach the host's write: they log it and
    record it here, with what the reaction was for (`work`), the host row that
    changed and, when they were known, its cases. `refresh/missed.py` redoes
    the work. `firm` is null when not even the firm could be told (the
    adapter's own code failed); only operators see those.
    """

    class Work(TextChoices):
        STALE = "stale", "Flag summaries stale"
        GRAPH = "graph", "Sync the connection map"
        LABEL = "label", "Refresh a node's label"
        DOCUMENT = "document", "Flag document indexes stale"
        RETENTION = "retention", "Redact admin's log of a deleted record"
        ACCESS = "access", "Record a user's firm and role in the access ledger"
        ACTIVITY = "activity", "Recompute a case's last activity"

    firm = models.ForeignKey(conf.firm_model_label(), null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    work = models.CharField(max_length=16, choices=Work.choices)
    model = models.CharField(max_length=200, help_text="The host model whose row changed (app_label.model).")
    object_id = models.CharField(max_length=64, blank=True)
    case_ids = ArrayField(models.BigIntegerField(), default=list, blank=True, help_text="Empty: not known.")
    # A label's node kind ({"kind": ...}); a document's refs ({"documents": [[case_id, key], ...]}).
    detail = models.JSONField(default=dict, blank=True)
    error = models.CharField(max_length=500, help_text="The exception: its type and message.")
    created_at = models.DateTimeField(auto_now_add=True)
    repaired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["firm", "-created_at"], name="gm_missed_firm"),
            models.Index(fields=["firm"], condition=models.Q(repaired_at__isnull=True), name="gm_missed_open"),
        ]

    def __str__(self) -> str:
        return f"{self.get_work_display()} after a change to {self.model} #{self.object_id}"
