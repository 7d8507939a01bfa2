"""Reads of the connection map behind the wall: walk, lookup, conflict check, and their endpoints."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.models import Firm, User
from graph_memory import conf, services
from graph_memory.models import Node
from graph_memory.wall import access
from practice.models import Case, CaseCounterparty, CaseTeamMember, CaseUserObjectPermission
from practice.permissions import view_case_permission
from tests.conftest import Personas
from tests.factories import ClientFactory, CounterpartyFactory

pytestmark = pytest.mark.django_db

PERSONAS = ["alice", "bob", "carol", "dana", "evan"]
C014 = "2026-014 Northwind / Castell acquisition"
C031 = "2026-031 Brightline v. Northwind (breach of logistics agreement)"
C088 = "2025-088 Meridian Foods — commercial lease dispute (Parkside)"
C047 = "2026-047 Lee v. Meridian Foods (wrongful termination)"


@pytest.fixture
def demo(demo_firm: Firm, demo_users: dict[str, User]) -> dict[str, User]:
    services.graph_rebuild_firm(firm_id=demo_firm.pk)
    return demo_users


@pytest.fixture
def api(settings: Any) -> APIClient:
    # Throttle counts in a per-process cache: the suite must not depend on a cache table.
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "graph-reads"}}
    from django.core.cache import cache

    cache.clear()
    return APIClient()


def node(kind: str, label: str) -> Node:
    return Node.objects.get(kind=kind, label=label)


def expected_neighbors(viewer: User) -> dict[tuple[str, str], set[tuple[str, str, str, str]]]:
    """An oracle from the host records alone: (kind, label) -> {(neighbour kind, label, edge, case label)}."""
    adjacency: dict[tuple[str, str], set[tuple[str, str, str, str]]] = {}

    def link(a: tuple[str, str], b: tuple[str, str], edge: str, case: str) -> None:
        adjacency.setdefault(a, set()).add((*b, edge, case))
        adjacency.setdefault(b, set()).add((*a, edge, case))

    for case in access.visible_cases(viewer).select_related("client", "owner").prefetch_related("team", "counterparties"):
        label = f"{case.key} {case.title}"
        me = ("case", label)
        for lawyer in {case.owner, *case.team.all()}:
            link(("lawyer", str(lawyer)), me, "works_on", label)
        link(me, ("client", case.client.name), "for_client", label)
        for cp in case.counterparties.all():
            link(me, ("counterparty", cp.name), "against", label)
    return adjacency


@pytest.mark.parametrize("username", PERSONAS)
def test_walk_from_every_node_matches_what_the_persona_may_open(demo: dict[str, User], username: str) -> None:
    viewer = demo[username]
    expected = expected_neighbors(viewer)
    for n in Node.objects.filter(firm=viewer.firm):
        if (n.kind, n.label) not in expected:
            with pytest.raises(access.NotFound):
                services.node_neighbors(viewer=viewer, node_id=n.pk)
            continue
        page = services.node_neighbors(viewer=viewer, node_id=str(n.pk), limit=100)
        got = {(r.node.kind, r.node.label, r.edge, r.case.label) for r in page.results}
        assert got == expected[(n.kind, n.label)], (username, n.label)
        assert page.node.id == str(n.pk) and not page.has_more


def test_bob_walking_from_northwind_as_counterparty_sees_nothing_of_the_acquisition(demo: dict[str, User]) -> None:
    bob = demo["bob"]
    page = services.node_neighbors(viewer=bob, node_id=node("counterparty", "NORTHWIND HOLDINGS INC").pk)
    assert [(r.node.label, r.edge, r.case.label) for r in page.results] == [(C031, "against", C031)]
    for hidden in (node("client", "Northwind Holdings, Inc."), node("case", C014), node("counterparty", "Castell Components GmbH")):
        with pytest.raises(access.NotFound):
            services.node_neighbors(viewer=bob, node_id=hidden.pk)
    assert not any(C014 in r.label for r in services.nodes_lookup(viewer=bob, q="northwind").results)


def test_walk_kind_filter_order_and_has_more_count_visible_rows_only(demo: dict[str, User]) -> None:
    case = node("case", C031).pk
    page = services.node_neighbors(viewer=demo["evan"], node_id=case)
    assert [(r.node.kind, r.node.label, r.edge) for r in page.results] == [
        ("client", "Brightline Logistics LLC", "for_client"),
        ("counterparty", "NORTHWIND HOLDINGS INC", "against"),
        ("lawyer", "Bob Okafor", "works_on"),
        ("lawyer", "Evan Shaw", "works_on"),
    ]
    assert {r.case.label for r in page.results} == {C031}
    lawyers = services.node_neighbors(viewer=demo["evan"], node_id=case, kind="lawyer", limit=1)
    assert [r.node.label for r in lawyers.results] == ["Bob Okafor"] and lawyers.has_more
    assert services.node_neighbors(viewer=demo["evan"], node_id=case, kind="case").results == []
    alice = node("lawyer", "Alice Hale").pk
    # alice works on two cases; carol may open one of them: no has_more hinting at the other.
    carol_page = services.node_neighbors(viewer=demo["carol"], node_id=alice, limit=1)
    assert [r.node.label for r in carol_page.results] == [C088] and not carol_page.has_more
    assert services.node_neighbors(viewer=demo["dana"], node_id=alice, limit=1).has_more


LOOKUPS = {
    # (persona, q, kind): expected labels, in order
    ("alice", "northwind", None): ["Northwind Holdings, Inc.", C014],
    ("bob", "northwind", None): ["NORTHWIND HOLDINGS INC", C031],
    ("evan", "NORTHWIND", "case"): [C031],
    ("carol", "northwind", None): [],
    ("dana", "northwind", "client"): ["Northwind Holdings, Inc."],
    ("dana", "northwind holdings inc", None): ["NORTHWIND HOLDINGS INC", "Northwind Holdings, Inc."],
    ("carol", "meridian", None): ["Meridian Foods Corp.", C088, C047],
    ("carol", "ALICE", "lawyer"): ["Alice Hale"],
    ("bob", "alice", None): [],
    ("dana", "2026-031", None): [C031],
    ("dana", "dana", None): [],  # works on no case: no node
    ("alice", "castell", None): ["Castell Components GmbH", C014],
    ("evan", "evan shaw", None): ["Evan Shaw"],
}


@pytest.mark.parametrize(("username", "q", "kind"), list(LOOKUPS))
def test_lookup_per_persona(demo: dict[str, User], username: str, q: str, kind: str | None) -> None:
    page = services.nodes_lookup(viewer=demo[username], q=q, kind=kind)
    labels = [r.label for r in page.results]
    expected = LOOKUPS[(username, q, kind)]
    if q == "northwind holdings inc":  # two labels with the same key: order is by label, collation-defined
        assert sorted(labels) == sorted(expected)
    else:
        assert labels == expected
    assert not page.has_more


def test_lookup_is_accent_insensitive_and_pages(demo: dict[str, User], demo_firm: Firm) -> None:
    dana = demo["dana"]
    assert [r.label for r in services.nodes_lookup(viewer=dana, q="foods — commercial").results] == [C088]
    assert [r.label for r in services.nodes_lookup(viewer=dana, q="MÉRIDIAN", kind="client").results] == ["Meridian Foods Corp."]
    first = services.nodes_lookup(viewer=dana, q="e", limit=2)
    assert len(first.results) == 2 and first.has_more
    assert services.nodes_lookup(viewer=dana, q="!!!").results == []


CONFLICTS = {
    ("dana", "Northwind Holdings"): [(C014, "Northwind Holdings, Inc.", "client"), (C031, "NORTHWIND HOLDINGS INC", "counterparty")],
    ("alice", "northwind holdings, inc"): [(C014, "Northwind Holdings, Inc.", "client")],
    ("bob", "NORTHWIND HOLDINGS CORPORATION"): [(C031, "NORTHWIND HOLDINGS INC", "counterparty")],
    ("evan", "Northwind Holdings Inc."): [(C031, "NORTHWIND HOLDINGS INC", "counterparty")],
    ("carol", "Northwind Holdings"): [],
    ("carol", "Meridian Foods Corporation"): [(C088, "Meridian Foods Corp.", "client"), (C047, "Meridian Foods Corp.", "client")],
    ("alice", "Castell Components"): [(C014, "Castell Components GmbH", "counterparty")],
    ("dana", "jordan lee"): [(C047, "Jordan Lee", "counterparty")],
    # Name variants (issue 14): short form, typos, reordered names and initials.
    ("dana", "Northwind"): [(C014, "Northwind Holdings, Inc.", "client"), (C031, "NORTHWIND HOLDINGS INC", "counterparty")],
    ("dana", "NORTHWIND HOLDINGS INC"): [(C014, "Northwind Holdings, Inc.", "client"), (C031, "NORTHWIND HOLDINGS INC", "counterparty")],
    ("dana", "Nortwind Holdings"): [(C014, "Northwind Holdings, Inc.", "client"), (C031, "NORTHWIND HOLDINGS INC", "counterparty")],
    ("dana", "Nortwind"): [(C014, "Northwind Holdings, Inc.", "client"), (C031, "NORTHWIND HOLDINGS INC", "counterparty")],
    ("alice", "Northwind"): [(C014, "Northwind Holdings, Inc.", "client")],
    ("alice", "NORTHWIND HOLDINGS INC"): [(C014, "Northwind Holdings, Inc.", "client")],
    ("alice", "Nortwind Holdings"): [(C014, "Northwind Holdings, Inc.", "client")],
    ("bob", "Northwind"): [(C031, "NORTHWIND HOLDINGS INC", "counterparty")],
    ("bob", "Nortwind Holdings"): [(C031, "NORTHWIND HOLDINGS INC", "counterparty")],
    ("evan", "NORTHWIND HOLDINGS INC"): [(C031, "NORTHWIND HOLDINGS INC", "counterparty")],
    ("carol", "Northwind"): [],
    ("carol", "Nortwind Holdings"): [],
    ("carol", "Lee, Jordan"): [(C047, "Jordan Lee", "counterparty")],
    ("carol", "J. Lee"): [(C047, "Jordan Lee", "counterparty")],
    ("dana", "Jordan Lea"): [(C047, "Jordan Lee", "counterparty")],
    ("alice", "Lee, Jordan"): [],
    ("alice", "Castel Components"): [(C014, "Castell Components GmbH", "counterparty")],
    ("dana", "Brightline Logistic"): [(C031, "Brightline Logistics LLC", "client")],
    ("dana", "Northgate Holdings"): [],  # a different name, not a typo of one
    ("dana", "Parkside Realty Partners Limted"): [(C088, "Parkside Realty Partners", "counterparty")],
}


@pytest.mark.parametrize(("username", "name"), list(CONFLICTS))
def test_conflict_check_per_persona(demo: dict[str, User], username: str, name: str) -> None:
    report = services.conflicts_check(viewer=demo[username], name=name)
    got = [(m.case.label, m.party.label, m.role) for m in report.matches]
    assert sorted(got) == sorted(CONFLICTS[(username, name)])
    assert report.name == name and not report.has_more
    assert all(m.case.kind == "case" and m.party.kind == m.role for m in report.matches)
    assert all(m.match in ("exact", "words", "reordered", "similar") and 0 < m.similarity <= 1 for m in report.matches)


MATCH_KINDS = [
    ("NORTHWIND HOLDINGS INC", "exact", 1.0),
    ("Northwind", "words", 0.5294),
    ("Nortwind Holdings", "similar", 0.9412),
    ("Holdings Northwind", "reordered", 1.0),
]


@pytest.mark.parametrize(("name", "kind", "similarity"), MATCH_KINDS)
def test_each_match_says_how_it_matched(demo: dict[str, User], name: str, kind: str, similarity: float) -> None:
    report = services.conflicts_check(viewer=demo["dana"], name=name)
    assert {(m.match, m.similarity) for m in report.matches} == {(kind, similarity)} and len(report.matches) == 2


def test_best_match_first(demo: dict[str, User], demo_firm: Firm) -> None:
    # A second party, a typo away from the first: the exact one comes first.
    other = CounterpartyFactory(firm=demo_firm, name="Meridian Food Corp.")
    lease = Case.objects.get(key="2025-088")
    CaseCounterparty.objects.create(case=lease, counterparty=other, firm=demo_firm)
    services.graph_sync_case(case_id=lease.pk)
    report = services.conflicts_check(viewer=demo["dana"], name="Meridian Foods")
    assert [(m.party.label, m.match) for m in report.matches] == [
        ("Meridian Foods Corp.", "exact"), ("Meridian Foods Corp.", "exact"), ("Meridian Food Corp.", "similar"),
    ]


def test_hidden_never_existing_and_malformed_ids_are_one_answer(demo: dict[str, User], personas: Personas, api: APIClient) -> None:
    bob = demo["bob"]
    services.graph_rebuild_firm(firm_id=personas.firm.pk)
    other_firm_node = Node.objects.filter(firm=personas.firm).first().pk
    ids = [node("client", "Northwind Holdings, Inc.").pk, uuid.uuid4(), other_firm_node, "abc", "", None, "1", 2**70]
    errors = set()
    for node_id in ids:
        with pytest.raises(access.NotFound) as info:
            services.node_neighbors(viewer=bob, node_id=node_id)
        errors.add((type(info.value), str(info.value)))
    assert len(errors) == 1
    api.force_authenticate(bob)
    answers = set()
    for node_id in [*ids[:4], "not-a-uuid", "%20", "0" * 500]:
        response = api.get(f"/api/memory/nodes/{node_id}/neighbors/")
        answers.add((response.status_code, response.content, response["Content-Type"]))
    assert answers == {(404, b'{"error":{"code":"not_found","message":"Not found.","field":null}}', "application/json")}


def test_other_firms_and_unusable_viewers_see_nothing(demo: dict[str, User], personas: Personas) -> None:
    target = node("case", C014).pk
    for viewer in (personas.other_firm_admin, personas.firm_admin, None):
        with pytest.raises(access.NotFound):
            services.node_neighbors(viewer=viewer, node_id=target)
        assert services.nodes_lookup(viewer=viewer, q="northwind").results == []
        assert services.conflicts_check(viewer=viewer, name="Northwind Holdings").matches == []
    alice = demo["alice"]
    alice.is_active = False
    with pytest.raises(access.NotFound):
        services.node_neighbors(viewer=alice, node_id=target)


def test_limit_caps_in_the_services(demo: dict[str, User]) -> None:
    dana, case = demo["dana"], node("case", C014).pk
    for bad in (0, -1, conf.get("PAGE_MAX") + 1, "5", True):
        with pytest.raises(ValueError, match="limit"):
            services.node_neighbors(viewer=dana, node_id=case, limit=bad)
        with pytest.raises(ValueError, match="limit"):
            services.nodes_lookup(viewer=dana, q="a", limit=bad)
    with pytest.raises(ValueError, match="kind"):
        services.nodes_lookup(viewer=dana, q="a", kind="document")
    assert services.nodes_lookup(viewer=dana, q="a", limit=conf.get("PAGE_MAX")).results


# --- Query counts: fixed, whatever the size of the graph ----------------------------------


def grow_firm(p: Personas, cases: int) -> None:
    client, cp = ClientFactory(firm=p.firm), CounterpartyFactory(firm=p.firm, name="Shared Party Ltd")
    made = Case.objects.bulk_create(
        Case(firm=p.firm, key=f"bulk-{i}", title=f"Bulk {i}", opened=dt.date(2026, 1, 1), client=client, owner=p.owner)
        for i in range(cases)
    )
    CaseTeamMember.objects.bulk_create(CaseTeamMember(case=c, user=p.teammate, firm=p.firm) for c in made)
    CaseCounterparty.objects.bulk_create(CaseCounterparty(case=c, counterparty=cp, firm=p.firm) for c in made)
    # bulk_create fires no signal: grant owner and teammate `view_case` as the host would.
    view_case = view_case_permission()
    CaseUserObjectPermission.objects.bulk_create(
        CaseUserObjectPermission(content_object=c, user=u, permission=view_case) for c in made for u in (p.owner, p.teammate)
    )
    services.graph_rebuild_firm(firm_id=p.firm.pk)


@pytest.mark.parametrize("cases", [10, 300])
def test_reads_are_a_fixed_number_of_queries(personas: Personas, cases: int, django_assert_num_queries) -> None:
    p = personas
    grow_firm(p, cases)
    owner_node = Node.objects.get(kind="lawyer", ref_id=p.owner.pk).pk
    for viewer in (p.owner, p.firm_admin):
        with django_assert_num_queries(1):
            page = services.node_neighbors(viewer=viewer, node_id=owner_node, limit=5)
        assert len(page.results) == 5 and page.has_more
        with django_assert_num_queries(1):
            assert services.nodes_lookup(viewer=viewer, q="bulk", limit=100).results
        with django_assert_num_queries(1):
            assert len(services.conflicts_check(viewer=viewer, name="SHARED PARTY LIMITED").matches) == min(cases, 100)
    with django_assert_num_queries(1), pytest.raises(access.NotFound):
        services.node_neighbors(viewer=p.outsider, node_id=owner_node)


# --- Endpoints ----------------------------------------------------------------------


def test_lookup_endpoint(demo: dict[str, User], api: APIClient) -> None:
    token = Token.objects.create(user=demo["alice"])
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    body = api.get("/api/memory/nodes/", {"q": "northwind"}).json()
    client = node("client", "Northwind Holdings, Inc.")
    assert body["results"][0] == {"id": str(client.pk), "kind": "client", "label": "Northwind Holdings, Inc."}
    assert [r["label"] for r in body["results"]] == ["Northwind Holdings, Inc.", C014]
    assert body["has_more"] is False and body["notice"] == conf.get("NOTICE")
    body = api.get("/api/memory/nodes/", {"q": "northwind", "kind": "case", "limit": "1"}).json()
    assert [r["label"] for r in body["results"]] == [C014] and body["has_more"] is False


def test_neighbors_endpoint(demo: dict[str, User], api: APIClient) -> None:
    api.force_authenticate(demo["bob"])
    cp = node("counterparty", "NORTHWIND HOLDINGS INC")
    body = api.get(f"/api/memory/nodes/{cp.pk}/neighbors/").json()
    case = {"id": str(node("case", C031).pk), "kind": "case", "label": C031}
    assert body == {
        "node": {"id": str(cp.pk), "kind": "counterparty", "label": "NORTHWIND HOLDINGS INC"},
        "results": [{"node": case, "edge": "against", "case": case}],
        "has_more": False,
        "notice": conf.get("NOTICE"),
    }
    body = api.get(f"/api/memory/nodes/{case['id']}/neighbors/", {"kind": "lawyer", "limit": 1}).json()
    assert [r["node"]["label"] for r in body["results"]] == ["Bob Okafor"] and body["has_more"] is True


def test_conflicts_endpoint(demo: dict[str, User], api: APIClient) -> None:
    api.force_authenticate(demo["dana"])
    body = api.get("/api/memory/conflicts/", {"name": "Northwind Holdings"}).json()
    assert body["name"] == "Northwind Holdings" and body["notice"] == conf.get("NOTICE")
    got = sorted((m["case"]["label"], m["party"]["label"], m["role"]) for m in body["matches"])
    assert got == sorted(CONFLICTS[("dana", "Northwind Holdings")])
    assert {(m["match"], m["similarity"]) for m in body["matches"]} == {("exact", 1.0)}
    body = api.get("/api/memory/conflicts/", {"name": "Nortwind", "limit": "1"}).json()
    assert len(body["matches"]) == 1 and body["has_more"] is True and body["matches"][0]["match"] == "similar"
    for other, seen in (("bob", 1), ("carol", 0)):
        api.force_authenticate(demo[other])
        body = api.get("/api/memory/conflicts/", {"name": "Nortwind", "limit": "1"}).json()
        assert len(body["matches"]) == seen and body["has_more"] is False  # nothing hidden shows, not even as more


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("/api/memory/nodes/", {}, "q"),
        ("/api/memory/nodes/", {"q": ""}, "q"),
        ("/api/memory/nodes/", {"q": "   "}, "q"),
        ("/api/memory/nodes/", {"q": "?!"}, "q"),
        ("/api/memory/nodes/", {"q": "x" * 501}, "q"),
        ("/api/memory/nodes/", {"q": "a", "kind": "document"}, "kind"),
        ("/api/memory/nodes/", {"q": "a", "limit": "101"}, "limit"),
        ("/api/memory/nodes/", {"q": "a", "limit": "0"}, "limit"),
        ("/api/memory/nodes/", {"q": "a", "limit": "ten"}, "limit"),
        ("NEIGHBORS", {"limit": "101"}, "limit"),
        ("NEIGHBORS", {"kind": "edge"}, "kind"),
        ("/api/memory/conflicts/", {}, "name"),
        ("/api/memory/conflicts/", {"name": "x" * 501}, "name"),
        ("/api/memory/conflicts/", {"name": "Northwind", "limit": "1000"}, "limit"),
        ("/api/memory/conflicts/", {"name": "Northwind", "limit": "0"}, "limit"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(demo: dict[str, User], api: APIClient, path: str, params: dict[str, str], field: str) -> None:
    api.force_authenticate(demo["dana"])
    if path == "NEIGHBORS":
        path = f"/api/memory/nodes/{node('case', C014).pk}/neighbors/"
    response = api.get(path, params)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid" and error["field"] == field and error["message"]


def test_limit_at_the_cap_is_fine_and_unauthenticated_is_401(demo: dict[str, User], api: APIClient) -> None:
    response = api.get("/api/memory/nodes/", {"q": "a"})
    assert response.status_code == 401 and response.json()["error"]["code"] == "unauthenticated"
    api.force_authenticate(demo["carol"])
    assert api.get("/api/memory/nodes/", {"q": "a", "limit": str(conf.get("PAGE_MAX"))}).status_code == 200


def test_endpoints_are_throttled(demo: dict[str, User], api: APIClient, settings: Any) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "THROTTLE_RATE": "2/min"}
    api.force_authenticate(demo["carol"])
    codes = [api.get("/api/memory/conflicts/", {"name": "Meridian"}).status_code for _ in range(3)]
    assert codes == [200, 200, 429]


def test_schema_describes_the_endpoints_as_orientation(demo: dict[str, User]) -> None:
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    for path in ("/api/memory/nodes/", "/api/memory/nodes/{node_id}/neighbors/", "/api/memory/conflicts/"):
        operation = schema["paths"][path]["get"]
        assert "verify" in operation["description"]
        assert {"200", "400", "404"} <= set(operation["responses"])
    limit = next(p for p in schema["paths"]["/api/memory/nodes/"]["get"]["parameters"] if p["name"] == "limit")
    assert limit["schema"]["maximum"] == conf.get("PAGE_MAX")
