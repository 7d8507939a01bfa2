"""Every endpoint of ../shared/spec/api.md, for every demo persona: statuses and bodies as the spec says.

The oracle is the demo firm's records written out by hand (CASE_NODES), not
the code under test: which nodes each case touches, hence what each persona
may reach, walk, brief, find and match.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.test import Client as HttpClient

from accounts.models import Firm, User
from graph_memory import conf
from graph_memory.api.tools import DISCIPLINE, endpoints, openai_tools
from graph_memory.models import CaseSummary, Node
from tests.api_support import (
    C014,
    C031,
    C047,
    C088,
    NOT_FOUND,
    NW,
    NW_CP,
    PERSONAS,
    VISIBLE,
    World,
    add_cases,
    build_world,
    node,
)

pytestmark = pytest.mark.django_db


CASE_NODES: dict[str, set[tuple[str, str]]] = {
    C014: {("case", C014), ("client", NW), ("counterparty", "Castell Components GmbH"), ("lawyer", "Alice Hale")},
    C031: {
        ("case", C031),
        ("client", "Brightline Logistics LLC"),
        ("counterparty", NW_CP),
        ("lawyer", "Bob Okafor"),
        ("lawyer", "Evan Shaw"),
    },
    C088: {
        ("case", C088),
        ("client", "Meridian Foods Corp."),
        ("counterparty", "Parkside Realty Partners"),
        ("lawyer", "Alice Hale"),
        ("lawyer", "Carol Diaz"),
    },
    C047: {
        ("case", C047),
        ("client", "Meridian Foods Corp."),
        ("counterparty", "Jordan Lee"),
        ("lawyer", "Carol Diaz"),
    },
}
EDGE = {"lawyer": "works_on", "client": "for_client", "counterparty": "against"}
# Parties that are one party once case, punctuation and legal forms are ignored.
SAME_PARTY = {NW: "northwind", NW_CP: "northwind"}
NOTICE = conf.get("NOTICE")


@pytest.fixture
def world(demo_firm: Firm, demo_users: dict[str, User], settings: Any) -> World:
    return build_world(demo_firm, demo_users, settings)


def cases_of(kind: str, label: str, persona: str) -> set[str]:
    """The cases `persona` may open that touch this node."""
    return {case for case in VISIBLE[persona] if (kind, label) in CASE_NODES[case]}


def expected_neighbors(kind: str, label: str, persona: str) -> set[tuple[str, str, str, str]]:
    """(neighbour kind, neighbour label, edge, case label) for every edge of a visible case at this node."""
    found = set()
    for case in cases_of(kind, label, persona):
        if kind == "case":
            found |= {(k, lbl, EDGE[k], case) for k, lbl in CASE_NODES[case] if k != "case"}
        else:
            found.add(("case", case, EDGE[kind], case))
    return found


def ref(n: Node) -> dict[str, str]:
    return {"id": str(n.pk), "kind": n.kind, "label": n.label}


def test_walk_and_brief_of_every_node(world: World) -> None:
    for persona in PERSONAS:
        check_walk_and_brief(world, persona)


def check_walk_and_brief(world: World, persona: str) -> None:
    http = world.client(persona)
    for n in Node.objects.filter(firm=world.firm).order_by("kind", "label"):
        visible_cases = cases_of(n.kind, n.label, persona)
        walk = http.get(f"/api/memory/nodes/{n.pk}/neighbors/")
        brief = http.get(f"/api/memory/nodes/{n.pk}/brief/")
        if not visible_cases:
            assert (walk.status_code, walk.content) == (404, NOT_FOUND), (persona, n.label)
            assert (brief.status_code, brief.content) == (404, NOT_FOUND), (persona, n.label)
            continue
        assert walk.status_code == 200, (persona, n.label)
        body = walk.json()
        assert body["node"] == ref(n) and body["has_more"] is False and body["notice"] == NOTICE
        got = {(r["node"]["kind"], r["node"]["label"], r["edge"], r["case"]["label"]) for r in body["results"]}
        assert got == expected_neighbors(n.kind, n.label, persona), (persona, n.label)
        assert all(r["case"]["kind"] == "case" for r in body["results"])

        assert brief.status_code == 200, (persona, n.label)
        body = brief.json()
        assert body["node"] == ref(n) and body["has_more"] is False and body["notice"] == NOTICE
        assert {c["case"]["label"] for c in body["cases"]} == visible_cases
        assert NOTICE in body["text"]
        for entry in body["cases"]:
            summary = CaseSummary.objects.get(case__key=entry["case"]["label"].split()[0], firm=world.firm)
            assert entry["summary"] == summary.text and entry["summary"] in body["text"]
            assert entry["stale"] is False
            assert dt.datetime.fromisoformat(entry["updated_at"]) == summary.written_at
        hidden = set(CASE_NODES) - VISIBLE[persona]
        assert not any(case.split()[0] in body["text"] for case in hidden), (persona, n.label)


def test_lookup_finds_exactly_the_reachable_nodes(world: World) -> None:
    for persona in PERSONAS:
        check_lookup(world, persona)


def check_lookup(world: World, persona: str) -> None:
    reachable = set().union(*(CASE_NODES[c] for c in VISIBLE[persona]))
    for n in Node.objects.filter(firm=world.firm):
        response = world.get(persona, "/api/memory/nodes/", {"q": n.label, "kind": n.kind})
        assert response.status_code == 200
        body = response.json()
        assert body["notice"] == NOTICE and body["has_more"] is False
        found = {(r["kind"], r["label"]) for r in body["results"]}
        assert ((n.kind, n.label) in found) == ((n.kind, n.label) in reachable), (persona, n.label)
        assert found <= reachable and all(r["kind"] == n.kind for r in body["results"])


def test_conflict_check_of_every_party(world: World) -> None:
    for persona in PERSONAS:
        check_conflicts(world, persona)


def check_conflicts(world: World, persona: str) -> None:
    parties = {(k, lbl) for nodes in CASE_NODES.values() for k, lbl in nodes if k in ("client", "counterparty")}
    for _, name in sorted(parties):
        response = world.get(persona, "/api/memory/conflicts/", {"name": name})
        assert response.status_code == 200
        body = response.json()
        assert body["name"] == name and body["notice"] == NOTICE
        same = {lbl for _, lbl in parties if SAME_PARTY.get(lbl, lbl) == SAME_PARTY.get(name, name)}
        expected = {
            (case, lbl, kind)
            for case in VISIBLE[persona]
            for kind, lbl in CASE_NODES[case]
            if kind in ("client", "counterparty") and lbl in same
        }
        assert {(m["case"]["label"], m["party"]["label"], m["role"]) for m in body["matches"]} == expected, (
            persona,
            name,
        )


def test_search_and_tools(world: World) -> None:
    for persona in PERSONAS:
        check_search_and_tools(world, persona)


def check_search_and_tools(world: World, persona: str) -> None:
    body = world.get(persona, "/api/memory/search/", {"q": "case status"}).json()
    assert {hit["case"]["label"] for hit in body["results"]} == VISIBLE[persona]
    assert body["notice"] == NOTICE and body["mode"] == "keyword"
    assert all(0 < hit["score"] <= 1 and hit["snippet"] for hit in body["results"])
    lease = world.get(persona, "/api/memory/search/", {"q": "lease dispute"}).json()
    assert [hit["case"]["label"] for hit in lease["results"]] == ([C088] if C088 in VISIBLE[persona] else [])
    tools = world.get(persona, "/api/memory/tools/")
    assert tools.status_code == 200
    assert tools.json() == {
        "tools": openai_tools(),
        "endpoints": endpoints(),
        "instructions": DISCIPLINE,
        "notice": NOTICE,
    }


def test_the_demo_side_by_side(world: World) -> None:
    """The four requests `make demo` shows for alice, bob and dana."""
    answers: dict[str, dict[str, Any]] = {}
    for persona in ("alice", "bob", "dana"):
        start = world.get(persona, "/api/memory/nodes/", {"q": "Northwind Holdings"}).json()["results"]
        walks = [world.get(persona, f"/api/memory/nodes/{r['id']}/neighbors/").json() for r in start]
        meridian = world.get(persona, "/api/memory/nodes/", {"q": "Meridian Foods", "kind": "client"}).json()["results"]
        brief = world.get(persona, f"/api/memory/nodes/{meridian[0]['id']}/brief/").json() if meridian else None
        answers[persona] = {
            "walk": sorted((w["node"]["label"], r["node"]["label"], r["edge"]) for w in walks for r in w["results"]),
            "brief": sorted(c["case"]["label"] for c in brief["cases"]) if brief else None,
            "search": [
                h["case"]["label"]
                for h in world.get(persona, "/api/memory/search/", {"q": "lease dispute"}).json()["results"]
            ],
            "conflicts": sorted(
                (m["case"]["label"], m["role"])
                for m in world.get(persona, "/api/memory/conflicts/", {"name": "Northwind Holdings"}).json()["matches"]
            ),
        }
    assert answers["alice"] == {
        "walk": [(NW, C014, "for_client")],
        "brief": [C088],
        "search": [C088],
        "conflicts": [(C014, "client")],
    }
    assert answers["bob"] == {
        "walk": [(NW_CP, C031, "against")],
        "brief": None,
        "search": [],
        "conflicts": [(C031, "counterparty")],
    }
    assert answers["dana"] == {
        "walk": [(NW_CP, C031, "against"), (NW, C014, "for_client")],
        "brief": sorted([C047, C088]),
        "search": [C088],
        "conflicts": [(C014, "client"), (C031, "counterparty")],
    }


def all_requests() -> list[tuple[str, str, dict[str, str]]]:
    """(endpoint, path, query) of one request to each endpoint, about Northwind and its acquisition."""
    nw, case = node("client", NW), node("case", C014)
    return [
        ("nodes", "/api/memory/nodes/", {"q": "northwind"}),
        ("neighbors", f"/api/memory/nodes/{nw.pk}/neighbors/", {}),
        ("brief", f"/api/memory/nodes/{nw.pk}/brief/", {}),
        ("brief", f"/api/memory/nodes/{case.pk}/brief/", {}),
        ("search", "/api/memory/search/", {"q": "lease dispute"}),
        ("conflicts", "/api/memory/conflicts/", {"name": "Northwind Holdings"}),
        ("tools", "/api/memory/tools/", {}),
    ]


def test_session_auth_answers_as_token_auth(world: World) -> None:
    session = HttpClient()
    session.force_login(world.users["alice"])
    for _, path, params in all_requests():
        by_session, by_token = session.get(path, params), world.get("alice", path, params)
        assert by_session.status_code == by_token.status_code == 200, path
        assert by_session.json() == by_token.json(), path


def test_anonymous_gets_401_everywhere(world: World) -> None:
    for _, path, params in all_requests():
        response = world.get(None, path, params)
        assert response.status_code == 401, path
        assert response["WWW-Authenticate"] == "Token"
        assert response.json() == {
            "error": {
                "code": "unauthenticated",
                "message": "Authentication credentials were not provided.",
                "field": None,
            }
        }


# Every request: the token lookup, and the throttle's read and write of its
# count in the shared (database) cache: 6 statements inside a test's transaction;
# and the answer's served-ledger row (issue 31): one INSERT, hidden or not.
OVERHEAD = 8
QUERIES = {"nodes": 1, "neighbors": 1, "brief": 2, "search": 1, "conflicts": 1, "tools": 0}


def test_query_counts_do_not_grow_with_the_firm(world: World, django_assert_num_queries) -> None:
    requests = all_requests()

    def run_all() -> dict[tuple[str, str], Any]:
        bodies = {}
        for persona in ("alice", "dana", "bob"):
            for endpoint, path, params in requests:
                hidden = persona == "bob" and endpoint in ("neighbors", "brief")
                # A hidden node is one query: the lookup that finds it unreachable.
                with django_assert_num_queries(
                    OVERHEAD + (1 if hidden else QUERIES[endpoint]), info=f"{persona} {path}"
                ):
                    response = world.get(persona, path, params)
                assert response.status_code == (404 if hidden else 200), (persona, path)
                bodies[(persona, path)] = response.json()
        return bodies

    before = run_all()
    add_cases(world, 50)  # 50 more Northwind cases for alice (and so for dana)
    after = run_all()
    walk, brief = requests[1][1], requests[2][1]
    for persona in ("alice", "dana"):
        assert before[(persona, walk)]["has_more"] is False and after[(persona, walk)]["has_more"] is True
        assert (
            len(after[(persona, walk)]["results"]) == len(after[(persona, brief)]["cases"]) == conf.get("PAGE_DEFAULT")
        )
        assert after[(persona, brief)]["has_more"] is True
    assert after[("bob", walk)] == before[("bob", walk)]
