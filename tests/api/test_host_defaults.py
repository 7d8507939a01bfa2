"""The API carries its own wiring: a host whose REST_FRAMEWORK defaults are hostile changes none of its answers.

The host here lets anyone in (AllowAny), authenticates only by HTTP Basic,
answers errors with its own handler, renders HTML, versions by Accept header,
has no throttle rates and no unauthenticated user object. The memory must
still ask for a token, answer the one error shape, and throttle at its own
GRAPH_MEMORY["THROTTLE_RATE"].
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client as HttpClient
from django.test import RequestFactory, override_settings
from rest_framework import exceptions
from rest_framework.renderers import BrowsableAPIRenderer
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from accounts.models import Firm, User
from tests.api.test_errors import error_of
from tests.api_support import C014, NOT_FOUND, World, build_world, node, set_throttle_rate

pytestmark = pytest.mark.django_db

HOST_STATUS = 418


def host_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """The host's own handler: a shape (and status) the memory must never answer with."""
    return Response({"detail": "the host's handler"}, status=HOST_STATUS)


HOSTILE = {
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.BasicAuthentication"],
    "EXCEPTION_HANDLER": "tests.api.test_host_defaults.host_exception_handler",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.BrowsableAPIRenderer"],
    "DEFAULT_THROTTLE_CLASSES": [],
    "DEFAULT_VERSIONING_CLASS": "rest_framework.versioning.AcceptHeaderVersioning",
    "ALLOWED_VERSIONS": ["2"],
    "UNAUTHENTICATED_USER": None,
}
# What DRF copies from its settings onto classes when first imported (rest_framework/views.py,
# throttling.py): override_settings reloads `api_settings` but not these.
IMPORT_TIME = {
    (APIView, "renderer_classes"): "DEFAULT_RENDERER_CLASSES",
    (APIView, "parser_classes"): "DEFAULT_PARSER_CLASSES",
    (APIView, "authentication_classes"): "DEFAULT_AUTHENTICATION_CLASSES",
    (APIView, "throttle_classes"): "DEFAULT_THROTTLE_CLASSES",
    (APIView, "permission_classes"): "DEFAULT_PERMISSION_CLASSES",
    (APIView, "content_negotiation_class"): "DEFAULT_CONTENT_NEGOTIATION_CLASS",
    (APIView, "metadata_class"): "DEFAULT_METADATA_CLASS",
    (APIView, "versioning_class"): "DEFAULT_VERSIONING_CLASS",
    (SimpleRateThrottle, "THROTTLE_RATES"): "DEFAULT_THROTTLE_RATES",
}


@pytest.fixture
def world(demo_firm: Firm, demo_users: dict[str, User], settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    built = build_world(demo_firm, demo_users, settings)
    # DRF's own receiver reloads api_settings on this override (rest_framework/settings.py);
    # the class attributes are set as if DRF had been imported under the host's settings.
    with override_settings(REST_FRAMEWORK=HOSTILE):
        assert api_settings.EXCEPTION_HANDLER is host_exception_handler
        for (cls, attr), setting in IMPORT_TIME.items():
            monkeypatch.setattr(cls, attr, getattr(api_settings, setting))
        yield built


def test_the_host_really_is_hostile(world: World) -> None:
    """Guards the fixture: a plain DRF view of this host lets anyone in, renders HTML and answers its own errors."""
    seen: list[Any] = []

    class HostView(APIView):
        def get(self, request: Any) -> Response:
            seen.append(request.user)
            raise exceptions.NotFound

    response = HostView.as_view()(RequestFactory().get("/", HTTP_ACCEPT="text/html; version=2"))
    assert seen == [None]  # AllowAny, and no unauthenticated user object
    assert response.status_code == HOST_STATUS and response.data == {"detail": "the host's handler"}
    assert isinstance(response.accepted_renderer, BrowsableAPIRenderer)


def test_no_token_is_401_and_host_authentication_does_not_count(world: World) -> None:
    alice = world.users["alice"]
    alice.set_password("correct horse")
    alice.save(update_fields=["password"])
    basic = "Basic " + base64.b64encode(b"alice:correct horse").decode()
    for path in ("/api/memory/nodes/?q=northwind", "/api/memory/tools/", "/api/memory/nope/", "/api/schema/"):
        for http in (HttpClient(), HttpClient(headers={"Authorization": basic})):
            response = http.get(path)
            assert error_of(response, 401) == {
                "code": "unauthenticated",
                "message": "Authentication credentials were not provided.",
                "field": None,
            }, path
            assert response["WWW-Authenticate"] == "Token"


def test_a_token_gets_json_with_the_notice(world: World) -> None:
    response = world.get("alice", "/api/memory/nodes/", {"q": "northwind"})
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    body = response.json()
    assert body["results"] and "not authoritative" in body["notice"]
    # The host's HTML renderer is not among the memory's: asking for it is a 406 in the shape.
    html = world.client("alice").get("/api/memory/tools/", headers={"Accept": "text/html"})
    assert error_of(html, 406)["code"] == "invalid"


def test_hidden_and_unknown_ids_are_the_one_404(world: World) -> None:
    hidden = node("client", "Northwind Holdings, Inc.").pk  # bob may open no Northwind client case
    paths = [f"/api/memory/nodes/{i}/{tail}" for i in (hidden, uuid.uuid4(), "abc") for tail in ("neighbors/", "brief/")]
    answers = {(r.status_code, r.content) for r in (world.get("bob", p) for p in [*paths, "/api/memory/nope/"])}
    assert answers == {(404, NOT_FOUND)}
    assert error_of(world.get("bob", paths[0]), 404)["code"] == "not_found"


def test_a_bad_limit_is_a_400_naming_it(world: World) -> None:
    case = node("case", C014).pk
    for path in ("/api/memory/nodes/?q=northwind&limit=0", f"/api/memory/nodes/{case}/neighbors/?limit=101"):
        error = error_of(world.get("dana", path), 400)
        assert error["code"] == "invalid" and error["field"] == "limit", path


def test_throttled_at_the_apps_own_rate(world: World, settings: Any) -> None:
    set_throttle_rate(settings, "2/min")
    assert [world.get("alice", "/api/memory/tools/").status_code for _ in range(2)] == [200, 200]
    response = world.get("alice", "/api/memory/tools/")
    assert error_of(response, 429)["code"] == "throttled"
    assert 0 < int(response["Retry-After"]) <= 60
    assert world.get("bob", "/api/memory/tools/").status_code == 200


def test_the_environment_variable_sets_the_rate(world: World, settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    set_throttle_rate(settings, "1000/min")
    monkeypatch.setenv("GRAPH_MEMORY_THROTTLE_RATE", "1/min")
    assert world.get("carol", "/api/memory/tools/").status_code == 200
    assert error_of(world.get("carol", "/api/memory/tools/"), 429)["code"] == "throttled"
