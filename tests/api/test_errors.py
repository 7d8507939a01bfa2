"""One error shape for every 4xx of the assistant's API: {"error": {"code", "message", "field"}}."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.test import Client as HttpClient

from accounts.models import Firm, User
from graph_memory import conf, services
from graph_memory.api.errors import ERROR_CODES
from graph_memory.models import Node
from tests.api_support import C014, NOT_FOUND, World, build_world, node, set_throttle_rate
from tests.cast import demo_cast
from tests.conftest import Personas

pytestmark = pytest.mark.django_db

CODES = set(ERROR_CODES)
# Headers a client could read meaning into; `Date` and the like may differ.
COMPARED_HEADERS = ("Content-Type", "Allow", "Vary", "WWW-Authenticate", "Retry-After")


@pytest.fixture
def world(demo_firm: Firm, demo_users: dict[str, User], settings: Any) -> World:
    return build_world(demo_firm, demo_users, settings)


def error_of(response: Any, status: int) -> dict[str, Any]:
    """The error object, after checking the status and that the body is exactly the one shape."""
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "field"}
    assert body["error"]["code"] in CODES and body["error"]["message"]
    return body["error"]


def fingerprint(response: Any) -> tuple[Any, ...]:
    return (response.status_code, response.content, *(response.get(h) for h in COMPARED_HEADERS))


def test_no_token_and_bad_tokens_are_401(world: World) -> None:
    for path in ("/api/memory/nodes/", "/api/memory/tools/", "/api/memory/nodes/x/unknown/", "/api/schema/"):
        response = HttpClient().get(path, {"q": "northwind"})
        assert error_of(response, 401) == {
            "code": "unauthenticated",
            "message": "Authentication credentials were not provided.",
            "field": None,
        }
        assert response["WWW-Authenticate"] == "Token"
    # `Bearer <key>` is accepted like `Token <key>` (tests/api/test_friction.py); other schemes are not.
    for header in ("Token not-a-token", "Token ", "Token a b", "Bearer a b", f"Basic {world.tokens['alice']}"):
        response = HttpClient(headers={"Authorization": header}).get("/api/memory/nodes/", {"q": "northwind"})
        assert error_of(response, 401)["code"] == "unauthenticated", header
    alice = world.users["alice"]
    alice.is_active = False
    alice.save(update_fields=["is_active"])
    response = world.get("alice", "/api/memory/nodes/", {"q": "northwind"})
    assert error_of(response, 401) == {"code": "unauthenticated", "message": "User inactive or deleted.", "field": None}


def test_hidden_unknown_and_malformed_ids_are_one_answer(world: World, personas: Personas) -> None:
    services.graph_rebuild_firm(firm_id=personas.firm.pk)
    cast = demo_cast(world.users)
    hidden = node("client", "Northwind Holdings, Inc.").pk  # the outsider (bob) may open no Northwind client case
    other_firm = Node.objects.filter(firm=personas.firm).first().pk
    ids = [
        hidden,
        uuid.uuid4(),
        other_firm,
        "abc",
        "1",
        "-1",
        "0" * 500,
        "%20",
        "%00",
        "null",
        str(hidden).upper() + "0",
    ]
    answers = set()
    for persona in (cast.outsider.username, cast.other_firm_admin.username):
        for node_id in ids:
            for tail in ("neighbors/", "brief/", "neighbors/?limit=5&kind=case", "brief/?limit=1"):
                answers.add(fingerprint(world.get(persona, f"/api/memory/nodes/{node_id}/{tail}")))
        for path in (
            "/api/memory/nodes//neighbors/",
            "/api/memory/nodes/a/b/brief/",
            "/api/memory/nope/",
            "/api/memory/nodes/x/unknown/",
        ):
            answers.add(fingerprint(world.get(persona, path)))
    assert {a[:2] for a in answers} == {(404, NOT_FOUND)}
    # Among real endpoints every header agrees too; an unknown path differs only in what its Allow header lists.
    assert len({a for a in answers if a[3] == "GET, HEAD"}) == 1


BAD_INPUT = [
    ("/api/memory/nodes/", {"q": "northwind", "kind": "document"}, "kind"),
    ("NODE/neighbors/", {"kind": "Case"}, "kind"),
    ("/api/memory/nodes/", {"q": "northwind", "limit": "0"}, "limit"),
    ("/api/memory/nodes/", {"q": "northwind", "limit": "101"}, "limit"),
    ("/api/memory/nodes/", {"q": "northwind", "limit": "ten"}, "limit"),
    ("/api/memory/nodes/", {"q": "northwind", "limit": "-1"}, "limit"),
    ("/api/memory/nodes/", {"q": "northwind", "limit": "1e3"}, "limit"),
    ("NODE/neighbors/", {"limit": "0"}, "limit"),
    ("NODE/neighbors/", {"limit": "101"}, "limit"),
    ("NODE/neighbors/", {"limit": "ten"}, "limit"),
    ("NODE/brief/", {"limit": "0"}, "limit"),
    ("NODE/brief/", {"limit": "101"}, "limit"),
    ("NODE/brief/", {"limit": "2.5"}, "limit"),
    ("/api/memory/search/", {"q": "lease", "limit": "0"}, "limit"),
    ("/api/memory/search/", {"q": "lease", "limit": "101"}, "limit"),
    ("/api/memory/search/", {"q": "lease", "limit": "many"}, "limit"),
    ("/api/memory/nodes/", {}, "q"),
    ("/api/memory/nodes/", {"q": ""}, "q"),
    ("/api/memory/nodes/", {"q": "   "}, "q"),
    ("/api/memory/nodes/", {"q": "x" * 10_000}, "q"),
    ("/api/memory/nodes/", {"q": "north\x00wind"}, "q"),
    ("/api/memory/search/", {}, "q"),
    ("/api/memory/search/", {"q": ""}, "q"),
    ("/api/memory/search/", {"q": "x" * 10_000}, "q"),
    ("/api/memory/conflicts/", {}, "name"),
    ("/api/memory/conflicts/", {"name": ""}, "name"),
    ("/api/memory/conflicts/", {"name": "x" * 10_000}, "name"),
]


def test_bad_input_is_a_400_naming_the_field(world: World) -> None:
    case_path = f"/api/memory/nodes/{node('case', C014).pk}"
    for path, params, field in BAD_INPUT:
        error = error_of(world.get("dana", path.replace("NODE", case_path), params), 400)
        assert error["code"] == "invalid" and error["field"] == field, (path, params, error)
        # Plain words, without echoing the input back.
        assert len(error["message"]) < 200, (path, params)


def test_limit_at_the_cap_is_accepted(world: World) -> None:
    cap = str(conf.get("PAGE_MAX"))
    assert world.get("dana", "/api/memory/nodes/", {"q": "northwind", "limit": cap}).status_code == 200
    assert world.get("dana", "/api/memory/search/", {"q": "lease", "limit": cap}).status_code == 200


def test_other_methods_are_405(world: World) -> None:
    http = world.client("dana")
    for method in ("post", "put", "patch", "delete", "options"):
        for path in ("/api/memory/nodes/", "/api/memory/tools/", "/api/memory/search/"):
            response = getattr(http, method)(path, data="{}", content_type="application/json")
            error = error_of(response, 405)
            assert error == {
                "code": "method_not_allowed",
                "message": f'Method "{method.upper()}" not allowed.',
                "field": None,
            }
            assert response["Allow"] == "GET, HEAD"
    # A browser session without a CSRF token gets the same answer, not a CSRF failure.
    session = HttpClient(enforce_csrf_checks=True)
    session.force_login(world.users["dana"])
    assert error_of(session.post("/api/memory/nodes/", {"q": "x"}), 405)["code"] == "method_not_allowed"
    # Any method on a path that is no endpoint: the one 404.
    assert session.post("/api/memory/nodes/x/unknown/").content == NOT_FOUND
    assert http.delete("/api/memory/nope/").content == NOT_FOUND


def test_throttled_per_user_with_retry_after(world: World, settings: Any) -> None:
    set_throttle_rate(settings, "3/min")
    # One count per user across every endpoint of the API.
    paths = ["/api/memory/tools/", "/api/memory/nodes/?q=northwind", "/api/memory/conflicts/?name=Northwind"]
    assert [world.get("alice", p).status_code for p in paths] == [200, 200, 200]
    response = world.get("alice", "/api/memory/search/?q=lease")
    assert error_of(response, 429)["code"] == "throttled"
    assert 0 < int(response["Retry-After"]) <= 60
    assert "throttled" in response.json()["error"]["message"]
    # A session for the same user shares the count; another user has their own.
    session = HttpClient()
    session.force_login(world.users["alice"])
    assert session.get("/api/memory/tools/").status_code == 429
    assert world.get("bob", "/api/memory/tools/").status_code == 200
    # Anonymous callers are told to authenticate, never throttled by someone else's count.
    assert error_of(world.get(None, "/api/memory/tools/"), 401)["code"] == "unauthenticated"


def test_content_negotiation_failures_are_in_the_shape(world: World) -> None:
    http = world.client("dana")
    response = http.get("/api/memory/tools/", headers={"Accept": "application/xml"})
    assert error_of(response, 406) == {
        "code": "invalid",
        "message": "Could not satisfy the request Accept header.",
        "field": None,
    }
    assert http.get("/api/memory/tools/", {"format": "xml"}).content == NOT_FOUND
    head = http.head("/api/memory/tools/")
    assert head.status_code == 200 and head["Content-Type"] == "application/json"


def test_every_route_is_authenticated_throttled_and_json() -> None:
    """A guard for endpoints added later: each one inherits the API's base view, or it would answer in its own way."""
    from rest_framework.authentication import TokenAuthentication

    from graph_memory import urls
    from graph_memory.api import urls as api_urls
    from graph_memory.api.errors import exception_handler
    from graph_memory.api.throttling import MemoryRateThrottle
    from graph_memory.api.views import MemoryApi, UnknownPathApi

    views = [p.callback.view_class for p in api_urls.urlpatterns]
    assert len(views) >= 6 and urls.urlpatterns[-1].callback.view_class is UnknownPathApi
    for view in [*views, UnknownPathApi]:
        assert issubclass(view, MemoryApi), view
        assert view.throttle_classes == [MemoryRateThrottle], view
        assert view().get_exception_handler() is exception_handler, view
        # A token scheme first: its WWW-Authenticate makes a 401.
        assert issubclass(view.authentication_classes[0], TokenAuthentication), view
