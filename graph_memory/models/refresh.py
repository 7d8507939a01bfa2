"""A record of one firm's nightly refresh."""

from __future__ import annotations

from django.db import models

from graph_memory import conf


class RefreshRun(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    firm = models.ForeignKey(conf.firm_model_label(), on_delete=models.CASCADE, related_name="+")
    trigger = models.CharField(max_length=16, default="nightly", help_text="nightly, command or admin")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    claimed = models.PositiveIntegerField(default=0)
    rewritten = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    embedded = models.PositiveIntegerField(default=0)
    tokens_used = models.PositiveIntegerField(default=0)
    error = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["firm", "-started_at"], name="gm_run_firm")]

    def __str__(self) -> str:
        return f"Refresh of firm {self.firm_id} at {self.started_at:%Y-%m-%d %H:%M}"
