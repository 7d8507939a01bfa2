"""Per-user throttling of the assistant's endpoints."""

from __future__ import annotations

from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle

SCOPE = "graph_memory"


class MemoryRateThrottle(ScopedRateThrottle):
    """DRF's ScopedRateThrottle (per signed-in user, counts in the default cache), reading its rate per request.

    DRF copies `DEFAULT_THROTTLE_RATES` onto the class when it is first
    imported, so a rate changed later (a test's settings override, a host's
    settings loaded after DRF) would be ignored; `api_settings` is reloaded on
    every settings change, so reading through it keeps the two in step. The
    counts live in the default cache because every worker process must agree
    on them (the reference settings use the database cache for that).
    """

    @property  # type: ignore[override]
    def THROTTLE_RATES(self) -> dict[str, str | None]:
        return api_settings.DEFAULT_THROTTLE_RATES
