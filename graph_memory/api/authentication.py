"""The API's token sign-in: `Authorization: Token <key>`, or `Bearer <key>` as most HTTP and OpenAI-style
clients send a key. The same tokens either way; only the word differs."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication, get_authorization_header
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
