"""The generated OpenAPI schema, checked by drf-spectacular and exercised by Schemathesis: no 5xx anywhere.

Schemathesis runs as a library: the schema the API serves is loaded with
`schemathesis.openapi.from_dict`, each operation's Hypothesis strategy
(valid and invalid input) drives requests through the Django WSGI app in
this test's transaction, with a demo user's token. Examples are bounded and
derandomized so the run is quick and repeatable.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.management import call_command
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from drf_spectacular.drainage import reset_generator_stats
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from accounts.models import Firm, User
from tests.api_support import C088, NW, World, build_world, node, set_throttle_rate

pytestmark = pytest.mark.django_db

EXAMPLES = 25
CHECKS = [not_a_server_error, response_schema_conformance]


def test_spectacular_validates_the_schema_without_warnings(tmp_path: Path) -> None:
    reset_generator_stats()  # count only this generation's warnings
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    text = out.read_text()
    assert text.startswith("openapi: 3.") and "/api/memory/tools/:" in text


@pytest.fixture
def world(demo_firm: Firm, demo_users: dict[str, User], settings: Any) -> World:
    return build_world(demo_firm, demo_users, settings)


@contextmanager
def requests_in_this_transaction() -> Iterator[None]:
    """As Django's test client does: a request must not close the test's connection mid-transaction."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def exercise(strategy: Any, *, app: WSGIHandler, headers: dict[str, str], statuses: set[int]) -> None:
    @given(case=strategy)
    @hypothesis_settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def run(case: schemathesis.Case) -> None:
        response = case.call(app=app, headers=headers)
        case.validate_response(response, checks=CHECKS)
        statuses.add(response.status_code)

    run()


def test_no_server_error_on_any_endpoint(world: World, settings: Any) -> None:
    set_throttle_rate(settings, "1000000/min")
    served = world.get("carol", "/api/schema/", {"format": "json"})
    assert served.status_code == 200
    schema = schemathesis.openapi.from_dict(served.json())
    app, headers = WSGIHandler(), {"Authorization": f"Token {world.tokens['carol']}"}
    # Random ids only ever reach the 404; a real one (a node carol reaches) walks the 200 paths too.
    meridian = str(node("client", "Meridian Foods Corp.").pk)
    lease = str(node("case", C088).pk)
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "NOTE_RATE": None}
    seen: dict[str, set[int]] = {}
    with requests_in_this_transaction():
        for result in schema.get_all_operations():
            operation = result.ok()
            statuses = seen.setdefault(operation.label, set())
            # Negative input needs a parameter to spoil (the session cookie the schema lists does not count).
            has_parameters = bool(list(operation.query) or list(operation.path_parameters))
            modes = [schemathesis.GenerationMode.POSITIVE]
            if has_parameters:
                modes.append(schemathesis.GenerationMode.NEGATIVE)
            for mode in modes:
                exercise(operation.as_strategy(generation_mode=mode), app=app, headers=headers, statuses=statuses)
            if "{node_id}" in operation.path:
                real = operation.as_strategy(path_parameters={"node_id": meridian})
                exercise(real, app=app, headers=headers, statuses=statuses)
            if "{case_id}" in operation.path:  # a case carol may open, and a source its summary cites
                known = {"case_id": lease, "source_id": "case:header"}
                given_ids = {k: v for k, v in known.items() if "{" + k + "}" in operation.path}
                exercise(operation.as_strategy(path_parameters=given_ids), app=app, headers=headers, statuses=statuses)
    # Every operation of the API was exercised, and every one answered both well and badly formed input.
    assert set(seen) == {
        "GET /api/memory/nodes/",
        "GET /api/memory/nodes/{node_id}/neighbors/",
        "GET /api/memory/nodes/{node_id}/brief/",
        "GET /api/memory/search/",
        "GET /api/memory/conflicts/",
        "GET /api/memory/tools/",
        "GET /api/memory/index/",
        "GET /api/memory/cases/{case_id}/sources/{source_id}/",
        "POST /api/memory/cases/{case_id}/notes/",
        "GET /api/memory/cases/{case_id}/ask/",
    }
    for label, statuses in seen.items():
        assert statuses & {200, 201}, label
        assert max(statuses) < 500, label
    assert node("client", NW)  # the demo firm was there to be leaked, and the wall held (tests/api/test_endpoints.py)
