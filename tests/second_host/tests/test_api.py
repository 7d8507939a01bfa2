"""The assistant's API in the second host: token auth, hidden ≡ unknown (status, headers, bytes), pinned query counts.

This host's REST framework defaults allow anyone and authenticate no one
(tests/second_host/settings.py): the memory's views carry their own wiring.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client as HttpClient
from rest_framework.authtoken.models import Token

from graph_memory import conf, services
from graph_memory.api.tools import DISCIPLINE, endpoints, openai_tools
from graph_memory.models import Node
from tests.second_host.factories import PartyFactory
from tests.second_host.matters.models import Assignment, Engagement, Matter
from tests.second_host.world import ACQ, LEASE, PERSONAS, TERM, VISIBLE, Office

pytestmark = pytest.mark.django_db

NOT_FOUND = b'{"error":{"code":"not_found","message":"Not found.","field":null}}'
NOTICE = conf.get("NOTICE")
# As pinned in the reference host (tests/api/test_endpoints.py): the token lookup and the throttle's
# statements in the database cache, and the answer's served-ledger row (one INSERT, issue 31);
# then the read itself.
OVERHEAD = 8
QUERIES = {"nodes": 1, "neighbors": 1, "brief": 2, "search": 1, "conflicts": 1, "tools": 0}


class Api:
    def __init__(self, memory: Office) -> None:
        self.memory = memory
        self.tokens = {name: Token.objects.create(user=user).key for name, user in memory.people.items()}

    def get(self, persona: str | None, path: str, params: dict[str, Any] | None = None) -> Any:
        headers = {"Authorization": f"Token {self.tokens[persona]}"} if persona else {}
        return HttpClient(headers=headers).get(path, params or {})


@pytest.fixture
def api(memory: Office, settings: Any) -> Api:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "THROTTLE_RATE": "100000/min"}
    cache.clear()
    return Api(memory)


def node(office: Office, kind: str, label: str) -> Node:
    return Node.objects.get(firm_id=office.office.pk, kind=kind, label=label)


def all_requests(memory: Office) -> list[tuple[str, str, dict[str, str]]]:
    """(endpoint, path, query) of one request to each endpoint, about Nordwind and its acquisition."""
    nordwind = node(memory, "client", "Nordwind Holdings AG")
    case = Node.objects.get(kind="case", ref_id=memory.matters[ACQ].pk)
    return [
        ("nodes", "/api/memory/nodes/", {"q": "nordwind"}),
        ("neighbors", f"/api/memory/nodes/{nordwind.pk}/neighbors/", {}),
        ("brief", f"/api/memory/nodes/{nordwind.pk}/brief/", {}),
        ("brief", f"/api/memory/nodes/{case.pk}/brief/", {}),
        ("search", "/api/memory/search/", {"q": "acquisition shares"}),
        ("conflicts", "/api/memory/conflicts/", {"name": "Nordwind Holdings"}),
        ("tools", "/api/memory/tools/", {}),
    ]


def visible_nodes(memory: Office, persona: str) -> set[str]:
    """Ids of the nodes an edge of a matter the persona may open touches (the map's own rows, read directly)."""
    cases = [memory.matters[r].pk for r in VISIBLE[persona]]
    found: set[str] = set()
    for case in Node.objects.filter(kind="case", ref_id__in=cases):
        found.add(str(case.pk))
        found |= {str(n) for n in case.out_edges.values_list("target_id", flat=True)}
        found |= {str(n) for n in case.in_edges.values_list("source_id", flat=True)}
    return found


def test_every_node_answers_200_or_the_one_404(api: Api) -> None:
    memory = api.memory
    for persona in PERSONAS:
        reachable = visible_nodes(memory, persona)
        for n in Node.objects.all():
            for path in ("neighbors", "brief"):
                response = api.get(persona, f"/api/memory/nodes/{n.pk}/{path}/")
                if str(n.pk) in reachable:
                    assert response.status_code == 200, (persona, n.label, path)
                    assert response.json()["notice"] == NOTICE
                else:
                    assert (response.status_code, response.content) == (404, NOT_FOUND), (persona, n.label, path)


def test_hidden_and_unknown_are_byte_for_byte_the_same(api: Api) -> None:
    hidden = Node.objects.get(kind="case", ref_id=api.memory.matters[TERM].pk).pk
    answers = set()
    for node_id in (hidden, "8d3f6c1e-0000-3000-8000-000000000000", "not-a-uuid"):
        for path in ("neighbors", "brief"):
            response = api.get("owner", f"/api/memory/nodes/{node_id}/{path}/")
            answers.add((response.status_code, response.content, tuple(sorted(response.items()))))
    assert len(answers) == 1 and next(iter(answers))[:2] == (404, NOT_FOUND)
    unknown_path = api.get("owner", "/api/memory/no-such-endpoint/")
    assert (unknown_path.status_code, unknown_path.content) == (404, NOT_FOUND)


def test_anonymous_gets_401_everywhere_despite_the_hosts_allow_any(api: Api) -> None:
    for _, path, params in all_requests(api.memory):
        response = api.get(None, path, params)
        assert response.status_code == 401, path
        assert response["WWW-Authenticate"] == "Token"
        assert response.json()["error"]["code"] == "unauthenticated"
    bad_token = HttpClient(headers={"Authorization": "Token nope"}).get("/api/memory/tools/")
    assert bad_token.status_code == 401


def test_session_auth_answers_as_token_auth(api: Api) -> None:
    session = HttpClient()
    session.force_login(api.memory.people["owner"])
    for _, path, params in all_requests(api.memory):
        by_session, by_token = session.get(path, params), api.get("owner", path, params)
        assert by_session.status_code == by_token.status_code == 200, path
        assert by_session.json() == by_token.json(), path


def test_search_conflicts_and_tools_per_persona(api: Api) -> None:
    for persona in PERSONAS:
        body = api.get(persona, "/api/memory/search/", {"q": "matter"}).json()
        got = {hit["case"]["label"].split(":")[0] for hit in body["results"]}
        assert got <= VISIBLE[persona] and body["mode"] == "keyword", persona
        conflicts = api.get(persona, "/api/memory/conflicts/", {"name": "MERIDIAN FOODS CORPORATION"}).json()
        matched = {m["case"]["label"].split(":")[0] for m in conflicts["matches"]}
        assert matched == {LEASE, TERM} & VISIBLE[persona], persona
        tools = api.get(persona, "/api/memory/tools/")
        assert tools.json() == {
            "tools": openai_tools(),
            "endpoints": endpoints(),
            "instructions": DISCIPLINE,
            "notice": NOTICE,
        }
    bad = api.get("owner", "/api/memory/search/", {"q": "a", "limit": 0})
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "limit"


def test_the_throttle_is_the_apps_own(api: Api, settings: Any) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "THROTTLE_RATE": "2/min"}
    cache.clear()
    statuses = [api.get("owner", "/api/memory/tools/").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    assert api.get("teammate", "/api/memory/tools/").status_code == 200  # per user


def add_matters(memory: Office, count: int) -> None:
    """`count` more Nordwind matters led by the owner (bulk: no receivers), with map and summaries."""
    office, owner = memory.office, memory.people["owner"]
    nordwind = Engagement.objects.get(matter=memory.matters[ACQ], role="client").party
    made = Matter.objects.bulk_create(
        Matter(office=office, reference=f"2027/{i:03d}", name=f"Nordwind follow-on {i}", lead=owner,
               synopsis="Follow-on work for Nordwind Holdings AG.")
        for i in range(count)
    )
    castell = PartyFactory(office=office, name="Castell Components GmbH & Co. KG")
    Engagement.objects.bulk_create(Engagement(matter=m, party=nordwind, role="client") for m in made)
    Engagement.objects.bulk_create(Engagement(matter=m, party=castell, role="adverse") for m in made)
    Assignment.objects.bulk_create(Assignment(matter=m, attorney=memory.people["teammate"]) for m in made)
    services.graph_rebuild_firm(firm_id=office.pk)
    for matter in made:
        services.summarize_case(case_id=matter.pk)


def test_query_counts_do_not_grow_with_the_office(api: Api, django_assert_num_queries) -> None:
    requests = all_requests(api.memory)

    def run_all() -> dict[tuple[str, str], Any]:
        bodies = {}
        for persona in ("owner", "firm_admin", "outsider"):
            for endpoint, path, params in requests:
                hidden = persona == "outsider" and endpoint in ("neighbors", "brief")
                # A hidden node is one query: the lookup that finds it unreachable.
                expected = OVERHEAD + (1 if hidden else QUERIES[endpoint])
                with django_assert_num_queries(expected, info=f"{persona} {path}"):
                    response = api.get(persona, path, params)
                assert response.status_code == (404 if hidden else 200), (persona, path)
                bodies[(persona, path)] = response.json()
        return bodies

    before = run_all()
    add_matters(api.memory, 50)
    after = run_all()
    walk, brief = requests[1][1], requests[2][1]
    for persona in ("owner", "firm_admin"):
        assert before[(persona, walk)]["has_more"] is False and after[(persona, walk)]["has_more"] is True
        assert len(after[(persona, brief)]["cases"]) == conf.get("PAGE_DEFAULT") and after[(persona, brief)]["has_more"]
    assert after[("outsider", walk)] == before[("outsider", walk)]
