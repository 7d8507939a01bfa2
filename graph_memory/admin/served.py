"""The served ledger in admin (issue 31, item 3): firm-scoped, read-only, with today's chain head.

A firm admin sees their firm's rows only (FirmScopedAdmin), and asks "what did
the memory show user U about case X between T1 and T2" with the form above the
list (`viewer`: a username or id, `case`: a reference or id, `since`, `until`:
`served_ledger.served_rows`). The rows keep ids; the page names them.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.http import HttpRequest

from graph_memory.adapter import firm_model, get_adapter
from graph_memory.admin.display import time_column, worded_filter
from graph_memory.admin.scoping import DerivedAdmin, admin_firm_id
from graph_memory.ledger import report
from graph_memory.ledger.served_ledger import narrowed, parse_moment
from graph_memory.models import ServedChain, ServedRow
from graph_memory.plumbing.display import endpoint_words

_QUESTION = ("viewer", "case", "since", "until")


@admin.register(ServedRow)
class ServedRowAdmin(DerivedAdmin):
    firm_field = "firm_id"
    ledger_name = None  # the ledger itself shows no memory content: no row per look at it
    at_local = time_column("at", "at")
    list_display = ["at_local", "viewer_label", "endpoint_label", "status", "case_list", "seq", "short_fingerprint"]
    list_filter = ["status", worded_filter("endpoint", "through", endpoint_words)]
    list_per_page = 100
    show_full_result_count = False  # a count of every row of the firm on each page: not worth its cost
    fields = ["at_local", "viewer_label", "endpoint_label", "status", "case_list", "seq", "query_fingerprint",
              "prev_hash", "row_hash"]  # fmt: skip
    readonly_fields = fields

    def get_changelist_instance(self, request: HttpRequest) -> Any:
        # The users' and cases' names for the page's rows in a few queries, not a few per row.
        changelist = super().get_changelist_instance(request)
        _name(list(changelist.result_list))
        return changelist

    def get_object(self, request: HttpRequest, object_id: str, from_field: str | None = None) -> Any:
        row = super().get_object(request, object_id, from_field)
        _name([row])
        return row

    @admin.display(description="who", ordering="viewer_id")
    def viewer_label(self, row: ServedRow) -> str:
        return _labels(row).user(row.viewer_id) or "—"

    @admin.display(description="through", ordering="endpoint")
    def endpoint_label(self, row: ServedRow) -> str:
        return endpoint_words(row.endpoint)

    @admin.display(description="cases")
    def case_list(self, row: ServedRow) -> str:
        return "; ".join(_labels(row).case(c) for c in row.case_ids) or "—"

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
        chains = list(chains)
        firms = firm_model()._default_manager.in_bulk([chain.firm_id for chain in chains])
        heads = [(str(firms.get(chain.firm_id, "[deleted firm]")), chain) for chain in chains]
        context = {**(extra_context or {}), "ledger_heads": heads, "ledger_question": question}
        return super().changelist_view(request, context)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        rows = super().get_queryset(request)
        question = getattr(request, "ledger_question", {})
        try:
            since = parse_moment(question["since"]) if "since" in question else None
            until = parse_moment(question["until"]) if "until" in question else None
            viewer = _user_id(question["viewer"]) if "viewer" in question else None
            case = _case_id(question["case"], firm_id=admin_firm_id(request.user)) if "case" in question else None
        except ValueError:  # parse_moment's or a name that names nobody: the form's own mistake, said on the page
            messages.error(
                request, "Give the user by username, the case by its reference, and times as dates (2026-03-03)."
            )
            return rows.none()
        return narrowed(rows, viewer_id=viewer, case_id=case, since=since, until=until)


def _user_id(value: str) -> int:
    # Any user's id narrows the firm's rows only: another firm's user finds no row, like no user at all.
    User = get_user_model()
    found = User._default_manager.filter(**{User.USERNAME_FIELD: value}).values_list("pk", flat=True).first()
    if found is None and not value.isdigit():
        raise ValueError(value)
    return found if found is not None else int(value)


def _case_id(value: str, *, firm_id: int | None) -> int:
    found = get_adapter().case_id_by_reference(firm_id=firm_id, reference=value) if firm_id is not None else None
    if found is None and not value.isdigit():
        raise ValueError(value)
    return found if found is not None else int(value)


def _name(rows: list[ServedRow]) -> None:
    by_firm: dict[int, list[ServedRow]] = {}
    for row in rows:
        by_firm.setdefault(row.firm_id, []).append(row)
    for firm_id, firm_rows in by_firm.items():
        names = report.labels(
            firm_id=firm_id, case_ids={c for r in firm_rows for c in r.case_ids},
            user_ids={r.viewer_id for r in firm_rows}, group_ids=[],
        )  # fmt: skip
        for row in firm_rows:
            row._gm_labels = names


def _labels(row: ServedRow) -> report.Labels:
    return getattr(row, "_gm_labels", None) or report.Labels()
