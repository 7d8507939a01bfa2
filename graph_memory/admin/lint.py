"""The lint pass in Django admin: runs and findings, read-only, scoped to the admin's firm.

Findings are never edited by hand; the next lint run replaces them. The
actions enqueue the existing mechanical fixes (mark stale for the nightly
rewrite, rebuild the firm's map, re-embed a summary), each on the findings it
fixes only, and each offered only where it applies; none writes a summary
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
from graph_memory.admin.display import (
    case_labels,
    counted,
    fact_value,
    operator_details,
    rows_table,
    time_column,
    trigger_words,
    worded_filter,
)
from graph_memory.admin.scoping import DerivedAdmin
from graph_memory.lint import CHECKS, counts_words, last_lint_run
from graph_memory.models import LintFinding, LintRun

Kind = LintFinding.Kind

# Each check's code, as a firm admin reads it (graph_memory/lint/).
CODE_WORDS = {
    "deadline_done": "deadline stated open is done",
    "deadline_changed": "deadline changed",
    "invoice_status": "invoice status changed",
    "invoice_changed": "invoice changed",
    "case_status": "case status changed",
    "case_changed": "case changed",
    "party_renamed": "party renamed",
    "party_removed": "party removed",
    "record_deleted": "cited record deleted",
    "record_changed": "cited record no longer says it",
    "backing_off": "waiting after failures",
    "failing": "rewrites failing",
    "over_budget": "nightly token budget spent first",
    "not_reached": "not reached by a nightly run",
    "no_summary": "never summarised",
    "many_dropped": "verification dropped much",
    "few_statements": "few statements for its records",
    "node_missing": "nodes missing from the map",
    "node_extra": "nodes standing for nothing",
    "orphan_node": "nodes with no edge",
    "node_relabelled": "node named differently",
    "edge_drift": "edges to add or remove",
    "same_name": "same name twice",
    "near_duplicate": "near-duplicate names",
    "client_and_counterparty": "client of one case, counterparty of another",
    "no_embedding": "no search vector",
    "old_model": "search vector of an old model",
    "note_crosses_wall": "note carries another case's facts",
    "statement": "statement addressed to an AI",
}
# A finding's record, in words (lint/*.py: `records`).
RECORD_WORDS = {"type": "what", "id": "record", "ref_id": "host record", "new_label": "the records call it",
                "change": "change", "source": "from", "target": "to", "statement": "statement"}  # fmt: skip

# Which findings each fix fixes; the rest are fixed in the records themselves.
FIXES = {
    "mark_stale": {Kind.CONTRADICTED, Kind.STALE, Kind.WEAK},
    "rebuild_graph": {Kind.MAP_DRIFT},
    "re_embed": {Kind.SEARCH_GAP},
}
FIX_WORDS = {
    "mark_stale": "mark the case stale (the nightly run rewrites it)",
    "rebuild_graph": "rebuild the connection map",
    "re_embed": "re-embed the summary",
}
RECORDS_FIX = "fix the records themselves (no mechanical fix)"


def code_words(code: str) -> str:
    return CODE_WORDS.get(code, code.replace("_", " "))


class CodeFilter(admin.SimpleListFilter):
    title = "check"
    parameter_name = "code"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        codes = model_admin.get_queryset(request).order_by("code").values_list("code", flat=True).distinct()
        return [(code, code_words(code)) for code in codes]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(code=self.value()) if self.value() else queryset


@admin.register(LintRun)
class LintRunAdmin(DerivedAdmin):
    started_at_local = time_column("started_at", "started")
    finished_at_local = time_column("finished_at", "finished")
    list_display = ["started_at_local", "firm", "trigger_label", "status", "found", "findings_link"]
    list_filter = ["status", worded_filter("trigger", "started by", trigger_words), "firm"]
    list_select_related = ["firm"]
    fields = ["firm", "trigger_label", "status", "started_at_local", "finished_at_local", "counts_table", "error",
              "counts_raw"]  # fmt: skip
    readonly_fields = fields
    operator_fields = ("counts_raw",)

    @admin.display(description="started by", ordering="trigger")
    def trigger_label(self, obj: LintRun) -> str:
        return trigger_words(obj.trigger)

    @admin.display(description="found")
    def found(self, obj: LintRun) -> str:
        return counts_words(obj.counts or {}) if obj.status == LintRun.Status.DONE else "—"

    @admin.display(description="findings by kind")
    def counts_table(self, obj: LintRun) -> str:
        counts = obj.counts or {}
        return fact_value({Kind(kind).label: counts.get(str(kind), 0) for kind, _ in CHECKS} if counts else None)

    @admin.display(description="findings by kind, as stored")
    def counts_raw(self, obj: LintRun) -> str:
        return operator_details(obj.counts)

    @admin.display(description="findings")
    def findings_link(self, obj: LintRun) -> str:
        url = reverse("admin:graph_memory_lintfinding_changelist")
        total = sum((obj.counts or {}).values())
        return format_html('<a href="{}">{}</a>', url, counted(total, "finding", "findings"))


@admin.register(LintFinding)
class LintFindingAdmin(DerivedAdmin):
    list_display = ["severity", "kind", "code_label", "case", "message", "fix", "firm"]
    list_filter = ["kind", "severity", CodeFilter, "firm"]
    list_select_related = ["case", "firm"]
    search_fields = ["message"]
    fields = ["run", "firm", "case", "kind", "code_label", "severity", "message", "fix", "records_table",
              "records_raw"]  # fmt: skip
    readonly_fields = fields
    operator_fields = ("records_raw",)
    actions = list(FIXES)

    @admin.display(description="check", ordering="code")
    def code_label(self, obj: LintFinding) -> str:
        return code_words(obj.code)

    @admin.display(description="fix")
    def fix(self, obj: LintFinding) -> str:
        return next((FIX_WORDS[name] for name, kinds in FIXES.items() if obj.kind in kinds), RECORDS_FIX)

    @admin.display(description="records involved")
    def records_table(self, obj: LintFinding) -> str:
        records = [dict(r) for r in obj.records or [] if isinstance(r, dict)]
        names = case_labels({c for r in records for c in r.get("cases") or []}, firm_ids=[obj.firm_id])
        for record in records:
            if "cases" in record:  # the cases a party is on, by name
                record["cases"] = [names.get(c, "[deleted case]") for c in record.pop("cases") or []]
            if record.get("type") == "node":  # a map node is named by its kind and label, not its ids
                for key in ("type", "id", "ref_id"):
                    record.pop(key, None)
            if record.get("type") == "case":
                record["id"] = record.pop("reference", None) or names.get(record["id"], "a case")
        return rows_table(records, labels=RECORD_WORDS)

    @admin.display(description="records involved, as stored")
    def records_raw(self, obj: LintFinding) -> str:
        return operator_details(obj.records)

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        # Filtered to one kind, the list offers only the fixes for that kind (none for a kind fixed in the records).
        actions = super().get_actions(request)
        kind = request.GET.get("kind__exact") or request.GET.get("kind")
        if kind:
            actions = {name: action for name, action in actions.items() if kind in FIXES.get(name, {kind})}
        return actions

    def _fixable(self, request: HttpRequest, queryset: QuerySet[Any], fix: str) -> QuerySet[Any]:
        """The selected findings this fix fixes; the others are said to be left."""
        fixable = queryset.filter(kind__in=FIXES[fix])
        left = queryset.count() - fixable.count()
        if left:
            self.message_user(
                request,
                f"{counted(left, 'selected finding is', 'selected findings are')} not fixed by this: "
                f"{FIX_WORDS[fix]} fixes {', '.join(sorted(Kind(k).label.lower() for k in FIXES[fix]))} only.",
                messages.WARNING,
            )
        return fixable

    @admin.action(description="Fix: mark the cases stale (rewritten by the next nightly run)")
    def mark_stale(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        fixable = self._fixable(request, queryset, "mark_stale")
        case_ids = sorted(set(fixable.exclude(case__isnull=True).values_list("case_id", flat=True)))
        if not case_ids:
            return
        services.mark_stale(case_ids=case_ids)
        self.message_user(request, f"Marked {counted(len(case_ids), 'case', 'cases')} stale.", messages.SUCCESS)

    @admin.action(description="Fix: rebuild the connection map of the firm")
    def rebuild_graph(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        # The queryset is already scoped: a firm admin can only name their own firm.
        fixable = self._fixable(request, queryset, "rebuild_graph")
        firm_ids = sorted(set(fixable.values_list("firm_id", flat=True)))
        for firm_id in firm_ids:
            transaction.on_commit(lambda firm_id=firm_id: tasks.graph_rebuild_firm_task.delay(firm_id))
        if firm_ids:
            self.message_user(
                request, f"Enqueued a rebuild of the map of {counted(len(firm_ids), 'firm', 'firms')}.", messages.SUCCESS
            )

    @admin.action(description="Fix: re-embed the summaries (search gaps)")
    def re_embed(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        fixable = self._fixable(request, queryset, "re_embed")
        case_ids = sorted(set(fixable.exclude(case__isnull=True).values_list("case_id", flat=True)))
        for case_id in case_ids:
            transaction.on_commit(lambda case_id=case_id: tasks.embed_case_summary_task.delay(case_id))
        if case_ids:
            self.message_user(
                request, f"Enqueued the embedding of {counted(len(case_ids), 'summary', 'summaries')}.", messages.SUCCESS
            )


def lint_health(*, firm_id: int, firm_filter: bool) -> dict[str, Any] | None:
    """The health page's lint section: the last run's counts by kind, each with its findings' link (one query)."""
    run = last_lint_run(firm_id=firm_id)
    if run is None:
        return None
    base = reverse("admin:graph_memory_lintfinding_changelist")
    scope = f"&firm__id__exact={firm_id}" if firm_filter else ""
    kinds = [
        (str(kind), Kind(kind).label, (run.counts or {}).get(str(kind), 0), f"{base}?kind={kind}{scope}")
        for kind, _ in CHECKS
    ]
    return {"run": run, "kinds": kinds}
