"""The API's token sign-in: `Authorization: Token <key>`, or `Bearer <key>` as most HTTP and OpenAI-style
clients send a key. The same tokens either way; only the word differs."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from drf_spectacular.authentication import SessionScheme
from rest_framework import exceptions
from rest_framework.authentication import SessionAuthentication, TokenAuthentication, get_authorization_header
from rest_framework.request import Request

KEYWORDS = (b"token", b"bearer")


class TokenOrBearerAuthentication(TokenAuthentication):
    # WWW-Authenticate still names "Token", the documented form.
    keyword = "Token"

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        # DRF's own parsing, with a second accepted keyword (its class takes exactly one).
        auth = get_authorization_header(request).split()
        if not auth or auth[0].lower() not in KEYWORDS:
            return None
        if len(auth) == 1:
            raise exceptions.AuthenticationFailed("Invalid token header. No credentials provided.")
        if len(auth) > 2:
            raise exceptions.AuthenticationFailed("Invalid token header. Token string should not contain spaces.")
        try:
            key = auth[1].decode()
        except UnicodeError:
            raise exceptions.AuthenticationFailed(
                "Invalid token header. Token string should not contain invalid characters."
            ) from None
        return self.authenticate_credentials(key)


class CsrfFailed(exceptions.PermissionDenied):
    """A signed-in browser session's unsafe request without a valid CSRF token. Checked before any case is
    looked up, so its 403 says nothing about what was asked for; not the 404 of a hidden case."""


class CsrfCheckedSessionAuthentication(SessionAuthentication):
    def enforce_csrf(self, request: Request) -> None:
        try:
            super().enforce_csrf(request)
        except exceptions.PermissionDenied as exc:
            raise CsrfFailed(exc.detail) from None


class CsrfCheckedSessionScheme(SessionScheme):
    """The schema's cookie sign-in, for the subclass too (drf-spectacular matches the session class exactly)."""

    target_class = "graph_memory.api.authentication.CsrfCheckedSessionAuthentication"


def api_token(user: Any, *, rotate: bool = False) -> str:
    """The key `user`'s assistant sends (`Authorization: Token <key>`): the same one each time, or with
    `rotate` a new one, the old one refused from then on. Needs `rest_framework.authtoken` installed."""
    # Imported here: the model exists only in hosts that install DRF's authtoken app, and this module is
    # imported by every API request's authentication, token or not.
    from rest_framework.authtoken.models import Token

    with transaction.atomic():
        if rotate:
            Token.objects.filter(user=user).delete()
        token, _ = Token.objects.get_or_create(user=user)
    return str(token.key)
