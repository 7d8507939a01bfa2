"""Long documents in Django admin: each document's routing index with its term report, and the query log.

Read-only and scoped to the admin's firm, like every derived row. The one
action flags indexes for the nightly rebuild; nothing here builds an index
or shows a question's text (the log keeps none).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from graph_memory.admin.display import counted, fact_value, log_admin_action, time_column, worded_filter
from graph_memory.admin.scoping import DerivedAdmin
from graph_memory.documents.routing import mark_documents_stale
from graph_memory.models import DocumentIndex, DocumentQuery

REASONS = {
    "in_other_section": "on other pages of the document only (cross-contaminated)",
    "not_in_document": "nowhere in the document",
    "duplicate": "proposed twice",
    "too_long": "longer than a term may be",
    "over_limit": "past the section's term limit",
    "empty": "empty",
}

ROUTERS = {
    "model": "the model",
    "offline": "offline (the index's terms)",
    "offline after model error": "offline, after a model error",
}


@admin.register(DocumentIndex)
class DocumentIndexAdmin(DerivedAdmin):
    built_at_local = time_column("built_at", "built")
    # Six columns fit 1400 px; builder, pages and the report are on the change page.
    list_display = ["document_key", "title", "case", "stale", "terms", "built_at_local", "firm"]
    list_filter = ["builder", "stale", "firm"]
    list_select_related = ["case", "firm"]
    search_fields = ["document_key", "title"]
    stale_since_local = time_column("stale_since", "stale since")
    next_attempt_after_local = time_column("next_attempt_after", "next attempt after")
    fields = ["case", "document_key", "title", "page_count", "builder", "model", "built_at_local", "stale",
              "stale_since_local", "generation", "attempts", "last_error", "next_attempt_after_local", "term_report",
              "section_list"]  # fmt: skip
    readonly_fields = fields
    actions = ["flag_for_rebuild"]

    @admin.display(description="terms kept / proposed")
    def terms(self, obj: DocumentIndex) -> str:
        report = obj.report or {}
        return f"{report.get('kept', 0)} / {report.get('proposed', 0)}" if report else "—"

    @admin.display(description="term report")
    def term_report(self, obj: DocumentIndex) -> Any:
        report = obj.report or {}
        if not report:
            return "Not built yet."
        reasons = format_html_join("", "<li>{}: {}</li>", (
            (REASONS.get(reason, reason), count) for reason, count in (report.get("dropped_by_reason") or {}).items()))  # fmt: skip
        examples = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td></tr>", (
            (e.get("section", ""), e.get("term", ""), REASONS.get(e.get("reason", ""), e.get("reason", "")))
            for e in report.get("examples") or []))  # fmt: skip
        return format_html(
            "<p>{} proposed, {} kept, {} dropped.</p><ul>{}</ul><table><thead><tr><th>section</th><th>dropped term</th>"
            "<th>why</th></tr></thead><tbody>{}</tbody></table>",
            report.get("proposed", 0), report.get("kept", 0), report.get("dropped", 0), reasons, examples,
        )  # fmt: skip

    @admin.display(description="sections")
    def section_list(self, obj: DocumentIndex) -> Any:
        rows = ((s.get("title"), f"{s.get('first_page')}\u2013{s.get('last_page')}",
                 ", ".join(s.get("terms") or []), s.get("covers", "")) for s in obj.sections or [])  # fmt: skip
        body = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", rows)
        return format_html(
            "<table><thead><tr><th>title</th><th>pages</th><th>verified terms</th><th>covers</th></tr>"
            "</thead><tbody>{}</tbody></table>", body,
        )  # fmt: skip

    @admin.action(description="Flag for rebuild (the nightly run rebuilds them)")
    def flag_for_rebuild(self, request: HttpRequest, queryset: QuerySet[DocumentIndex]) -> None:
        rows = list(queryset.values_list("case_id", "document_key"))
        mark_documents_stale(documents=rows)
        log_admin_action(request, queryset, "Flagged the document index for rebuild.")
        flagged = counted(len(rows), "document index", "document indexes")
        self.message_user(request, f"Flagged {flagged} for the nightly rebuild.", messages.SUCCESS)


@admin.register(DocumentQuery)
class DocumentQueryAdmin(DerivedAdmin):
    created_at_local = time_column("created_at", "at")
    # Six columns; router, tokens and the error are on the change page.
    list_display = ["created_at_local", "case", "viewer", "outcome", "quotes", "latency_ms", "firm"]
    list_filter = ["outcome", worded_filter("router", "routed by", lambda r: ROUTERS.get(r, r)), "streamed", "firm"]
    list_select_related = ["case", "viewer", "firm"]
    date_hierarchy = "created_at"
    fields = ["created_at_local", "case", "viewer", "outcome", "router_label", "document_list", "section_list",
              "quotes", "streamed", "tokens", "latency_ms", "error"]  # fmt: skip
    readonly_fields = fields

    @admin.display(description="routed by", ordering="router")
    def router_label(self, obj: DocumentQuery) -> str:
        return ROUTERS.get(obj.router, obj.router or "—")

    @admin.display(description="documents")
    def document_list(self, obj: DocumentQuery) -> str:
        return fact_value(obj.documents)

    @admin.display(description="sections routed to")
    def section_list(self, obj: DocumentQuery) -> str:
        # A section id ("<document>#<section>") named by its index: the section's title and pages.
        keys = {s.partition("#")[0] for s in obj.sections or []}
        named = {
            f"{index.document_key}#{s.get('id')}": f"{index.title or index.document_key}: {s.get('title')} "
            f"(pages {s.get('first_page')}\u2013{s.get('last_page')})"
            for index in DocumentIndex.objects.filter(case_id=obj.case_id, document_key__in=keys)
            for s in index.sections or []
        }
        return fact_value([named.get(s, s) for s in obj.sections or []])

    @admin.display(description="tokens in / out")
    def tokens(self, obj: DocumentQuery) -> str:
        return f"{obj.tokens_in} / {obj.tokens_out}"

    @admin.display(description="quotes served / rejected")
    def quotes(self, obj: DocumentQuery) -> str:
        return f"{obj.quotes_served} / {obj.quotes_rejected}"
