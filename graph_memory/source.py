"""The seam between the memory layer and the host's records.

This is the only module in `graph_memory` that imports the host product
(`practice` in this repository). Everything else asks this module for the
host's models and records, so a different host replaces one file.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import CharField, F, QuerySet, Value
from django.db.models.functions import Coalesce, Concat, NullIf

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
# counterparties. Each helper returns a lazy values() QuerySet with the column
# names given in its docstring; graph.py embeds them in set-based SQL, so a
# rebuild never loads a firm's rows into Python.


# Case fields the map reads (a save limited to other fields leaves it alone).
GRAPH_CASE_FIELDS = frozenset({"key", "title", "owner", "owner_id", "client", "client_id"})


def lawyer_model() -> type[Any]:
    """The model whose rows are lawyer nodes (the host's user model)."""
    return get_user_model()


def _lawyer_label(prefix: str = "") -> Any:
    return Coalesce(NullIf(F(f"{prefix}name"), Value("")), F(f"{prefix}username"))  # as User.__str__


def _case_label() -> Any:
    return Concat(F("key"), Value(" "), F("title"), output_field=CharField())  # as Case.__str__


def _scope(prefix: str, *, firm_id: int | None, case_id: int | None) -> dict[str, int]:
    if (firm_id is None) == (case_id is None):
        raise ValueError("give exactly one of firm_id and case_id")
    return {"firm_id": firm_id} if firm_id is not None else {f"{prefix}id": case_id}  # type: ignore[dict-item]


def graph_case_headers(*, firm_id: int | None = None, case_id: int | None = None) -> QuerySet[Any]:
    """Columns case_ref, firm_ref, case_label, owner_ref, owner_label, client_ref, client_label: one row per case."""
    return Case.objects.filter(**_scope("", firm_id=firm_id, case_id=case_id)).order_by().values(
        case_ref=F("id"),
        firm_ref=F("firm_id"),
        case_label=_case_label(),
        owner_ref=F("owner_id"),
        owner_label=_lawyer_label("owner__"),
        client_ref=F("client_id"),
        client_label=F("client__name"),
    )


def graph_team_links(*, firm_id: int | None = None, case_id: int | None = None) -> QuerySet[Any]:
    """Columns case_ref, user_ref, user_label: one row per team membership."""
    return CaseTeamMember.objects.filter(**_scope("case_", firm_id=firm_id, case_id=case_id)).order_by().values(
        case_ref=F("case_id"), user_ref=F("user_id"), user_label=_lawyer_label("user__")
    )


def graph_counterparty_links(*, firm_id: int | None = None, case_id: int | None = None) -> QuerySet[Any]:
    """Columns case_ref, party_ref, party_label: one row per counterparty of a case."""
    return CaseCounterparty.objects.filter(**_scope("case_", firm_id=firm_id, case_id=case_id)).order_by().values(
        case_ref=F("case_id"), party_ref=F("counterparty_id"), party_label=F("counterparty__name")
    )


def graph_label(*, kind: str, ref_id: int) -> str | None:
    """The current label of the host record behind a node of this kind (None if it is gone)."""
    model, label = {
        "lawyer": (lawyer_model(), _lawyer_label()),
        "case": (Case, _case_label()),
        "client": (Client, F("name")),
        "counterparty": (Counterparty, F("name")),
    }[kind]
    return model.objects.filter(pk=ref_id).values_list(label, flat=True).first()


def graph_linked_case_ids(instance: Any) -> list[int]:
    """Cases whose team holds this user, or whose counterparties hold this counterparty."""
    if isinstance(instance, Counterparty):
        links = CaseCounterparty.objects.filter(counterparty_id=instance.pk)
    else:
        links = CaseTeamMember.objects.filter(user_id=instance.pk)
    return list(links.values_list("case_id", flat=True))
