"""The lint pass in Django admin: runs and findings, read-only, scoped to the admin's firm.

Findings are never edited by hand; the next lint run replaces them. The
actions enqueue the existing mechanical fixes (mark stale for the nightly
rewrite, rebuild the firm's map, re-embed a summary); none writes a summary
or a host record here. Party-hygiene findings pair a firm's clients with its
counterparties: like every page here they are for that firm's admins only.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from graph_memory import services, tasks
from graph_memory.admin.scoping import DerivedAdmin
from graph_memory.lint import CHECKS, last_lint_run
from graph_memory.models import LintFinding, LintRun


@admin.register(LintRun)
class LintRunAdmin(DerivedAdmin):
    list_display = ["started_at", "firm", "trigger", "status", "counts", "findings_link", "finished_at"]
    list_filter = ["status", "trigger", "firm"]
    list_select_related = ["firm"]

    @admin.display(description="findings")
    def findings_link(self, obj: LintRun) -> str:
        url = reverse("admin:graph_memory_lintfinding_changelist")
        return format_html('<a href="{}">{}</a>', url, sum((obj.counts or {}).values()))


@admin.register(LintFinding)
class LintFindingAdmin(DerivedAdmin):
    list_display = ["severity", "kind", "code", "case", "message", "firm"]
    list_filter = ["kind", "severity", "code", "firm"]
    list_select_related = ["case", "firm"]
    search_fields = ["message"]
    readonly_fields = ["run", "firm", "case", "kind", "code", "severity", "message", "records"]
    actions = ["mark_stale", "rebuild_graph", "re_embed"]

    @admin.action(description="Fix: mark the cases stale (rewritten by the next nightly run)")
    def mark_stale(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        case_ids = sorted(set(queryset.exclude(case__isnull=True).values_list("case_id", flat=True)))
        services.mark_stale(case_ids=case_ids)
        self.message_user(request, f"Marked {len(case_ids)} case(s) stale.", messages.SUCCESS)

    @admin.action(description="Fix: rebuild the connection map of the firm")
    def rebuild_graph(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        # The queryset is already scoped: a firm admin can only name their own firm.
        firm_ids = sorted(set(queryset.values_list("firm_id", flat=True)))
        for firm_id in firm_ids:
            transaction.on_commit(lambda firm_id=firm_id: tasks.graph_rebuild_firm_task.delay(firm_id))
        self.message_user(request, f"Enqueued a map rebuild of {len(firm_ids)} firm(s).", messages.SUCCESS)

    @admin.action(description="Fix: re-embed the summaries (search gaps)")
    def re_embed(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        gaps = queryset.filter(kind=LintFinding.Kind.SEARCH_GAP).exclude(case__isnull=True)
        case_ids = sorted(set(gaps.values_list("case_id", flat=True)))
        for case_id in case_ids:
            transaction.on_commit(lambda case_id=case_id: tasks.embed_case_summary_task.delay(case_id))
        self.message_user(request, f"Enqueued {len(case_ids)} embedding(s).", messages.SUCCESS)


def lint_health(*, firm_id: int, firm_filter: bool) -> dict[str, Any] | None:
    """The health page's lint section: the last run's counts by kind, each with its findings' link (one query)."""
    run = last_lint_run(firm_id=firm_id)
    if run is None:
        return None
    base = reverse("admin:graph_memory_lintfinding_changelist")
    scope = f"&firm__id__exact={firm_id}" if firm_filter else ""
    kinds = [
        (str(kind), LintFinding.Kind(kind).label, (run.counts or {}).get(str(kind), 0), f"{base}?kind={kind}{scope}")
        for kind, _ in CHECKS
    ]
    return {"run": run, "kinds": kinds}
