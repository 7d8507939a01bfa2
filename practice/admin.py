"""The practice records in Django admin, scoped to the admin's firm.

Firm admins may view, add, change and delete their own firm's records; every
choice list and autocomplete offers only their firm's rows.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from graph_memory.admin.display import time_column
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
    # Extracted text is the host's; a comma-separated array widget would
    # split pages at every comma, so it is shown, not edited.
    readonly_fields = ["pages"]


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

    def get_readonly_fields(self, request: HttpRequest, obj: Note | None = None) -> list[str]:
        # An assistant-filed note is a raw source, kept as filed: a correction is a new note.
        fields = [*super().get_readonly_fields(request, obj), "origin"]
        if obj is not None and obj.assistant_filed:
            fields += [f.name for f in Note._meta.concrete_fields if f.name not in fields and not f.primary_key]
        return fields
