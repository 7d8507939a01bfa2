"""One error shape for every 4xx: {"error": {"code", "message", "field"}}."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from graph_memory.access import NotFound


def error_body(code: str, message: str, field: str | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "field": field}}


def _first_field_error(detail: Any) -> tuple[str | None, str]:
    if isinstance(detail, dict):
        for field, value in detail.items():
            _, message = _first_field_error(value)
            return (None if field == "non_field_errors" else str(field)), message
    if isinstance(detail, list) and detail:
        return _first_field_error(detail[0])
    return None, str(detail)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, (NotFound, Http404, exceptions.NotFound)):
        return Response(error_body("not_found", "Not found."), status=status.HTTP_404_NOT_FOUND)
    if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
        response = drf_exception_handler(exc, context)
        code = status.HTTP_401_UNAUTHORIZED
        headers = {}
        if response is not None:
            code = response.status_code
            headers = {k: v for k, v in response.items() if k.lower() == "www-authenticate"}
        return Response(error_body("unauthenticated", str(exc.detail)), status=code, headers=headers)
    if isinstance(exc, exceptions.Throttled):
        response = drf_exception_handler(exc, context)
        headers = {k: v for k, v in response.items() if k.lower() == "retry-after"} if response else {}
        return Response(error_body("throttled", str(exc.detail)), status=status.HTTP_429_TOO_MANY_REQUESTS, headers=headers)
    if isinstance(exc, exceptions.ValidationError):
        field, message = _first_field_error(exc.detail)
        return Response(error_body("invalid", message, field), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, exceptions.PermissionDenied):
        # The assistant's endpoints have no "forbidden" answer: what a viewer
        # may not see does not exist for them.
        return Response(error_body("not_found", "Not found."), status=status.HTTP_404_NOT_FOUND)
    response = drf_exception_handler(exc, context)
    if response is not None and 400 <= response.status_code < 500:
        detail = response.data.get("detail", "Bad request.") if isinstance(response.data, dict) else response.data
        response.data = error_body("invalid", str(detail))
    return response
