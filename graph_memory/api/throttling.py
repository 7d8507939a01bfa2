"""Per-user throttling of the assistant's endpoints, at the rate GRAPH_MEMORY["THROTTLE_RATE"]."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from graph_memory import conf

SCOPE = "graph_memory"


class MemoryRateThrottle(SimpleRateThrottle):
    """One count per signed-in user across every endpoint, kept in the default cache.

    The rate is the app's own setting, read when each request builds its
    throttle, not the host's REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] (which
    DRF copies onto its throttle classes once, at import). The counts live in
    the default cache because every worker process must agree on them (the
    reference settings use the database cache for that; a system check makes
    sure its table exists). A rate of None turns throttling off.
    """

    scope = SCOPE

    def get_rate(self) -> str | None:
        return conf.get("THROTTLE_RATE")

    def get_cache_key(self, request: Request, view: Any) -> str:
        # Authentication and permission run first, so a caller reaching here is
        # signed in; the address is only a fallback for a view that allows anyone.
        user = request.user
        ident = user.pk if user is not None and user.is_authenticated else self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}
