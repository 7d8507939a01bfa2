"""One error shape for every 4xx: {"error": {"code", "message", "field"}}.

DRF's own errors (validation, authentication, throttling, method, media
type, content negotiation) all come through `exception_handler`, and are
always rendered as JSON, whatever format the request negotiated (the schema
endpoint would otherwise answer its 401 in YAML). Paths under the API that
match no endpoint reach `views.UnknownPathApi`, so they too answer here.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from graph_memory.adapter import NotSupported
from graph_memory.api.authentication import CsrfFailed
from graph_memory.wall.access import NotFound

# Headers DRF's own handler sets that a client needs: how to authenticate, when to retry.
_KEPT_HEADERS = {"www-authenticate", "retry-after"}
# Every `code` an error of the API (and of its MCP tools) may carry: the OpenAPI schema's enum. The README
# and spec/api.md list the same; tests/api/test_schema.py compares them with every code written here.
ERROR_CODES = (
    "not_found",  # 404: hidden and absent alike
    "invalid",  # 400 (a field named), 406, 413 (a body over DATA_UPLOAD_MAX_MEMORY_SIZE), 415
    "unauthenticated",  # 401
    "throttled",  # 429, with Retry-After
    "method_not_allowed",  # 405: the endpoint exists, not for that method
    "not_supported",  # 501: the host's adapter lacks an optional ability
    "csrf_failed",  # 403: a session's unsafe request without its CSRF token, before the wall
    "crosses_wall",  # 409: a note carrying facts of a case outside the target case's audience (issue 31)
    "memory_excluded",  # 409: a note filed into a case excluded from the memory (consent, issue 31)
    "unavailable",  # 503: the answer's served-ledger row could not be written, so no answer is given (issue 31)
)


def error_body(code: str, message: str, field: str | None = None) -> dict[str, Any]:
    if code not in ERROR_CODES:
        raise ValueError(f"{code!r} is not one of the API's error codes (ERROR_CODES)")
    return {"error": {"code": code, "message": message, "field": field}}


def _first_field_error(detail: Any) -> tuple[str | None, str]:
    if isinstance(detail, dict):
        for field, value in detail.items():
            _, message = _first_field_error(value)
            return (None if field == "non_field_errors" else str(field)), message
    if isinstance(detail, list) and detail:
        return _first_field_error(detail[0])
    return None, str(detail)


def _error(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, CsrfFailed):
        # Before the wall: the session's request itself is refused, whatever it names.
        message = f"{exc.detail} Send the csrftoken cookie's value in an X-CSRFToken header, or use a token."
        return Response(error_body("csrf_failed", message), status=status.HTTP_403_FORBIDDEN)
    if isinstance(exc, (NotFound, Http404, exceptions.NotFound, exceptions.PermissionDenied)):
        # The assistant's endpoints have no "forbidden" answer: what a viewer
        # may not see does not exist for them, with the one body for both.
        return Response(error_body("not_found", NotFound.message), status=status.HTTP_404_NOT_FOUND)
    if isinstance(exc, RequestDataTooBig):
        # Raised by Django as DRF reads the body, after sign-in and before the case is looked up;
        # left alone, Django would answer its HTML 400.
        message = f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes."
        return Response(error_body("invalid", message), status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    if isinstance(exc, NotSupported):
        # The host's adapter lacks an optional ability (notes, single records): the same answer
        # whatever the case or id asked about, checked before any of them is looked up.
        message = "This firm's system does not support this."
        return Response(error_body("not_supported", message), status=status.HTTP_501_NOT_IMPLEMENTED)
    if isinstance(exc, exceptions.ValidationError):
        field, message = _first_field_error(exc.detail)
        return Response(error_body("invalid", message, field), status=status.HTTP_400_BAD_REQUEST)
    response = drf_exception_handler(exc, context)
    if response is None or not 400 <= response.status_code < 500:
        return response  # not ours to reshape: Django's 500 handling takes over
    headers = {k: v for k, v in response.items() if k.lower() in _KEPT_HEADERS}
    if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
        code = "unauthenticated"
    elif isinstance(exc, exceptions.Throttled):
        code = "throttled"
    elif isinstance(exc, exceptions.MethodNotAllowed):
        code = "method_not_allowed"  # a request that can never work here, unlike a bad value
    else:  # unsupported media type, parse error, not acceptable
        code = "invalid"
    message = str(getattr(exc, "detail", "")) or response.status_text
    return Response(error_body(code, message), status=response.status_code, headers=headers)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's EXCEPTION_HANDLER: every 4xx in the one shape, as JSON."""
    response = _error(exc, context)
    request = context.get("request")
    if response is not None and request is not None:
        request.accepted_renderer = JSONRenderer()
        request.accepted_media_type = JSONRenderer.media_type
    return response
