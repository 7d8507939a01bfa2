"""A record of one firm's nightly refresh."""

from __future__ import annotations

from django.db import models

from graph_memory import conf
from graph_memory.display import local_time


class RefreshRun(models.Model):
    class Status(models.TextChoices):
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
