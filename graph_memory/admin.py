"""The memory layer in Django admin: derived rows, read-only, scoped to the admin's firm.

Nothing here edits derived data by hand (nodes, edges, summaries and logs are
rewritten by their services); the only writes are the actions on case
summaries, and each of them calls a service.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin, messages
from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet
from django.http import HttpRequest
from django.urls import path
from django.utils.html import format_html, format_html_join

from graph_memory import services
from graph_memory.adapter import get_adapter
from graph_memory.admin_health import health_view
from graph_memory.admin_scoping import FirmScopedAdmin
from graph_memory.models import AICall, CaseSummary, Edge, Node, RefreshRun, SummaryVersion
from graph_memory.summaries.service import SummaryFailed

# "Regenerate now" waits on one model call per case inside the request; more
# than a handful belongs to the nightly run (mark them stale instead).
REGENERATE_MAX = 10
HISTORY_MAX = 20


class DerivedAdmin(FirmScopedAdmin):
    """Derived rows: viewable by the firm's admins and operators, never edited by hand."""

    derived_data = True

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Node)
class NodeAdmin(DerivedAdmin):
    list_display = ["label", "kind", "ref_id", "firm"]
    list_filter = ["kind", "firm"]
    list_select_related = ["firm"]
    search_fields = ["label", "name_key"]


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


@admin.register(CaseSummary)
class CaseSummaryAdmin(DerivedAdmin):
    list_display = [
        "case",
        "stale",
        "generation",
        "writer",
        "model",
        "attempts",
        "written_at",
        "embedding_present",
        "firm",
    ]
    list_filter = ["stale", SummaryStateFilter, "writer", "firm"]
    list_select_related = ["case", "firm"]
    search_fields = [*(f"case__{name}" for name in get_adapter().case_admin_search_fields), "text"]
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
                    "written_at",
                    "written_generation",
                ]
            },
        ),
        ("Freshness", {"fields": ["stale", "stale_since", "generation"]}),
        ("Failures", {"fields": ["attempts", "last_error", "last_attempt_at", "next_attempt_after", "last_attempt"]}),
        ("Verification", {"fields": ["verification_report", "source_ids"]}),
        ("Search", {"fields": ["embedding_present", "embedding_model"]}),
        ("Version history", {"fields": ["version_history"]}),
    ]
    readonly_fields = [name for _, options in fieldsets for name in options["fields"]]

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
        if not obj.verification:
            return "—"
        return format_html("<pre>{}</pre>", json.dumps(obj.verification, indent=2, sort_keys=True, ensure_ascii=False))

    @admin.display(description="saved versions (newest first)")
    def version_history(self, obj: CaseSummary) -> str:
        versions = SummaryVersion.objects.filter(case_id=obj.case_id, firm_id=obj.firm_id).order_by(
            "-created_at", "-id"
        )[:HISTORY_MAX]
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} / {}</td>"
            "<td><details><summary>text</summary><div style='white-space: pre-wrap'>{}</div></details></td></tr>",
            (
                (
                    v.created_at.strftime("%Y-%m-%d %H:%M"),
                    v.writer,
                    v.model or "—",
                    v.generation,
                    v.tokens_in,
                    v.tokens_out,
                    v.text,
                )
                for v in versions
            ),
        )
        if not rows:
            return "No saved versions."
        return format_html(
            "<table><thead><tr><th>saved</th><th>writer</th><th>model</th><th>generation</th>"
            "<th>tokens in / out</th><th></th></tr></thead><tbody>{}</tbody></table>",
            rows,
        )

    @admin.action(description="Mark stale (rewritten by the next nightly run)")
    def mark_stale(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        case_ids = list(queryset.values_list("case_id", flat=True))
        services.mark_stale(case_ids=case_ids)
        self.message_user(request, f"Marked {len(case_ids)} case summaries stale.", messages.SUCCESS)

    @admin.action(description="Regenerate now")
    def regenerate_now(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        summaries = list(queryset.select_related("case").order_by("pk")[: REGENERATE_MAX + 1])
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
                self.message_user(
                    request, f"{summary.case}: not regenerated ({exc}). The previous summary is kept.", messages.ERROR
                )
            else:
                done += 1
        if done:
            self.message_user(request, f"Regenerated {done} case summaries.", messages.SUCCESS)

    @admin.action(description="Rebuild the connection map for the firm")
    def rebuild_graph(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        # The queryset is already scoped: a firm admin can only name their own firm.
        firm_ids = sorted(set(queryset.values_list("firm_id", flat=True)))
        for firm_id in firm_ids:
            services.graph_rebuild_firm(firm_id=firm_id)
        self.message_user(request, f"Rebuilt the connection map of {len(firm_ids)} firm(s).", messages.SUCCESS)


@admin.register(AICall)
class AICallAdmin(DerivedAdmin):
    list_display = [
        "created_at",
        "purpose",
        "outcome",
        "writer",
        "model",
        "case",
        "request_mode",
        "tokens_in",
        "tokens_out",
        "tokens_estimated",
        "latency_ms",
        "error",
        "server_error",
    ]
    list_filter = ["purpose", "outcome", "writer", "request_mode", "tokens_estimated", "firm"]
    list_select_related = ["case", "firm"]
    date_hierarchy = "created_at"


@admin.register(RefreshRun)
class RefreshRunAdmin(DerivedAdmin):
    list_display = [
        "started_at",
        "firm",
        "trigger",
        "status",
        "claimed",
        "rewritten",
        "failed",
        "skipped",
        "embedded",
        "tokens_used",
        "finished_at",
    ]
    list_filter = ["status", "trigger", "firm"]
    list_select_related = ["firm"]
    date_hierarchy = "started_at"
