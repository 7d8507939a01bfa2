"""Every memory answer is per viewer: `Cache-Control: private, no-store` and `Vary: Authorization, Cookie`.

The routes come from the API's own URLconf, so an endpoint added later is
covered without touching this file. Each route is asked anonymously (401), by
a signed-in viewer (200, or 404 for a hidden or unknown id), with a bad
parameter (400), with a method it does not take (405) and past the throttle
(429); each answer must carry the policy.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client as HttpClient
from django.test import RequestFactory
from django.urls import URLPattern, URLResolver
from rest_framework import serializers

from accounts.models import Firm, User
from graph_memory.api import urls as api_urls
from graph_memory.api.views import MemoryApi, MemoryWiring
from tests.api_support import C014, World, build_world, node, set_throttle_rate

pytestmark = pytest.mark.django_db

PREFIX = "/api/memory/"
POLICY = "private, no-store"


@pytest.fixture
def world(demo_firm: Firm, demo_users: dict[str, User], settings: Any) -> World:
    return build_world(demo_firm, demo_users, settings)


def _routes(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _routes(entry.url_patterns, prefix + str(entry.pattern))
        else:
            yield prefix + str(entry.pattern), entry


ROUTES = list(_routes(api_urls.urlpatterns))


class _Notice(serializers.Serializer):
    notice = serializers.CharField()


def _path(route: str, value: str) -> str:
    """The route with every `<converter:name>` filled with `value`."""
    out, rest = "", route
    while "<" in rest:
        head, _, tail = rest.partition("<")
        _, _, rest = tail.partition(">")
        out += head + value
    return PREFIX + out + rest


def assert_policy(response: Any, expected: str = POLICY) -> None:
    assert response["Cache-Control"] == expected, (response.status_code, response.get("Cache-Control"))
    vary = {v.strip().lower() for v in response.get("Vary", "").split(",")}
    assert {"authorization", "cookie"} <= vary, response.get("Vary")


def _methods(pattern: URLPattern) -> list[str]:
    view = getattr(pattern.callback, "view_class", None)
    return [m for m in getattr(view, "http_method_names", ["get"]) if m in ("get", "post")]


def _policy_of(pattern: URLPattern) -> str:
    """The view's declared policy: the default, or a revalidated one (an ETag) that is still private."""
    policy = getattr(pattern.callback.view_class, "cache_control", None)
    assert policy in (POLICY, "private", "private, no-cache"), policy
    return policy


def _ask(http: HttpClient, method: str, path: str, params: dict[str, str]) -> Any:
    if method == "post":  # the API reads JSON bodies only, and a note's body its own fields only (strict bodies)
        extra = {k: v for k, v in params.items() if k not in ("q", "name")}
        return http.post(path, {"title": "Cache check", "text": "A note.", **extra}, content_type="application/json")
    return http.get(path, params)


def test_the_urlconf_is_walked() -> None:
    assert len(ROUTES) >= 6
    assert {"nodes/", "search/", "conflicts/", "tools/"} <= {route for route, _ in ROUTES}


@pytest.mark.parametrize(("route", "pattern"), ROUTES, ids=[route for route, _ in ROUTES])
def test_every_endpoint_answers_with_the_policy(world: World, settings: Any, route: str, pattern: URLPattern) -> None:
    visible = str(node("case", C014).pk)  # alice's
    policy = _policy_of(pattern)
    statuses: set[int] = set()
    for method in _methods(pattern):
        for value in (visible, str(uuid.uuid4()), "not-an-id"):
            path = _path(route, value)
            params = {"q": "Northwind", "name": "Northwind"}
            for persona in (None, "alice", "bob"):
                response = _ask(world.client(persona), method, path, params)
                assert_policy(response, policy)
                statuses.add(response.status_code)
            bad = _ask(world.client("alice"), method, path, {"q": "Northwind", "name": "x", "limit": "0"})
            assert_policy(bad, policy)
            statuses.add(bad.status_code)
        wrong = world.client("alice").delete(_path(route, visible))
        assert wrong.status_code == 405
        assert_policy(wrong, policy)
    assert 401 in statuses
    assert statuses & {200, 201, 404}
    # Past the throttle: one request allowed, the next is a 429.
    set_throttle_rate(settings, "1/min")
    method = _methods(pattern)[0]
    answers = [_ask(world.client("carol"), method, _path(route, visible), {"q": "x", "name": "x"}) for _ in range(2)]
    assert answers[-1].status_code == 429
    for response in answers:
        assert_policy(response, policy)


def test_errors_outside_the_routes_and_the_schema_carry_it(world: World) -> None:
    for persona in (None, "alice"):
        unknown = world.client(persona).get(PREFIX + "no/such/path/")
        assert unknown.status_code in (401, 404)
        assert_policy(unknown)
        schema = world.client(persona).get("/api/schema/")
        assert schema.status_code in (200, 401)
        assert_policy(schema)


def test_a_session_answer_carries_it(world: World) -> None:
    browser = HttpClient()
    browser.force_login(world.users["alice"])
    response = browser.get(PREFIX + "nodes/", {"q": "Northwind"})
    assert response.status_code == 200
    assert_policy(response)


def test_the_policy_is_a_per_view_attribute_and_a_view_may_relax_it(world: World) -> None:
    """A later endpoint with an ETag may answer `private` alone; Vary still holds."""
    assert MemoryWiring.cache_control == POLICY

    class RevalidatedApi(MemoryApi):
        cache_control = "private"

        def get(self, request: Any) -> Any:
            return self.respond({}, _Notice)

    request = RequestFactory().get("/x/", HTTP_AUTHORIZATION=f"Token {world.tokens['alice']}")
    response = RevalidatedApi.as_view()(request)
    assert response.status_code == 200
    assert_policy(response, "private")
    anonymous = RevalidatedApi.as_view()(RequestFactory().get("/x/"))
    assert anonymous.status_code == 401
    assert_policy(anonymous, "private")

