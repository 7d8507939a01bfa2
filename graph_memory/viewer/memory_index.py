"""The compact memory index: what the memory holds for one viewer, small enough for every system prompt.

The wiki pattern's always-on table of contents (seed 001: "an always-on
index of ≤ ~4 KB so the assistant knows what the memory holds without
loading it"), behind the wall: one line per case the viewer may open — its
reference, title, client, counterparties, status, how fresh its summary is,
when it was last active, and the first statement of its summary — most
recently active first, hard-capped at INDEX_MAX_BYTES UTF-8 bytes. When the
cap leaves cases out, the text says how many *of the viewer's own cases*:
every count here is of visible cases only, so nothing about hidden cases can
be read from it, not even how many exist.

It is computed on each request (one query) and never stored: a fingerprint of
exactly what it says (and for whom) lets the assistant re-check it every turn
with `If-None-Match` and get a 304 when nothing in it changed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from django.db.models import F, FilteredRelation, Func, OuterRef, Q, Subquery, TextField, Value
from django.db.models.functions import Coalesce, Greatest

from graph_memory import conf
from graph_memory.adapter import Viewer, case_firm_attname, get_adapter
from graph_memory.models import Node
from graph_memory.summaries.context import clip
from graph_memory.summaries.rulebook import SECTIONS
from graph_memory.wall import access

COUNTERPARTIES_SHOWN = 3
TITLE_CHARS = 100
NAME_CHARS = 60
# A line is never shorter than this many bytes ("- R · T · S · no summary yet · active YYYY-MM-DD"),
# so this many rows per byte of the cap are always enough to fill it.
MIN_LINE_BYTES = 40


@dataclass(frozen=True)
class MemoryIndex:
    text: str  # the index itself, at most INDEX_MAX_BYTES bytes of UTF-8
    cases: int  # lines in it, one a case
    truncated: bool  # some of the viewer's cases were left out by the cap
    omitted: int  # how many of the viewer's cases were left out (never counts a hidden case)
    case_ids: dict[str, str] = field(default_factory=dict)  # reference -> case node id, for the lines shown
    fingerprint: str = ""  # changes exactly when any of the above changes

    @property
    def etag(self) -> str:
        return f'"{self.fingerprint}"'


class _FirstStatement(Func):
    """The text of the first statement of a summary section that jsonpath `path` selects (NULL if none)."""

    template = "(jsonb_path_query_first(%(expressions)s::jsonpath) #>> '{}')"
    output_field = TextField()


def _gist() -> Any:
    """The first statement of the summary: its first written one in section order, else its first field fact."""
    content = F("gm_summary__content")
    written = [
        _FirstStatement(content, Value(f'$.{s}[*] ? (!exists(@.kind) || @.kind != "field").text')) for s in SECTIONS
    ]
    facts = [_FirstStatement(content, Value(f"$.{s}[0].text")) for s in SECTIONS]
    return Coalesce(*written, *facts, output_field=TextField())


_COLUMNS = ("i_reference", "i_title", "i_status", "i_client", "i_against", "i_node", "i_stale", "i_written",
            "i_gist", "i_active", "i_total")  # fmt: skip


def _rows(viewer: Viewer, fetch: int) -> list[dict[str, Any]]:
    """The viewer's cases, most recently active first, with what a line shows and the visible total. One query.

    The order is found first, from the order keys alone, and the lines are read for the `fetch` cases it
    keeps: PostgreSQL computes a row's every column before it sorts, so with the lines in the sort each
    visible case's names, summary and gist were read (20,000 of them for a partner) to keep a hundred.
    """
    adapter = get_adapter()
    header = adapter.case_header_annotations()
    case_node = Node.objects.filter(
        firm_id=OuterRef(case_firm_attname()), kind=Node.Kind.CASE, ref_id=OuterRef("pk")
    ).order_by()
    visible = access.visible_cases(viewer)
    firm_id = access.viewer_firm_id(viewer)

    def with_summary(cases: Any) -> Any:
        # The summary of each case among the firm's own (with the firm in the join, PostgreSQL reads
        # that firm's summaries; without it, it scanned every firm's: a firm's index then slowed beside others).
        return cases.annotate(
            gm_summary=FilteredRelation("memory_summary", condition=Q(memory_summary__firm_id=firm_id)),
        ).annotate(
            # As briefs order cases: the last time the header, its records (the stale
            # flag) or its summary changed.
            i_active=Greatest(adapter.case_activity(), "gm_summary__written_at", "gm_summary__stale_since"),
            i_reference=header["reference"],
        )

    order = (F("i_active").desc(nulls_last=True), "i_reference", "pk")
    first = with_summary(visible).order_by(*order).values("pk")[:fetch]
    # Every visible case, counted on its own (an index-only count for a firm admin, the visible ids for a
    # lawyer) rather than through a window over every sorted row (50,000 of them spilled to disk).
    total = Subquery(visible.order_by().annotate(n=Func(Value(1), function="count")).values("n")[:1])
    rows = (
        with_summary(visible.model.objects.filter(pk__in=Subquery(first)))
        .annotate(
            i_title=header["title"],
            i_status=header["status"],
            i_client=header["client_name"],
            i_against=header["counterparty_names"],
            i_node=Subquery(case_node.values("id")[:1]),
            i_stale=F("gm_summary__stale"),
            i_written=F("gm_summary__written_at"),
            i_gist=_gist(),
            i_total=total,
        )
        .order_by(*order)
        .values(*_COLUMNS)
    )
    return list(rows)


def _line(row: dict[str, Any], gist_chars: int) -> str:
    parts = [clip(row["i_reference"] or "", NAME_CHARS), clip(row["i_title"] or "", TITLE_CHARS)]
    if row["i_client"]:
        parts.append(f"client {clip(row['i_client'], NAME_CHARS)}")
    against = list(row["i_against"] or [])
    if against:
        more = f" +{len(against) - COUNTERPARTIES_SHOWN} more" if len(against) > COUNTERPARTIES_SHOWN else ""
        parts.append("against " + "; ".join(clip(n, NAME_CHARS) for n in against[:COUNTERPARTIES_SHOWN]) + more)
    parts.append(str(row["i_status"] or ""))
    written = row["i_written"]
    if written is None:
        parts.append("no summary yet")
    else:
        stamp = f"{written:%Y-%m-%d %H:%M} UTC"
        parts.append(f"stale: changed since its summary of {stamp}" if row["i_stale"] else f"summary {stamp}")
    if row["i_active"] is not None:
        parts.append(f"active {row['i_active']:%Y-%m-%d}")
    line = "- " + " · ".join(p for p in parts if p)
    gist = clip(row["i_gist"] or "", gist_chars) if written is not None else ""
    return f"{line}: {gist}" if gist else line


def _text(lines: list[str], total: int) -> str:
    if total == 0:
        return "Firm memory: no case you may open."
    head = (
        f"Firm memory: {len(lines)} of the {total} case{'s' if total != 1 else ''} you may open, most recently "
        "active first (reference · title · client · against · status · summary · last activity: first statement "
        "of the summary). Orientation, not fact; find one with find_nodes by its reference, then get_brief."
    )
    omitted = total - len(lines)
    tail = [f"… and {omitted} more of your cases, less recently active; find them with search_cases or find_nodes."]
    return "\n".join([head, *lines, *(tail if omitted else [])])


def memory_index(*, viewer: Viewer) -> MemoryIndex:
    """The viewer's memory index: at most INDEX_MAX_BYTES bytes, computed now, never stored.

    Promises: only cases the viewer may open appear, and `omitted` (and the
    text's "N of the M cases") count only those; lines are whole (a line that
    does not fit is left out and counted, never cut); the fingerprint is a
    hash of the viewer and everything the index says, so it changes exactly
    when the index does. One query, whatever the firm's size.
    """
    max_bytes = int(conf.get("INDEX_MAX_BYTES"))
    gist_chars = int(conf.get("INDEX_GIST_CHARS"))
    rows = _rows(viewer, fetch=max_bytes // MIN_LINE_BYTES + 1)
    total = int(rows[0]["i_total"]) if rows else 0
    lines: list[str] = []
    shown: list[dict[str, Any]] = []
    for row in rows:
        line = _line(row, gist_chars)
        if len(_text([*lines, line], total).encode()) > max_bytes:
            break
        lines.append(line)
        shown.append(row)
    text = _text(lines, total)
    case_ids = {row["i_reference"]: str(row["i_node"]) for row in shown if row["i_node"] is not None}
    omitted = total - len(lines)
    digest = json.dumps([str(getattr(viewer, "pk", "")), text, case_ids, omitted], ensure_ascii=False)
    return MemoryIndex(
        text=text,
        cases=len(lines),
        truncated=omitted > 0,
        omitted=omitted,
        case_ids=case_ids,
        fingerprint=hashlib.sha256(digest.encode()).hexdigest()[:32],
    )
