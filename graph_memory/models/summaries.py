"""One rolling summary per case, its append-only history, and the AI-call log."""

from __future__ import annotations

from typing import Any

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from pgvector.django import HnswIndex, VectorField

from graph_memory import conf
from graph_memory.models.choices import TextChoices
from graph_memory.plumbing.display import case_label, local_time


class CaseSummary(models.Model):
    """The current summary of one case plus its freshness state.

    The row exists as soon as anything marks the case stale, before any text
    is written; `text == ""` means "never summarised".
    """

    case = models.OneToOneField(conf.case_model_label(), on_delete=models.CASCADE, related_name="memory_summary")
    firm = models.ForeignKey(conf.firm_model_label(), on_delete=models.CASCADE, related_name="+")

    # The summary itself (the latest version that passed verification).
    text = models.TextField(blank=True)
    content = models.JSONField(default=dict, blank=True)
    writer = models.CharField(max_length=32, blank=True)
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=32, blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    source_ids = models.JSONField(default=list, blank=True)
    verification = models.JSONField(default=dict, blank=True)
    written_at = models.DateTimeField(null=True, blank=True)
    written_generation = models.PositiveBigIntegerField(default=0)

    # Freshness: flipped by one UPDATE on every relevant change.
    stale = models.BooleanField(default=True)
    stale_since = models.DateTimeField(null=True, blank=True)
    generation = models.PositiveBigIntegerField(default=0, help_text="Bumped on every change to the case's records.")

    # Failures and backoff.
    attempts = models.PositiveIntegerField(default=0, help_text="Failed attempts since the last success.")
    last_error = models.TextField(blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    next_attempt_after = models.DateTimeField(null=True, blank=True)
    last_attempt = models.JSONField(
        default=dict,
        blank=True,
        help_text="The last rewrite attempt: outcome, reason, its verification report and the regression guard's figures.",
    )

    # Search. The vector is kept in the row (column storage MAIN, set by migration 0011, which a
    # field cannot declare): the exact scan then reads one heap page per visible case, no TOAST.
    embedding = VectorField(dimensions=conf.DEFAULTS["EMBEDDING_DIMENSIONS"], null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True)
    search_vector = SearchVectorField(null=True, editable=False)

    class Meta:
        verbose_name_plural = "case summaries"
        indexes = [
            models.Index(fields=["firm", "stale", "stale_since"], name="gm_summary_stale"),
            GinIndex(fields=["search_vector"], name="gm_summary_fts"),
            HnswIndex(
                name="gm_summary_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
        ]

    def __str__(self) -> str:
        return f"Summary of {case_label(self.case)}"

    @property
    def has_summary(self) -> bool:
        return bool(self.text)


class SummaryVersion(models.Model):
    """Append-only history: every summary that was saved, as it was saved."""

    case = models.ForeignKey(conf.case_model_label(), on_delete=models.CASCADE, related_name="+")
    firm = models.ForeignKey(conf.firm_model_label(), on_delete=models.CASCADE, related_name="+")
    text = models.TextField()
    content = models.JSONField(default=dict)
    writer = models.CharField(max_length=32)
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=32)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    source_ids = models.JSONField(default=list)
    verification = models.JSONField(default=dict)
    generation = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["case", "-created_at"], name="gm_version_case")]

    def __str__(self) -> str:
        return f"Version of {case_label(self.case)} saved {local_time(self.created_at, self.firm)}"


class AICall(models.Model):
    """One model call. Counts and ids only: no prompt or output text is kept here."""

    class Purpose(TextChoices):
        SUMMARY = "summary", "Summary"
        EMBEDDING = "embedding", "Embedding"
        DOCUMENT_INDEX = "document_index", "Document index"
        DOCUMENT_ROUTE = "document_route", "Document question: routing"
        DOCUMENT_ANSWER = "document_answer", "Document question: answer"

    class Outcome(TextChoices):
        OK = "ok", "OK"
        REJECTED = "rejected", "Rejected by verification or the regression guard"
        ERROR = "error", "Error"

    # The largest count the columns hold (PostgreSQL integer); see `bounded`.
    COUNT_MAX = 2**31 - 1

    firm = models.ForeignKey(conf.firm_model_label(), on_delete=models.CASCADE, related_name="+")
    case = models.ForeignKey(conf.case_model_label(), null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    purpose = models.CharField(max_length=16, choices=Purpose.choices)
    writer = models.CharField(max_length=32)
    model = models.CharField(max_length=200, blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    error = models.CharField(max_length=500, blank=True)
    # One row per HTTP attempt. The request's response format, the server's own
    # explanation of a failure (bounded, no case text), whether the token counts
    # are the writer's estimate (the server reported none, e.g. on a timeout),
    # and for the attempt that carried the answer, its verification counts.
    request_mode = models.CharField(max_length=24, blank=True)
    server_error = models.CharField(max_length=300, blank=True)
    tokens_estimated = models.BooleanField(default=False)
    report = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "AI call"
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["firm", "-created_at"], name="gm_aicall_firm")]

    def __str__(self) -> str:
        about = f" for {case_label(self.case)}" if self.case_id else ""
        return f"{self.get_purpose_display()} call{about} at {local_time(self.created_at, self.firm)} ({self.outcome})"

    @classmethod
    def bounded(cls, value: Any) -> int:
        """`value` as a count the log can store: a whole number from 0 to COUNT_MAX, 0 if it is not a number.

        The last guard before an insert: a count a model server reported
        (-7, 5e9, "many") must never make the row, and with it the rewrite
        of the case, fail. The writers validate counts first and mark the
        ones they replaced as estimates; this only keeps the row storable.
        """
        if isinstance(value, bool):
            return 0
        try:
            number = int(value)
        except (TypeError, ValueError, OverflowError):
            return 0
        return min(max(number, 0), cls.COUNT_MAX)
