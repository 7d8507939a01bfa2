"""Long documents: one routing index per processed document, and the log of questions asked of them.

An index belongs to exactly one document of one case (so to one fixed
audience: whoever may open the case). It is a catalogue, not a summary:
sections with a stable id, a title, a page range, terms that literally
appear in those pages and a short "covers" line. No question text is kept
anywhere but in the case's own rows.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from graph_memory import conf
from graph_memory.models.choices import TextChoices
from graph_memory.plumbing.display import case_label, local_time


class DocumentIndex(models.Model):
    """The routing index of one document (`document_key` is the host's key, as in source ids `document:<key>`).

    `sections` is a list of {"id", "title", "first_page", "last_page", "terms", "covers"}; every term
    passed the literal check against its section's pages (`report` counts what was dropped).
    Freshness works like a summary's: a change bumps `generation` and raises `stale`; a rebuild
    clears the flag only if no change landed while it was being built.
    """

    class Builder(TextChoices):
        EXTRACTIVE = "extractive", "Offline (headings and tf-idf)"
        OPENAI = "openai", "Model"

    case = models.ForeignKey(conf.case_model_label(), on_delete=models.CASCADE, related_name="+")
    firm = models.ForeignKey(conf.firm_model_label(), on_delete=models.CASCADE, related_name="+")
    document_key = models.TextField()  # the host's key, any length: a save of the host's row must never fail here
    title = models.CharField(max_length=300, blank=True)
    page_count = models.PositiveIntegerField(default=0)
    sections = models.JSONField(default=list, blank=True)
    report = models.JSONField(default=dict, blank=True, help_text="Terms proposed / kept / dropped, with examples.")
    builder = models.CharField(max_length=16, choices=Builder.choices, blank=True)
    model = models.CharField(max_length=200, blank=True)
    built_at = models.DateTimeField(null=True, blank=True)
    built_generation = models.PositiveBigIntegerField(default=0)

    stale = models.BooleanField(default=True)
    stale_since = models.DateTimeField(null=True, blank=True)
    generation = models.PositiveBigIntegerField(default=0)

    attempts = models.PositiveIntegerField(default=0, help_text="Failed builds since the last success.")
    last_error = models.CharField(max_length=500, blank=True)
    next_attempt_after = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "document indexes"
        ordering = ["case", "document_key"]
        constraints = [models.UniqueConstraint(fields=["case", "document_key"], name="gm_docindex_unique")]
        indexes = [models.Index(fields=["firm", "stale", "stale_since"], name="gm_docindex_stale")]

    def __str__(self) -> str:
        return f"Index of “{self.title or self.document_key}” of {case_label(self.case)}"

    @property
    def built(self) -> bool:
        return self.built_at is not None


class DocumentQuery(models.Model):
    """One question asked of a case's documents: who, which case, what was routed and served, how it ended.

    The question itself is not kept (it may name what the asker knows from elsewhere); only ids,
    counts and the outcome.
    """

    class Outcome(TextChoices):
        SUCCESS = "success", "Success"
        UNROUTED = "unrouted", "Routed to no section"
        FAILURE = "failure", "Failure"
        ABORTED = "aborted", "Aborted (client left)"

    firm = models.ForeignKey(conf.firm_model_label(), on_delete=models.CASCADE, related_name="+")
    case = models.ForeignKey(conf.case_model_label(), on_delete=models.CASCADE, related_name="+")
    viewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    documents = models.JSONField(default=list, blank=True)
    sections = models.JSONField(default=list, blank=True)
    router = models.CharField(max_length=32, blank=True, help_text="model, offline, or offline after a model error")
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    error = models.CharField(max_length=300, blank=True)
    streamed = models.BooleanField(default=False)
    quotes_served = models.PositiveIntegerField(default=0)
    quotes_rejected = models.PositiveIntegerField(default=0)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "document queries"
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["firm", "-created_at"], name="gm_docquery_firm")]

    def __str__(self) -> str:
        asked = local_time(self.created_at, self.firm)
        return f"Question on {case_label(self.case)} at {asked} ({self.get_outcome_display().lower()})"
