"""The practice records in Django admin, scoped to the admin's firm.

Firm admins may view, add, change and delete their own firm's records; every
choice list and autocomplete offers only their firm's rows.
"""

from __future__ import annotations

from django.contrib import admin

from graph_memory.admin_scoping import FirmScopedAdmin, FirmScopedInline
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


class CaseCounterpartyInline(PracticeInline):
    model = CaseCounterparty
    autocomplete_fields = ["counterparty"]


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
    list_select_related = ["case"]
    autocomplete_fields = ["case"]
    search_fields = ["key", "case__key", "case__title"]


@admin.register(Document)
class DocumentAdmin(CaseRecordAdmin):
    list_display = ["key", "title", "case", "status", "created"]
    list_filter = ["status", "case"]
    search_fields = [*CaseRecordAdmin.search_fields, "title"]
    # Extracted text is the host's; a comma-separated array widget would
    # split pages at every comma, so it is shown, not edited.
    readonly_fields = ["pages"]


@admin.register(Draft)
class DraftAdmin(CaseRecordAdmin):
    list_display = ["key", "title", "case", "created"]
    list_filter = ["case"]
    search_fields = [*CaseRecordAdmin.search_fields, "title"]


@admin.register(Deadline)
class DeadlineAdmin(CaseRecordAdmin):
    list_display = ["key", "title", "case", "due", "done"]
    list_filter = ["done", "case"]
    search_fields = [*CaseRecordAdmin.search_fields, "title"]


@admin.register(Invoice)
class InvoiceAdmin(CaseRecordAdmin):
    list_display = ["number", "case", "issued", "amount", "currency", "status"]
    list_filter = ["status", "currency", "case"]
    search_fields = [*CaseRecordAdmin.search_fields, "number"]


@admin.register(Note)
class NoteAdmin(CaseRecordAdmin):
    list_display = ["key", "case", "author", "created"]
    list_filter = ["case"]
    list_select_related = ["case", "author"]
    autocomplete_fields = ["case", "author"]
