"""The served ledger in admin (issue 31, item 3): firm-scoped, read-only, with today's chain head.

A firm admin sees their firm's rows only (FirmScopedAdmin), and asks "what did
the memory show user U about case X between T1 and T2" with the form above the
list (`viewer`, `case`, `since`, `until`: `served_ledger.served_rows`).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from graph_memory.admin.scoping import DerivedAdmin, admin_firm_id
from graph_memory.ledger.served_ledger import narrowed, parse_moment
from graph_memory.models import ServedChain, ServedRow

_QUESTION = ("viewer", "case", "since", "until")


@admin.register(ServedRow)
class ServedRowAdmin(DerivedAdmin):
    firm_field = "firm_id"
    ledger_name = None  # the ledger itself shows no memory content: no row per look at it
    list_display = ["at", "viewer_id", "endpoint", "status", "case_list", "seq", "short_fingerprint"]
    list_filter = ["status", "endpoint"]
    list_per_page = 100
    show_full_result_count = False  # a count of every row of the firm on each page: not worth its cost
    readonly_fields = [f.name for f in ServedRow._meta.fields]

    @admin.display(description="cases")
    def case_list(self, row: ServedRow) -> str:
        return ", ".join(str(c) for c in row.case_ids) or "—"

    @admin.display(description="query fingerprint")
    def short_fingerprint(self, row: ServedRow) -> str:
        return row.query_fingerprint[:16]

    def get_list_filter(self, request: HttpRequest) -> Any:
        return self.list_filter  # no firm filter: the firm is the admin's own

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        # The question's fields are not model lookups: taken out of GET before the changelist reads it.
        question = {k: request.GET[k] for k in _QUESTION if request.GET.get(k)}
        request.GET = request.GET.copy()
        for key in _QUESTION:
            request.GET.pop(key, None)
        request.ledger_question = question
        chains = ServedChain.objects.order_by("firm_id")
        firm_id = admin_firm_id(request.user)
        if not request.user.is_superuser:
            chains = chains.filter(firm_id=firm_id) if firm_id is not None else chains.none()
        context = {**(extra_context or {}), "ledger_heads": list(chains), "ledger_question": question}
        return super().changelist_view(request, context)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        rows = super().get_queryset(request)
        question = getattr(request, "ledger_question", {})
        try:
            since = parse_moment(question["since"]) if "since" in question else None
            until = parse_moment(question["until"]) if "until" in question else None
            viewer = int(question["viewer"]) if "viewer" in question else None
            case = int(question["case"]) if "case" in question else None
        except ValueError:  # parse_moment's or int's: the form's own mistake, said on the page
            messages.error(request, "Give user and case as ids, and times as ISO dates (2026-03-03T14:00Z).")
            return rows.none()
        return narrowed(rows, viewer_id=viewer, case_id=case, since=since, until=until)
