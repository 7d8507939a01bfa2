"""How the memory names and dates its rows for people (object names, admin pages).

Names, not ids: a row is named by the case's reference and title, the firm's
name, the party's name. Times: one zone everywhere in admin, the firm's, and
always labelled ("2026-12-01 03:31 EST"). The API stays in UTC with an
explicit offset; nothing here is used by it.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from typing import Any

from django.apps import apps
from django.utils import timezone

from graph_memory.adapter import get_adapter

TIME_FORMAT = "%Y-%m-%d %H:%M %Z"


def firm_timezone(firm: Any) -> dt.tzinfo:
    """The firm's time zone (the adapter names it); UTC when it names none or an unknown one."""
    try:
        return zoneinfo.ZoneInfo(get_adapter().firm_timezone(firm) or "UTC")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return dt.UTC


def local_time(value: dt.datetime | None, firm: Any) -> str:
    """`value` in the firm's time zone with the zone's abbreviation; "—" for no time."""
    if value is None:
        return "—"
    return value.astimezone(firm_timezone(firm)).strftime(TIME_FORMAT)


def page_time(value: dt.datetime | None) -> str:
    """`value` in the page's time zone (admin renders a firm admin's pages in their firm's), labelled."""
    if value is None:
        return "—"
    return timezone.localtime(value).strftime(TIME_FORMAT)


def case_label(case: Any) -> str:
    """A case as people read it: its reference and title (the adapter decides)."""
    return get_adapter().case_label(case)


def endpoint_words(endpoint: str) -> str:
    """"admin:casesummary" → "admin: case summaries"; "api:SearchApi" → "API: search"; "mcp:get_brief" → "MCP: get brief"."""
    where, _, name = endpoint.partition(":")
    if where == "admin":
        try:
            name = str(apps.get_model("graph_memory", name)._meta.verbose_name_plural)
        except LookupError:
            name = {"health": "memory health"}.get(name, name)
        return f"admin: {name}"
    if where == "api":
        return "API: " + " ".join(re.findall(r"[A-Z][a-z]*|[a-z]+", name.removesuffix("Api"))).lower()
    return f"{where.upper()}: {name.replace('_', ' ')}" if name else endpoint
