"""The OpenAPI schema, the interactive docs page and the load balancer's health check."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from django.test import Client as HttpClient
from rest_framework.authtoken.models import Token

from accounts.models import User
from graph_memory.api import errors

pytestmark = pytest.mark.django_db


def test_schema_requires_login(personas) -> None:
    response = HttpClient().get("/api/schema/", {"format": "json"})
    assert response.status_code == 401
    assert response.json() == {
        "error": {"code": "unauthenticated", "message": "Authentication credentials were not provided.", "field": None}
    }
    bad = HttpClient().get("/api/schema/", {"format": "json"}, HTTP_AUTHORIZATION="Token not-a-token")
    assert bad.status_code == 401
    assert bad.json()["error"]["code"] == "unauthenticated"


def test_schema_for_a_signed_in_user(personas) -> None:
    token = Token.objects.create(user=personas.owner)
    response = HttpClient().get("/api/schema/", {"format": "json"}, HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert schema["info"]["title"] == "Graph Memory Layer — assistant API"
    assert "verify anything that matters" in schema["info"]["description"]
    # The schema documents the assistant's API, nothing else of the site.
    assert all(path.startswith("/api/memory/") for path in schema["paths"])
    session = HttpClient()
    session.force_login(personas.owner)
    yaml = session.get("/api/schema/")
    assert yaml.status_code == 200
    assert yaml.content.startswith(b"openapi: 3.")


def test_docs_page_requires_login_and_serves_its_assets_locally(personas) -> None:
    anonymous = HttpClient().get("/api/docs/")
    assert anonymous.status_code == 302
    assert anonymous["Location"] == "/login/?next=/api/docs/"  # the site's sign-in, open to lawyers
    http = HttpClient()
    http.force_login(personas.owner)
    response = http.get("/api/docs/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in page
    assert "/api/schema/" in page
    assert "cdn." not in page and "unpkg" not in page


def test_healthz_answers_ok_and_carries_no_data(personas, django_assert_num_queries) -> None:
    with django_assert_num_queries(1):
        response = HttpClient().get("/healthz")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"status": "ok"}
    assert User.objects.exists()  # there is data to leak, and none was


def _codes_written_in_the_app() -> set[str]:
    """Every error code a line of graph_memory answers with: `error_body("<code>", ...)` and `code = "<code>"`."""
    codes = set()
    for path in Path(errors.__file__).resolve().parents[1].rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("error_body") and node.args:
                if isinstance(node.args[0], ast.Constant):
                    codes.add(node.args[0].value)
            if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["code"]:
                if isinstance(node.value, ast.Constant):
                    codes.add(node.value.value)
    return codes


def test_the_schema_the_code_and_the_docs_list_the_same_error_codes(personas) -> None:
    assert _codes_written_in_the_app() == set(errors.ERROR_CODES)
    token = Token.objects.create(user=personas.owner)
    schema = HttpClient().get("/api/schema/", {"format": "json"}, HTTP_AUTHORIZATION=f"Token {token.key}").json()
    [enum] = [s["enum"] for s in schema["components"]["schemas"].values() if "not_found" in s.get("enum", [])]
    assert enum == list(errors.ERROR_CODES)
    # The assistant developers' page lists each code once, in its table of codes and statuses.
    page = (Path(__file__).resolve().parents[2] / "docs" / "assistant-developers.md").read_text()
    listed = re.findall(r"^\| `([a-z_]+)` \| \d{3} \|", page, flags=re.M)
    assert sorted(listed) == sorted(errors.ERROR_CODES)
    with pytest.raises(ValueError, match="'forbidden' is not one of the API's error codes"):
        errors.error_body("forbidden", "no")
