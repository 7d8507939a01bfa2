"""The demo firm as the assistant's API sees it: graph built, every case summarised, a token per persona.

Shared by tests/api/. Personas: the demo firm's alice, bob, carol,
evan (lawyers) and dana (its admin), plus `stranger`, an admin of another firm;
`tests.cast.demo_cast(world.users)` stands them around one case as the cast.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.test import Client as HttpClient
from rest_framework.authtoken.models import Token

from accounts.models import Firm, User
from graph_memory import services
from graph_memory.models import Node
from practice.models import Case, CaseCounterparty, CaseUserObjectPermission
from practice.permissions import view_case_permission
from tests.cast import stranger

PERSONAS = ["alice", "bob", "carol", "evan", "dana", "stranger"]
C014 = "2026-014 Northwind / Castell acquisition"
C031 = "2026-031 Brightline v. Northwind (breach of logistics agreement)"
C088 = "2025-088 Meridian Foods — commercial lease dispute (Parkside)"
C047 = "2026-047 Lee v. Meridian Foods (wrongful termination)"
NW, NW_CP = "Northwind Holdings, Inc.", "NORTHWIND HOLDINGS INC"
# The cases each persona may open (tests/wall/test_access.py holds the wall itself).
VISIBLE = {
    "alice": {C014, C088},
    "bob": {C031},
    "evan": {C031},
    "carol": {C088, C047},
    "dana": {C014, C031, C088, C047},
    "stranger": set(),
}
NOT_FOUND = b'{"error":{"code":"not_found","message":"Not found.","field":null}}'
FAST = {"EMBEDDER": "none", "WRITER": "extractive"}


@dataclass
class World:
    firm: Firm
    users: dict[str, User]
    tokens: dict[str, str]

    def client(self, persona: str | None = None) -> HttpClient:
        """A plain HTTP client sending `persona`'s token (none for None)."""
        if persona is None:
            return HttpClient()
        return HttpClient(headers={"Authorization": f"Token {self.tokens[persona]}"})

    def get(self, persona: str | None, path: str, params: dict[str, Any] | None = None) -> Any:
        return self.client(persona).get(path, params or {})


def set_throttle_rate(settings: Any, rate: str) -> None:
    """Override the API's rate, GRAPH_MEMORY["THROTTLE_RATE"] (pytest-django `settings`), and start every count from zero."""
    settings.GRAPH_MEMORY = {**getattr(settings, "GRAPH_MEMORY", {}), "THROTTLE_RATE": rate}
    cache.clear()


def build_world(firm: Firm, users: dict[str, User], settings: Any) -> World:
    """The demo firm with its connection map and a summary of every case, as the nightly run leaves it."""
    settings.GRAPH_MEMORY = {**getattr(settings, "GRAPH_MEMORY", {}), **FAST}
    set_throttle_rate(settings, "100000/min")
    services.graph_rebuild_firm(firm_id=firm.pk)
    for case_id in Case.objects.filter(firm=firm).order_by("pk").values_list("pk", flat=True):
        services.summarize_case(case_id=case_id)
    everyone = {**users, "stranger": stranger()}
    tokens = {name: Token.objects.create(user=user).key for name, user in everyone.items()}
    return World(firm=firm, users=everyone, tokens=tokens)


def node(kind: str, label: str) -> Node:
    return Node.objects.get(kind=kind, label=label)


def add_cases(world: World, count: int) -> None:
    """`count` more cases for Northwind against Castell, owned by alice, with graph and summaries (bulk, no signals)."""
    firm, alice = world.firm, world.users["alice"]
    acquisition = Case.objects.get(firm=firm, key="2026-014")
    made = Case.objects.bulk_create(
        Case(
            firm=firm,
            key=f"2027-{i:03d}",
            title=f"Northwind follow-on matter {i}",
            description="Follow-on lease dispute work for Northwind Holdings.",
            opened=dt.date(2026, 1, 1),
            client=acquisition.client,
            owner=alice,
        )
        for i in range(count)
    )
    castell = acquisition.counterparties.get()
    CaseCounterparty.objects.bulk_create(CaseCounterparty(case=c, counterparty=castell, firm=firm) for c in made)
    view_case = view_case_permission()
    CaseUserObjectPermission.objects.bulk_create(
        CaseUserObjectPermission(content_object=c, user=alice, permission=view_case) for c in made
    )
    services.graph_rebuild_firm(firm_id=firm.pk)
    for case in made:
        services.summarize_case(case_id=case.pk)
