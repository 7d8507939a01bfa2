"""What an assistant trips over when it writes requests by hand: the slash, the auth word, the 405's code."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client as HttpClient

from accounts.models import Firm, User
from tests.api_support import NOT_FOUND, World, build_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(demo_firm: Firm, demo_users: dict[str, User], settings: Any) -> World:
    return build_world(demo_firm, demo_users, settings)


def test_every_endpoint_answers_without_its_trailing_slash(world: World) -> None:
    http = world.client("alice")
    node = http.get("/api/memory/nodes/", {"q": "Meridian Foods", "kind": "client"}).json()["results"][0]["id"]
    for path, params in (
        ("/api/memory/search", {"q": "lease"}),
        ("/api/memory/nodes", {"q": "northwind"}),
        ("/api/memory/conflicts", {"name": "Northwind Holdings"}),
        (f"/api/memory/nodes/{node}/brief", {}),
        (f"/api/memory/nodes/{node}/neighbors", {}),
        ("/api/memory/tools", {}),
    ):
        bare, slashed = http.get(path, params), http.get(path + "/", params)
        assert bare.status_code == slashed.status_code == 200, path
        assert bare.json() == slashed.json(), path
    # Without a slash the wall is the same: a node alice may not reach is the one 404.
    everything = world.client("dana").get("/api/memory/nodes/", {"q": "Brightline"}).json()["results"]
    visible = {r["id"] for r in http.get("/api/memory/nodes/", {"q": "Brightline"}).json()["results"]}
    hidden = [r["id"] for r in everything if r["id"] not in visible]
    assert hidden
    for node_id in hidden:
        assert http.get(f"/api/memory/nodes/{node_id}/brief").content == NOT_FOUND
    assert http.get("/api/memory/nope").content == NOT_FOUND


def test_the_schema_lists_each_endpoint_once_in_its_slashed_form(world: World) -> None:
    schema = world.client("alice").get("/api/schema/", {"format": "json"}).json()
    assert "/api/memory/search/" in schema["paths"]
    assert not [path for path in schema["paths"] if not path.endswith("/")]


def test_bearer_is_accepted_like_token(world: World) -> None:
    key = world.tokens["alice"]
    token = HttpClient(headers={"Authorization": f"Token {key}"}).get("/api/memory/search/", {"q": "lease"})
    bearer = HttpClient(headers={"Authorization": f"Bearer {key}"}).get("/api/memory/search/", {"q": "lease"})
    assert token.status_code == bearer.status_code == 200
    assert token.json() == bearer.json()
    wrong = HttpClient(headers={"Authorization": "Bearer not-a-key"}).get("/api/memory/search/", {"q": "lease"})
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "unauthenticated"
    assert wrong["WWW-Authenticate"] == "Token"
    basic = HttpClient(headers={"Authorization": f"Basic {key}"}).get("/api/memory/search/", {"q": "lease"})
    assert basic.status_code == 401


def test_a_wrong_method_has_its_own_code(world: World) -> None:
    response = world.client("alice").post("/api/memory/search/", data="{}", content_type="application/json")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_a_brief_can_say_each_thing_once(world: World) -> None:
    http = world.client("alice")
    case = http.get("/api/memory/nodes/", {"q": "2026-014", "kind": "case"}).json()["results"][0]["id"]
    full = http.get(f"/api/memory/nodes/{case}/brief/")
    lean = http.get(f"/api/memory/nodes/{case}/brief/", {"text": "false"})
    assert full.status_code == lean.status_code == 200
    body, notice = lean.json(), lean.json()["notice"]
    assert "text" not in body and "text" in full.json()
    assert {k: v for k, v in full.json().items() if k != "text"} == body  # the rest is the same
    # The notice once, the summary once.
    assert lean.content.decode().count(notice) == 1
    summary = body["cases"][0]["summary"]
    assert summary and lean.content.decode().count(json_string(summary)) == 1
    assert full.content.decode().count(notice) == 2  # `text` carries it too, as documented
    # Measured: the lean brief is well under the full one (bytes on the wire).
    assert len(lean.content) < 0.6 * len(full.content), (len(lean.content), len(full.content))
    assert http.get(f"/api/memory/nodes/{case}/brief/", {"text": "maybe"}).json()["error"]["field"] == "text"


def json_string(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)[1:-1]


def test_the_tools_payload_says_the_shared_discipline_once(world: World) -> None:
    from graph_memory.api.tools import DISCIPLINE

    response = world.client("alice").get("/api/memory/tools/")
    page = response.content.decode()
    assert page.count(json_string(DISCIPLINE)) == 1
    descriptions = [tool["function"]["description"] for tool in response.json()["tools"]]
    assert len(set(descriptions)) == len(descriptions)
    for sentence in {s for d in descriptions for s in d.split(". ") if len(s) > 60}:
        assert sum(sentence in d for d in descriptions) == 1, sentence
