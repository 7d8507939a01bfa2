"""The practice records in Django admin, scoped to the admin's firm.

Firm admins may view, add, change and delete their own firm's records; every
choice list and autocomplete offers only their firm's rows.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from graph_memory.admin.display import fact_table, time_column
from graph_memory.admin.scoping import FirmScopedAdmin, FirmScopedInline
from practice.models import (
    Case,
    CaseCounterparty,
    CaseTeamMember,
    Client,
    Counterparty,
    Deadline,
    Document,
    Draft,
    Invoice,
    Note,
)


class PracticeAdmin(FirmScopedAdmin):
    firm_admin_can_add = True
    firm_admin_can_change = True
    firm_admin_can_delete = True


class PracticeInline(FirmScopedInline):
    firm_admin_can_add = True
    firm_admin_can_change = True
    firm_admin_can_delete = True


@admin.register(Client)
class ClientAdmin(PracticeAdmin):
    list_display = ["name", "key", "firm"]
    list_filter = ["firm"]
    search_fields = ["name", "key"]


@admin.register(Counterparty)
class CounterpartyAdmin(PracticeAdmin):
    list_display = ["name", "key", "firm"]
    list_filter = ["firm"]
    search_fields = ["name", "key"]


class CaseTeamMemberInline(PracticeInline):
    model = CaseTeamMember
    autocomplete_fields = ["user"]
    verbose_name = "team member"
    verbose_name_plural = "team"

    def get_queryset(self, request: HttpRequest) -> QuerySet[CaseTeamMember]:
        return super().get_queryset(request).select_related("case", "user")  # each row is named by both


class CaseCounterpartyInline(PracticeInline):
    model = CaseCounterparty
    autocomplete_fields = ["counterparty"]
    verbose_name = "counterparty"
    verbose_name_plural = "counterparties"

    def get_queryset(self, request: HttpRequest) -> QuerySet[CaseCounterparty]:
        return super().get_queryset(request).select_related("case", "counterparty")


@admin.register(Case)
class CaseAdmin(PracticeAdmin):
    list_display = ["key", "title", "status", "client", "owner", "opened", "firm"]
    list_filter = ["status", "firm", "client", "owner"]
    list_select_related = ["client", "owner", "firm"]
    search_fields = ["key", "title", "client__name"]
    autocomplete_fields = ["client", "owner"]
    date_hierarchy = "opened"
    inlines = [CaseTeamMemberInline, CaseCounterpartyInline]


class CaseRecordAdmin(PracticeAdmin):
    created_local = time_column("created", "created")
    list_select_related = ["case"]
    autocomplete_fields = ["case"]
    search_fields = ["key", "case__key", "case__title"]


@admin.register(Document)
class DocumentAdmin(CaseRecordAdmin):
    list_display = ["title", "case", "status", "created_local"]
    list_filter = ["status", "case"]
    search_fields = [*CaseRecordAdmin.search_fields, "title"]
    # Extracted text is the host's; a comma-separated array widget would split pages at every comma,
    # so it is shown, not edited: one page at a time (`?page=N`), a 390-page document being 700 KB of text.
    readonly_fields = ["page_view"]
    exclude = ["pages"]

    def get_object(self, request: HttpRequest, object_id: str, from_field: str | None = None) -> Any:
        document = super().get_object(request, object_id, from_field)
        raw = request.GET.get("page", "1")
        document._shown_page = int(raw) if raw.isdigit() else 1
        return document

    @admin.display(description="pages")
    def page_view(self, document: Document) -> str:
        pages = document.pages or []
        if not pages:
            return "No text extracted yet."
        shown = min(max(getattr(document, "_shown_page", 1), 1), len(pages))
        steps = [("first", 1), ("previous", shown - 1), ("next", shown + 1), ("last", len(pages))]
        links = format_html_join(
            " · ", '<a href="?page={}">{}</a>', ((n, word) for word, n in steps if 1 <= n <= len(pages) and n != shown)
        )
        return format_html(
            '<p class="gm-page-nav">Page <strong>{}</strong> of {} {}</p>'
            '<div class="gm-page" style="white-space: pre-wrap; max-width: 60em">{}</div>',
            shown, len(pages), format_html("({})", links) if links else "", pages[shown - 1],
        )  # fmt: skip


@admin.register(Draft)
class DraftAdmin(CaseRecordAdmin):
    list_display = ["title", "case", "created_local"]
    list_filter = ["case"]
    search_fields = [*CaseRecordAdmin.search_fields, "title"]


@admin.register(Deadline)
class DeadlineAdmin(CaseRecordAdmin):
    list_display = ["title", "case", "due", "done"]
    list_filter = ["done", "case"]
    search_fields = [*CaseRecordAdmin.search_fields, "title"]


@admin.register(Invoice)
class InvoiceAdmin(CaseRecordAdmin):
    list_display = ["number", "case", "issued", "amount", "currency", "status"]
    list_filter = ["status", "currency", "case"]
    search_fields = [*CaseRecordAdmin.search_fields, "number"]


@admin.register(Note)
class NoteAdmin(CaseRecordAdmin):
    list_display = ["key", "title", "case", "author", "created_local", "assistant_filed"]
    list_filter = ["case"]
    list_select_related = ["case", "author"]
    autocomplete_fields = ["case", "author"]

    @admin.display(boolean=True, description="assistant-filed")
    def assistant_filed(self, note: Note) -> bool:
        return note.assistant_filed

    exclude = ["origin"]

    @admin.display(description="filed from")
    def origin_table(self, note: Note) -> str:
        # The conversation and messages an assistant-filed note came from; nothing for notes people wrote.
        return fact_table(note.origin or {}) if note.origin else "written by a person"

    def get_readonly_fields(self, request: HttpRequest, obj: Note | None = None) -> list[str]:
        # An assistant-filed note is a raw source, kept as filed: a correction is a new note.
        fields = [*super().get_readonly_fields(request, obj), "origin_table"]
        if obj is not None and obj.assistant_filed:
            fields += [
                f.name for f in Note._meta.concrete_fields if f.name not in (*fields, "origin") and not f.primary_key
            ]
        return fields
