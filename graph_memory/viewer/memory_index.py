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

Last active is the latest of the case's own change time, its summary's writing
and its stale flag's raising (summaries/activity.py keeps it per case, indexed
behind the firm). A viewer who may open at most VISIBLE_FIRST_MAX cases has
their cases sorted by those clocks one by one; a larger one (a partner, a
practice group, a firm admin) has the firm's cases walked in that order from
the index, each probed against the wall, until the page is full, so the rows
read follow the page and not the thousands they may open. Either way their
visible cases are listed at most once (a firm admin's never: counted from the
firm's index), and a page's lines are read for its cases only. Ties go to the
newer case.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from django.db.models import F, FilteredRelation, Func, TextField, Value
from django.db.models.functions import Coalesce

from graph_memory import conf
from graph_memory.adapter import MemoryAdapter, Viewer, case_model, get_adapter, queryset_sql
from graph_memory.models import CaseActivity, Node
from graph_memory.plumbing.stmt import Stmt
from graph_memory.summaries import activity
from graph_memory.summaries.context import clip
from graph_memory.summaries.rulebook import SECTIONS
from graph_memory.wall.scope import VISIBLE_ONCE, Read, may_open, rows, scope_of

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


# The page's rows `page(id, active)` become the index's rows: each case's line read by its id (LATERAL, OFFSET 0:
# a probe of `{lines}`, every case's line as the host's expressions give it, for each case of the page only), its
# case node (in the firm's partition of the nodes, migration 0030), its activity, and the visible total; one row
# with no case when the viewer may open none. `n`: the CTE of the total.
_LINES = f"""
SELECT page.id, l.reference, l.title, l.status, l.client, l.against,
       (SELECT nd.id FROM {Node._meta.db_table} nd
        WHERE nd.firm_id = %(firm)s AND nd.kind = '{Node.Kind.CASE.value}' AND nd.ref_id = page.id),
       l.stale, l.written, l.gist, page.active, n.total
FROM n LEFT JOIN (
    page CROSS JOIN LATERAL (
        SELECT * FROM ({{lines}}) AS l(id, reference, title, status, client, against, stale, written, gist)
        WHERE l.id = page.id OFFSET 0
    ) l
) ON true
ORDER BY page.active DESC NULLS LAST, page.id DESC"""
# Within VISIBLE_FIRST_MAX visible cases (`{cases}`), each one's activity from its three clocks (`{clocks}`, probed
# by id), sorted: so a small viewer's index costs what they may open, and a case the activity's table does not hold
# yet is in its place.
_SORTED = """(SELECT k.id, k.active FROM ({cases}) AS c(id) CROSS JOIN LATERAL (
        SELECT k.id, k.active FROM ({clocks}) AS k(id, firm, active) WHERE k.id = c.id OFFSET 0
    ) k
    WHERE (SELECT n.total FROM n) <= %(few)s
    ORDER BY k.active DESC NULLS LAST, k.id DESC LIMIT %(fetch)s)"""
# Past it, the firm's cases in the activity's order, from its index, each kept if the viewer may open it
# (`{probe}`, a join, or `{kept}`, a condition, on `a.case_id`), until the page is full: the rows read follow
# the page and the share of the firm the viewer may open, not how many cases that is.
_WALKED = f"""(SELECT a.case_id, a.active_at FROM {CaseActivity._meta.db_table} a {{probe}}
    WHERE (SELECT n.total FROM n) > %(few)s AND a.firm_id = %(firm)s AND {{kept}}
    ORDER BY a.active_at DESC NULLS LAST, a.case_id DESC LIMIT %(fetch)s)"""
_PAGE = f"page AS MATERIALIZED ({_SORTED} UNION ALL {_WALKED})"
# The index's rows: (case id, reference, title, status, client, counterparties, case node id, stale, written_at,
# gist, last activity, visible total). Names: few (VISIBLE_FIRST_MAX), fetch (the rows a page may need), clocks, lines.
MEMORY_INDEX = Read(
    name="memory_index",
    columns=12,
    # A firm admin's cases are never listed: counted from the firm's index, the walk probing the wall per row.
    whole_firm=(
        "WITH n AS MATERIALIZED (SELECT count(*) AS total FROM ({visible}) AS v(id)), "
        + _PAGE.replace("{cases}", "{visible}").replace("{probe}", may_open("a.case_id")).replace("{kept}", "true")
        + _LINES
    ),
    # Anyone else's are listed once, for the total; the walk keeps a row whose case is among them (a hashed set
    # of the ids; IS TRUE: a filter, never a join that would hash the firm's walk instead).
    walled=(
        f"WITH {VISIBLE_ONCE}, n AS MATERIALIZED (SELECT count(*) AS total FROM vis), "
        + _PAGE.replace("{cases}", "SELECT vis.id FROM vis").replace("{probe}", "")
        .replace("{kept}", "(a.case_id IN (SELECT vis.id FROM vis)) IS TRUE")
        + _LINES
    ),
    unsighted="the index orders the firm's cases by their last activity, which the sight does not keep; a small "
    "viewer's cases are sorted one by one, a larger one's walked in the activity's order, each probed against the wall",
)


@functools.cache
def _lines(adapter: MemoryAdapter) -> Stmt:
    """Every case's line as the host's expressions give it (id first), to probe by id: the page's only.

    Compiled once per adapter (one per process and setting): compiling it from the ORM took longer than a
    small viewer's whole statement."""
    header = adapter.case_header_annotations()
    columns = {
        "i_reference": header["reference"],
        "i_title": header["title"],
        "i_status": header["status"],
        "i_client": header["client_name"],
        "i_against": header["counterparty_names"],
        "i_stale": F("gm_summary__stale"),
        "i_written": F("gm_summary__written_at"),
        "i_gist": _gist(),
    }
    cases = case_model().objects.order_by().annotate(gm_summary=FilteredRelation("memory_summary"))
    return Stmt(*queryset_sql(cases.annotate(**columns).values_list("pk", *columns)))


_COLUMNS = ("i_case", "i_reference", "i_title", "i_status", "i_client", "i_against", "i_node", "i_stale", "i_written",
            "i_gist", "i_active", "i_total")  # fmt: skip


def _rows(viewer: Viewer, fetch: int) -> tuple[int, list[dict[str, Any]]]:
    """The viewer's visible total and the first `fetch` of their cases, most recently active first, with what a
    line shows. One statement (MEMORY_INDEX): the visible cases listed at most once, and the lines read for the
    page's cases only."""
    scope = scope_of(viewer)
    if scope.empty or scope.firm_id is None:
        return 0, []
    found = rows(
        scope, MEMORY_INDEX, few=int(conf.get("VISIBLE_FIRST_MAX")), fetch=fetch,
        clocks=activity.every_clock(), lines=_lines(get_adapter()),
    )  # fmt: skip
    total = int(found[0][-1]) if found else 0
    return total, [dict(zip(_COLUMNS, row, strict=True)) for row in found if row[0] is not None]  # none: no case


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
    total, found = _rows(viewer, fetch=max_bytes // MIN_LINE_BYTES + 1)
    lines: list[str] = []
    shown: list[dict[str, Any]] = []
    for row in found:
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
