"""The seam between the memory layer and the host's records.

This is the only module in `graph_memory` that imports the host product
(`practice` in this repository). Everything else asks this module for the
host's models and records, so a different host replaces one file.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.contrib.auth import get_user_model

from practice.models import (
    Case,
    CaseCounterparty,
    CaseGroupObjectPermission,
    CaseTeamMember,
    CaseUserObjectPermission,
    Client,
    Counterparty,
    Deadline,
    Document,
    Draft,
    Invoice,
    Note,
)

__all__ = [
    "Case",
    "CaseCounterparty",
    "CaseGroupObjectPermission",
    "CaseTeamMember",
    "CaseUserObjectPermission",
    "Client",
    "Counterparty",
    "Deadline",
    "Document",
    "Draft",
    "Invoice",
    "Note",
]

VIEW_CASE_CODENAME = "view_case"

# Host fields Django admin's search matches a case by (graph_memory's admin
# asks here rather than naming host fields itself).
CASE_ADMIN_SEARCH_FIELDS = ("key", "title")


# --- Connection map inputs (read by graph.py) ---------------------------------
# The map is derived from case headers (owner, client), case teams and case
# counterparties. Each helper below is one query, scoped to a firm or a case,
# returning plain tuples (no model instances: a firm may have 60,000 links).


# Case fields the map reads (a save limited to other fields leaves it alone).
GRAPH_CASE_FIELDS = frozenset({"key", "title", "owner", "owner_id", "client", "client_id"})


def lawyer_model() -> type[Any]:
    """The model whose rows are lawyer nodes (the host's user model)."""
    return get_user_model()


def _lawyer_label(name: str, username: str) -> str:
    return name or username  # as User.__str__


def _scope(prefix: str, *, firm_id: int | None, case_id: int | None) -> dict[str, int]:
    if (firm_id is None) == (case_id is None):
        raise ValueError("give exactly one of firm_id and case_id")
    return {"firm_id": firm_id} if firm_id is not None else {f"{prefix}id": case_id}  # type: ignore[dict-item]


def graph_case_rows(*, firm_id: int | None = None, case_id: int | None = None) -> Iterator[tuple[Any, ...]]:
    """(case id, firm id, case label, owner id, owner label, client id, client label) per case."""
    rows = Case.objects.filter(**_scope("", firm_id=firm_id, case_id=case_id)).values_list(
        "id", "firm_id", "key", "title", "owner_id", "owner__name", "owner__username", "client_id", "client__name"
    )
    for pk, firm, key, title, owner, owner_name, owner_username, client, client_name in rows.order_by().iterator(5000):
        yield pk, firm, f"{key} {title}", owner, _lawyer_label(owner_name, owner_username), client, client_name


def graph_team_rows(*, firm_id: int | None = None, case_id: int | None = None) -> Iterator[tuple[Any, ...]]:
    """(case id, user id, user label) per team membership."""
    rows = CaseTeamMember.objects.filter(**_scope("case_", firm_id=firm_id, case_id=case_id)).values_list(
        "case_id", "user_id", "user__name", "user__username"
    )
    for case, user, name, username in rows.order_by().iterator(5000):
        yield case, user, _lawyer_label(name, username)


def graph_counterparty_rows(*, firm_id: int | None = None, case_id: int | None = None) -> Iterator[tuple[Any, ...]]:
    """(case id, counterparty id, counterparty name) per case counterparty."""
    rows = CaseCounterparty.objects.filter(**_scope("case_", firm_id=firm_id, case_id=case_id)).values_list(
        "case_id", "counterparty_id", "counterparty__name"
    )
    return rows.order_by().iterator(5000)


def graph_label(*, kind: str, ref_id: int) -> str | None:
    """The current label of the host record behind a node of this kind (None if it is gone)."""
    if kind == "lawyer":
        row = lawyer_model().objects.filter(pk=ref_id).values_list("name", "username").first()
        return _lawyer_label(*row) if row else None
    if kind == "case":
        row = Case.objects.filter(pk=ref_id).values_list("key", "title").first()
        return f"{row[0]} {row[1]}" if row else None
    model = {"client": Client, "counterparty": Counterparty}[kind]
    return model.objects.filter(pk=ref_id).values_list("name", flat=True).first()


def graph_linked_case_ids(instance: Any) -> list[int]:
    """Cases whose team holds this user, or whose counterparties hold this counterparty."""
    if isinstance(instance, Counterparty):
        links = CaseCounterparty.objects.filter(counterparty_id=instance.pk)
    else:
        links = CaseTeamMember.objects.filter(user_id=instance.pk)
    return list(links.values_list("case_id", flat=True))
