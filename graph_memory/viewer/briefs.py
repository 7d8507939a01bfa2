"""Briefs: what the memory knows about one node, assembled for one viewer at request time.

A case brief is that case's stored summary. A client, counterparty or lawyer
brief is never stored anywhere: it is stitched, on each request, from the
summaries of the connected cases *this viewer may open* (filtered inside the
query by the access module), so two viewers can get two different briefs and
nothing merging two cases' facts ever touches disk, a cache or a log line.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from typing import Any

from django.db.models import F, OuterRef, QuerySet, Subquery
from django.db.models.functions import Greatest

from graph_memory import conf
from graph_memory.adapter import Viewer, get_adapter
from graph_memory.adapter import firm_cases as firm_cases_of
from graph_memory.models import CaseSummary, Node
from graph_memory.refresh.on_demand import ensure_summary
from graph_memory.summaries import rulebook
from graph_memory.summaries.served import served_statements
from graph_memory.viewer.selectors import NodeRef, node_in_scope
from graph_memory.wall import access, reads
from graph_memory.wall.scope import Scope, scope_of, statement

NO_SUMMARY = "No summary exists yet; header facts only."


@dataclass(frozen=True)
class BriefCase:
    case: NodeRef
    case_id: int
    key: str
    header: str  # header facts: number, title, status, opened, client, counterparties
    summary: str  # the stored summary text; "" when the case has none yet
    stale: bool  # the case changed since the summary was written
    written_at: dt.datetime | None
    notice: str
    # Field facts read from the live records at request time (open deadlines, unpaid
    # invoices): what a summary written last night may already have wrong.
    live_facts: tuple[str, ...] = ()
    # The summary was written before summary-v3: its written statements are free text beside a
    # quote, not the records' own sentences (served until the nightly refresh rewrites it, first).
    legacy: bool = False
    # The summary's statements one by one (`served_statements`), only when asked for.
    statements: tuple[dict[str, Any], ...] = ()

    @property
    def has_summary(self) -> bool:
        return bool(self.summary)


@dataclass(frozen=True)
class Brief:
    node: NodeRef
    text: str  # the whole brief as one text, notice included
    cases: list[BriefCase]
    has_more: bool  # more visible connected cases exist beyond `cases`
    notice: str


def _case_rows(cases: QuerySet[Any], firm_id: int, limit: int, *, statements: bool) -> list[dict[str, Any]]:
    """These visible cases of the firm, most recently active first, with everything a brief shows (each
    summary's stored statements only with `statements`: the content is larger than the text). One query.
    Each case's node is looked up in the firm's partition of the nodes (a constant, migration 0030)."""
    adapter = get_adapter()
    case_node = Node.objects.filter(firm_id=firm_id, kind=Node.Kind.CASE, ref_id=OuterRef("pk")).order_by()
    header = {f"h_{name}": expression for name, expression in adapter.case_header_annotations().items()}
    live = {f"l_{name}": expression for name, expression in adapter.live_fact_annotations().items()}
    rows = (
        cases.annotate(
            **header,
            **live,
            node_id=Subquery(case_node.values("id")[:1]),
            node_label=Subquery(case_node.values("label")[:1]),
            summary_text=F("memory_summary__text"),
            summary_version=F("memory_summary__prompt_version"),
            **({"summary_content": F("memory_summary__content")} if statements else {}),
            summary_stale=F("memory_summary__stale"),
            summary_written_at=F("memory_summary__written_at"),
            # Activity: the last time the case header, its records (they raise
            # the stale flag) or its summary changed.
            active=Greatest(
                adapter.case_activity(), "memory_summary__written_at", "memory_summary__stale_since"
            ),
        )
        .order_by(F("active").desc(nulls_last=True), "h_reference", "pk")
        .values("pk", *header, *live, "node_id", "node_label", "summary_text", "summary_version",
                *(["summary_content"] if statements else []), "summary_stale", "summary_written_at")
    )
    found = []
    for row in rows[: limit + 1]:
        entry = {key[2:] if key.startswith("h_") else key: value for key, value in row.items() if key[:2] != "l_"}
        entry["live_facts"] = [fact for name in live for fact in (row[name] or ())]
        found.append(entry)
    return found


def _header(row: dict[str, Any]) -> str:
    facts = [f"{row['reference']} — {row['title']}", f"status {row['status']}"]
    if row["opened"]:
        facts.append(f"opened {row['opened']:%Y-%m-%d}")
    if row["client_name"]:
        facts.append(f"client {row['client_name']}")
    if row["counterparty_names"]:
        facts.append("against " + "; ".join(row["counterparty_names"]))
    return " · ".join(facts)


def _entry(row: dict[str, Any], notice: str) -> BriefCase:
    header = _header(row)
    summary = row["summary_text"] or ""
    if not summary and row["description"]:
        header = f"{header}\n{row['description']}"
    return BriefCase(
        case=NodeRef(id=str(row["node_id"]), kind=Node.Kind.CASE.value, label=row["node_label"] or row["title"]),
        case_id=row["pk"],
        key=row["reference"],
        header=header,
        summary=summary,
        stale=bool(row["summary_stale"]) if summary else False,
        written_at=row["summary_written_at"] if summary else None,
        notice=notice,
        live_facts=tuple(row["live_facts"]),
        legacy=bool(summary) and row["summary_version"] in rulebook.LEGACY_VERSIONS,
        statements=served_statements(row["summary_content"]) if summary and "summary_content" in row else (),
    )


def _with_summary(entry: BriefCase, summary: CaseSummary | None, *, statements: bool) -> BriefCase:
    if summary is None or not summary.has_summary:
        return entry
    return replace(
        entry,
        summary=summary.text,
        stale=summary.stale,
        written_at=summary.written_at,
        legacy=summary.prompt_version in rulebook.LEGACY_VERSIONS,
        statements=served_statements(summary.content) if statements else (),
    )


def _text(node: NodeRef, entries: list[BriefCase], has_more: bool, notice: str) -> str:
    if node.kind == Node.Kind.CASE:
        intro = f"Brief on case {node.label}: its stored summary."
    else:
        count = f"{len(entries)} case{'s' if len(entries) != 1 else ''}"
        intro = (
            f"Brief on {node.label} ({node.kind}), assembled now from the summaries of {count} you may open, "
            "most recently active first."
        )
    blocks = [f"{intro}\n{notice}"]
    for entry in entries:
        if entry.summary:
            written = f"{entry.written_at:%Y-%m-%d %H:%M} UTC" if entry.written_at else "at an unknown time"
            state = " — stale: the case has changed since" if entry.stale else ""
            body = f"Summary written {written}{state}.\n{entry.summary}"
        else:
            body = NO_SUMMARY
        live = f"Live from the records now: {'; '.join(entry.live_facts)}.\n" if entry.live_facts else ""
        blocks.append(f"## {entry.header}\n{live}{body}")
    if has_more:
        blocks.append("More connected cases exist than shown here; ask with a higher limit to see them.")
    return "\n\n".join(blocks)


def _cases_of(scope: Scope, node: Node) -> QuerySet[Any]:
    """The visible cases a brief of `node` draws on (lazy), found from the viewer's side of the wall:
    a case node's own case (one probe); for any other node, the cases of the read `CASES_OF_NODE`
    (wall/reads.py), spliced into the brief's one query."""
    if node.kind == Node.Kind.CASE:
        return access.visible_case(scope.viewer, case_id=node.ref_id)
    connected = statement(scope, reads.CASES_OF_NODE, node=node.pk)
    return firm_cases_of(scope.firm_id).filter(access.case_ids_in(connected.sql, connected.params))


def node_brief(*, viewer: Viewer, node_id: Any, limit: int | None = None, statements: bool = False) -> Brief:
    """The brief of one node for this viewer; `access.NotFound` if they reach it through no case they may open.

    Promises: a case brief is its stored summary (written on the spot, once,
    if the case has none yet; "no summary exists yet" with header facts if
    that fails), with the stale flag and when it was written. Any other brief
    holds only cases the viewer may open, most recently active first (ties by
    case number), at most `limit` (default PAGE_DEFAULT, at most PAGE_MAX),
    and `has_more` counts only such cases. Hidden, unknown and malformed ids
    raise the same `NotFound`. Nothing is written, cached or logged (except
    the first summary of a never-summarised case). Each case says whether its
    summary is `legacy` (written before summary-v3); with `statements`, each
    case carries its summary's statements one by one too. Two queries.
    """
    limit = conf.page_size(limit)
    scope = scope_of(viewer)
    node = node_in_scope(scope, node_id=node_id)  # NotFound unless a visible case reaches it
    rows = _case_rows(_cases_of(scope, node), node.firm_id, limit, statements=statements)
    if not rows:
        raise access.NotFound
    notice = conf.get("NOTICE")
    entries = [_entry(row, notice) for row in rows[:limit]]
    if node.kind == Node.Kind.CASE and not entries[0].summary:
        entries[0] = _with_summary(entries[0], ensure_summary(case_id=entries[0].case_id), statements=statements)
    ref = NodeRef(id=str(node.pk), kind=node.kind, label=node.label)
    has_more = len(rows) > limit
    return Brief(node=ref, text=_text(ref, entries, has_more, notice), cases=entries, has_more=has_more, notice=notice)
