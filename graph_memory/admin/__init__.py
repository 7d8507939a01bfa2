"""The memory layer in Django admin: derived rows, read-only, scoped to the admin's firm.

Nothing here edits derived data by hand (nodes, edges, summaries and logs are
rewritten by their services); the only writes are the actions on case
summaries and memory consent's (excluding a case or client from the map's list), and each of them
calls a service.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet
from django.http import HttpRequest
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from graph_memory import services
from graph_memory.adapter import firm_model, get_adapter
from graph_memory.admin.consent import MemoryExclusionAdmin as MemoryExclusionAdmin  # memory consent (issue 31)
from graph_memory.admin.consent import exclude_from_memory
from graph_memory.admin.display import (
    ATTEMPT_WORDS,
    attempt_table,
    case_labels,
    counted,
    fact_table,
    log_admin_action,
    operator_details,
    source_list,
    time_column,
    trigger_words,
    verification_table,
    worded_filter,
)
from graph_memory.admin.documents import DocumentIndexAdmin as DocumentIndexAdmin  # long documents' pages
from graph_memory.admin.health import health_view
from graph_memory.admin.ledger import AccessChangeAdmin as AccessChangeAdmin  # registers the access ledger's pages
from graph_memory.admin.lint import LintFindingAdmin as LintFindingAdmin  # registers the lint's admin pages
from graph_memory.admin.scoping import DerivedAdmin
from graph_memory.admin.served import ServedRowAdmin as ServedRowAdmin  # the served ledger (issue 31)
from graph_memory.models import AICall, CaseSummary, Edge, Node, NoteRefusal, RefreshRun, SummaryVersion
from graph_memory.plumbing.display import page_time
from graph_memory.summaries.rewrite import SummaryFailed

# "Regenerate now" waits on one model call per case inside the request; more
# than a handful belongs to the nightly run (mark them stale instead).
REGENERATE_MAX = 10
HISTORY_MAX = 20


@admin.register(Node)
class NodeAdmin(DerivedAdmin):
    actions = [exclude_from_memory]
    list_display = ["label", "kind", "firm"]
    list_filter = ["kind", "firm"]
    list_select_related = ["firm"]
    search_fields = ["label", "name_key"]
    operator_fields = ("ref_id",)  # the host record's primary key: the label names it


@admin.register(Edge)
class EdgeAdmin(DerivedAdmin):
    list_display = ["source", "kind", "target", "case", "firm"]
    list_filter = ["kind", "firm"]
    list_select_related = ["source", "target", "case", "firm"]
    search_fields = ["source__label", "target__label"]


class SummaryStateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("failed", "Failing (attempts > 0)"), ("never", "Never summarised")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "failed":
            return queryset.filter(attempts__gt=0)
        if self.value() == "never":
            return queryset.filter(text="")
        return queryset


class CaseSearchMixin:
    """Search by the case's fields the adapter names, and the text. Asked per request, never at import:
    a broken adapter setting must leave admin importable, so that `manage.py check` can name it (E033)."""

    def get_search_fields(self, request: HttpRequest) -> list[str]:
        return [*(f"case__{name}" for name in get_adapter().case_admin_search_fields), "text"]


@admin.register(CaseSummary)
class CaseSummaryAdmin(CaseSearchMixin, DerivedAdmin):
    written_at_local = time_column("written_at", "written")
    stale_since_local = time_column("stale_since", "stale since")
    last_attempt_at_local = time_column("last_attempt_at", "last attempt at")
    next_attempt_after_local = time_column("next_attempt_after", "next attempt after")
    # What fits a 1400 px screen; writer, model and generation are on the change page.
    list_display = ["case", "stale", "attempts", "written_at_local", "embedding_present", "firm"]
    list_filter = ["stale", SummaryStateFilter, "writer", "firm"]
    list_select_related = ["case", "firm"]
    actions = ["mark_stale", "regenerate_now", "rebuild_graph"]
    fieldsets = [
        (None, {"fields": ["case", "firm", "summary_text"]}),
        (
            "Writer",
            {
                "fields": [
                    "writer",
                    "model",
                    "prompt_version",
                    "tokens_in",
                    "tokens_out",
                    "written_at_local",
                    "written_generation",
                ]
            },
        ),
        ("Freshness", {"fields": ["stale", "stale_since_local", "generation"]}),
        (
            "Failures",
            {
                "fields": [
                    "attempts", "last_error", "last_attempt_at_local", "next_attempt_after_local",
                    "last_attempt_report", "last_attempt_raw",
                ]
            },
        ),
        ("Verification", {"fields": ["verification_report", "cited_records"]}),
        ("Search", {"fields": ["embedding_present", "embedding_model"]}),
        ("Version history", {"fields": ["version_history"]}),
    ]
    readonly_fields = [name for _, options in fieldsets for name in options["fields"]]
    operator_fields = ("last_attempt_raw",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        # The vector is never loaded here: "present or not" is all a page shows.
        return (
            super()
            .get_queryset(request)
            .defer("embedding", "search_vector")
            .annotate(has_embedding=ExpressionWrapper(Q(embedding__isnull=False), output_field=BooleanField()))
        )

    def get_urls(self) -> list[Any]:
        health = self.admin_site.admin_view(lambda request: health_view(request, self))
        return [path("health/", health, name="graph_memory_health"), *super().get_urls()]

    @admin.display(description="embedding", boolean=True, ordering="has_embedding")
    def embedding_present(self, obj: CaseSummary) -> bool:
        return bool(getattr(obj, "has_embedding", False))

    @admin.display(description="current text")
    def summary_text(self, obj: CaseSummary) -> str:
        if not obj.text:
            return "(never summarised)"
        return format_html('<div style="white-space: pre-wrap; max-width: 60em">{}</div>', obj.text)

    @admin.display(description="verification report")
    def verification_report(self, obj: CaseSummary) -> str:
        return verification_table(obj.verification)

    @admin.display(description="last attempt")
    def last_attempt_report(self, obj: CaseSummary) -> str:
        return attempt_table(obj.last_attempt or {})

    @admin.display(description="last attempt, as stored")
    def last_attempt_raw(self, obj: CaseSummary) -> str:
        return operator_details(obj.last_attempt)

    @admin.display(description="records cited")
    def cited_records(self, obj: CaseSummary) -> str:
        urls = get_adapter().record_admin_urls(case_id=obj.case_id, source_ids=obj.source_ids or [])
        return source_list(obj.source_ids or [], urls=urls)

    @admin.display(description="saved versions (newest first)")
    def version_history(self, obj: CaseSummary) -> str:
        versions = list(
            SummaryVersion.objects.filter(case_id=obj.case_id, firm_id=obj.firm_id).order_by("-created_at", "-id")[
                : HISTORY_MAX + 1
            ]
        )
        if not versions:
            return "No saved versions."
        rows = format_html_join(
            "",
            "<tr><td><a href='{}'>{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{} / {}</td></tr>",
            (
                (
                    reverse("admin:graph_memory_summaryversion_change", args=[v.pk]),
                    page_time(v.created_at),
                    v.writer,
                    v.model or "—",
                    v.generation,
                    v.tokens_in,
                    v.tokens_out,
                )
                for v in versions[:HISTORY_MAX]
            ),
        )
        every = reverse("admin:graph_memory_summaryversion_changelist") + f"?case__id__exact={obj.case_id}"
        more = f"every version (more than {HISTORY_MAX})" if len(versions) > HISTORY_MAX else "the list of versions"
        return format_html(
            "<table><thead><tr><th>saved</th><th>writer</th><th>model</th><th>generation</th>"
            "<th>tokens in / out</th></tr></thead><tbody>{}</tbody></table><p><a href='{}'>{}</a></p>",
            rows,
            every,
            more,
        )

    @admin.action(description="Mark stale (rewritten by the next nightly run)")
    def mark_stale(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        summaries = list(queryset.select_related("case", "firm"))
        services.mark_stale(case_ids=[summary.case_id for summary in summaries])
        log_admin_action(request, summaries, "Marked stale from admin: the next nightly run rewrites it.")
        done = counted(len(summaries), "case summary", "case summaries")
        self.message_user(request, f"Marked {done} stale.", messages.SUCCESS)

    @admin.action(description="Regenerate now")
    def regenerate_now(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        summaries = list(queryset.select_related("case", "firm").order_by("pk")[: REGENERATE_MAX + 1])
        if len(summaries) > REGENERATE_MAX:
            self.message_user(
                request,
                f"Regenerate at most {REGENERATE_MAX} summaries at a time; mark the rest stale for tonight's run.",
                messages.WARNING,
            )
            return
        done = 0
        for summary in summaries:
            try:
                services.summarize_case(case_id=summary.case_id)
            except SummaryFailed as exc:
                log_admin_action(
                    request, [summary], f"Regenerate now from admin failed ({exc}); the previous summary is kept."
                )
                self.message_user(
                    request, f"{summary.case}: not regenerated ({exc}). The previous summary is kept.", messages.ERROR
                )
            else:
                log_admin_action(request, [summary], "Regenerated now from admin.")
                done += 1
        if done:
            self.message_user(request, f"Regenerated {counted(done, 'case summary', 'case summaries')}.", messages.SUCCESS)

    @admin.action(description="Rebuild the connection map for the firm")
    def rebuild_graph(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        # The queryset is already scoped: a firm admin can only name their own firm.
        firm_ids = sorted(set(queryset.values_list("firm_id", flat=True)))
        for firm in firm_model().objects.filter(pk__in=firm_ids).order_by("pk"):
            changes = services.graph_rebuild_firm(firm_id=firm.pk)
            done = changes.describe()
            # The map is the firm's, not one summary's: the entry goes to the firm's history.
            log_admin_action(request, [firm], f"Rebuilt the connection map from admin: {done}.")
            self.message_user(request, f"Rebuilt the connection map of {firm}: {done}.", messages.SUCCESS)


@admin.register(SummaryVersion)
class SummaryVersionAdmin(CaseSearchMixin, DerivedAdmin):
    """Every saved summary of a case, as it was saved (append-only)."""

    created_at_local = time_column("created_at", "saved")
    list_display = ["case", "created_at_local", "writer", "model", "generation", "firm"]
    list_filter = ["writer", "firm"]
    list_select_related = ["case", "firm"]
    fieldsets = [
        (None, {"fields": ["case", "created_at_local", "version_text"]}),
        ("Writer", {"fields": ["writer", "model", "prompt_version", "generation", "tokens_in", "tokens_out"]}),
        ("Verification", {"fields": ["verification_report", "cited_records"]}),
    ]
    readonly_fields = [name for _, options in fieldsets for name in options["fields"]]

    @admin.display(description="text")
    def version_text(self, obj: SummaryVersion) -> str:
        return format_html('<div style="white-space: pre-wrap; max-width: 60em">{}</div>', obj.text)

    @admin.display(description="verification report")
    def verification_report(self, obj: SummaryVersion) -> str:
        return verification_table(obj.verification)

    @admin.display(description="records cited")
    def cited_records(self, obj: SummaryVersion) -> str:
        urls = get_adapter().record_admin_urls(case_id=obj.case_id, source_ids=obj.source_ids or [])
        return source_list(obj.source_ids or [], urls=urls)


@admin.register(AICall)
class AICallAdmin(DerivedAdmin):
    created_at_local = time_column("created_at", "at")
    # What fits a 1400 px screen; model, request format and errors are on the change page.
    list_display = ["created_at_local", "purpose", "outcome", "case", "tokens", "latency_ms", "firm"]
    list_filter = ["purpose", "outcome", "writer", "request_mode", "tokens_estimated", "firm"]
    list_select_related = ["case", "firm"]
    date_hierarchy = "created_at"
    fields = ["created_at_local", "firm", "case", "purpose", "outcome", "writer", "model", "request_mode", "tokens",
              "latency_ms", "error", "server_error", "report_table", "report_raw"]  # fmt: skip
    readonly_fields = fields
    operator_fields = ("report_raw",)

    @admin.display(description="tokens in / out")
    def tokens(self, obj: AICall) -> str:
        return f"{obj.tokens_in} / {obj.tokens_out}" + (" (estimated)" if obj.tokens_estimated else "")

    @admin.display(description="verification counts")
    def report_table(self, obj: AICall) -> str:
        return fact_table(obj.report or {}, labels=ATTEMPT_WORDS)

    @admin.display(description="verification counts, as stored")
    def report_raw(self, obj: AICall) -> str:
        return operator_details(obj.report)


@admin.register(RefreshRun)
class RefreshRunAdmin(DerivedAdmin):
    started_at_local = time_column("started_at", "started")
    finished_at_local = time_column("finished_at", "finished")
    lease_until_local = time_column("lease_until", "lease until")
    # Claimed, skipped, embedded and the finish are on the change page.
    list_display = ["started_at_local", "trigger_label", "status", "rewritten", "failed", "tokens_used", "firm"]
    list_filter = ["status", worded_filter("trigger", "started by", trigger_words), "firm"]
    list_select_related = ["firm"]
    date_hierarchy = "started_at"
    fields = ["firm", "trigger_label", "status", "started_at_local", "finished_at_local", "claimed", "rewritten",
              "failed", "skipped", "embedded", "tokens_used", "error", "lease_until_local"]  # fmt: skip
    readonly_fields = fields

    @admin.display(description="started by", ordering="trigger")
    def trigger_label(self, obj: RefreshRun) -> str:
        return trigger_words(obj.trigger)


@admin.register(NoteRefusal)
class NoteRefusalAdmin(DerivedAdmin):
    """Notes the write-back guard refused: who, where, when, which kinds of fact and from which cases.
    The note itself is not kept (it carries the other case's facts)."""

    created_at_local = time_column("created_at", "at")
    list_display = ["created_at_local", "case", "filer", "kind_list", "source_cases", "matches", "firm"]
    list_filter = ["firm"]
    list_select_related = ["case", "filer", "firm"]
    date_hierarchy = "created_at"
    fields = ["created_at_local", "firm", "case", "filer", "kind_list", "source_cases", "matches"]
    readonly_fields = fields

    def get_changelist_instance(self, request: HttpRequest) -> Any:
        # The other cases' names for the page's rows in one query, not one per row.
        changelist = super().get_changelist_instance(request)
        rows = list(changelist.result_list)
        names = case_labels({c for row in rows for c in row.source_case_ids}, firm_ids={row.firm_id for row in rows})
        for row in rows:
            row._gm_case_names = names
        return changelist

    @admin.display(description="kinds of fact")
    def kind_list(self, obj: NoteRefusal) -> str:
        return ", ".join(kind.replace("_", " ") for kind in obj.kinds) or "—"

    @admin.display(description="from the cases")
    def source_cases(self, obj: NoteRefusal) -> str:
        names = getattr(obj, "_gm_case_names", None)
        if names is None:
            names = case_labels(obj.source_case_ids, firm_ids=[obj.firm_id])
        return "; ".join(names.get(c, "[deleted case]") for c in obj.source_case_ids) or "—"
