"""Contradicted by newer records: stored summary statements that the live records now disagree with.

A field fact (fields.py) is re-rendered from its record as it is now and
compared with the stored sentence: a deadline stated open that is done, an
invoice stated sent that is paid, a case status changed, a party renamed or
removed. A written statement's quote is looked for in its cited record as it
is now: a record deleted, or changed so that it no longer holds the quote.
Three queries per firm (summaries, the cited records through the adapter's
`lint_records`, one per kind asked), whatever the number of cases.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import date, datetime
from typing import Any

from django.db.models import OuterRef, Subquery

from graph_memory.adapter import Record, case_model, get_adapter
from graph_memory.lint.findings import HIGH, MEDIUM, Finding
from graph_memory.models import CaseSummary, LintFinding
from graph_memory.summaries.context import ContextItem
from graph_memory.summaries.fields import render
from graph_memory.summaries.sentences import normalise_quote, quote_span

KIND = LintFinding.Kind.CONTRADICTED
PARTY_KINDS = ("client", "counterparty")
_STATUS = re.compile(r": status (?P<status>.+?)(?:, opened [^,]*)?\.$")


def parse_source(source_id: str) -> tuple[str, str, int | None]:
    """(kind, key, page) of a stored source id: "case:header" is ("header", "header", None)."""
    kind, _, key = source_id.partition(":")
    if kind == "case":
        return "header", "header", None
    if kind == "document" and "#p" in key:
        key, _, page = key.rpartition("#p")
        return kind, key, int(page) if page.isdigit() else None
    return kind, key, None


def summaries_with_reference(*, firm_id: int, written_only: bool = True) -> Any:
    """The firm's summaries (written ones only, by default), each with its case's reference: one query when iterated."""
    adapter = get_adapter()
    reference = case_model().objects.filter(pk=OuterRef("case_id")).annotate(_r=adapter.case_reference()).values("_r")
    rows = CaseSummary.objects.filter(firm_id=firm_id)
    if written_only:
        rows = rows.exclude(text="")
    return rows.annotate(reference=Subquery(reference)).order_by("case_id")


def _day(value: date | datetime | None) -> str:
    if value is None:
        return ""
    return (value.date() if isinstance(value, datetime) else value).isoformat()


def _fields(record: Record) -> dict[str, Any]:
    """The record's fields as the slice gives them to `fields.render` (context.py)."""
    if record.kind in ("note", "draft", "document"):
        return {"title": record.title, "date": record.date}
    return dict(record.fields)


def _live_text(record: Record, page: int | None) -> str:
    """The record's text as a slice item would hold it, uncut (the labels mirror context.py)."""
    f = record.fields
    if record.kind == "header":
        opened = f" Opened: {_day(f['opened'])}. " if f.get("opened") else " "
        text = f"Case {f['reference']}: {f['title']}. Status: {f['status']}.{opened}{record.text}"
    elif record.kind in PARTY_KINDS:
        text = f"{record.kind.capitalize()}: {record.title}"
    elif record.kind == "deadline":
        text = f"Deadline “{f['title']}”: due {_day(f['due'])}, {'done' if f['done'] else 'open'}."
    elif record.kind == "invoice":
        text = f"Invoice {f['number']} issued {_day(f['issued'])}: {f['currency']} {f['amount']:,.2f}, {f['status']}."
    elif record.kind == "note":
        title = f" “{record.title}”" if record.title else ""
        text = (f"Working note{title} ({_day(record.date)}): " if record.date else "Working note: ") + record.text
    elif record.kind == "draft":
        when = f" ({_day(record.date)})" if record.date else ""
        text = f"Draft “{record.title}”{when}: {record.text}"
    else:
        pages = record.pages
        body = pages[page - 1] if page is not None and 0 < page <= len(pages) else ""
        when = f" ({_day(record.date)})" if record.date else ""
        text = f"Document “{record.title}”{when}, page {page}: {body}"
    return normalise_quote(text)


def _field_finding(text: str, source_id: str, record: Record | None, case: str) -> tuple[str, str, str] | None:
    """(code, severity, sentence) when the stored field fact `text` is no longer what `record` renders."""
    kind, _, _ = parse_source(source_id)
    if record is None:
        if kind in PARTY_KINDS:
            return "party_removed", HIGH, f"{case}: the summary names a {kind} the case no longer has: “{text}”"
        return "record_deleted", HIGH, f"{case}: the summary states “{text}” from {source_id}, which is gone."
    live_fields = _fields(record)
    live = render(ContextItem(source_id, kind, "", fields=live_fields))
    if live is None or live == text:
        return None
    now = f"the records now say “{live}”"
    if kind == "deadline":
        if (
            live_fields.get("done")
            and render(ContextItem(source_id, kind, "", fields={**live_fields, "done": False})) == text
        ):
            return "deadline_done", HIGH, f"{case}: the summary states “{text}”, but the deadline is done."
        return "deadline_changed", HIGH, f"{case}: the summary states “{text}”; {now}."
    if kind == "invoice":
        for status in ("draft", "sent", "paid", "void"):
            if render(ContextItem(source_id, kind, "", fields={**live_fields, "status": status})) == text:
                return (
                    "invoice_status",
                    HIGH,
                    (
                        f"{case}: the summary states invoice {live_fields.get('number')} is {status}; "
                        f"it is {live_fields.get('status')} now."
                    ),
                )
        return "invoice_changed", HIGH, f"{case}: the summary states “{text}”; {now}."
    if kind == "header":
        stored, current = _STATUS.search(text), _STATUS.search(live)
        if stored and current and stored["status"] != current["status"]:
            return (
                "case_status",
                HIGH,
                (f"{case}: the summary states status {stored['status']}; the case is {current['status']} now."),
            )
        return "case_changed", MEDIUM, f"{case}: the summary states “{text}”; {now}."
    if kind in PARTY_KINDS:
        return "party_renamed", HIGH, f"{case}: the summary states “{text}”; the {kind} is “{record.title}” now."
    return "record_changed", MEDIUM, f"{case}: the summary states “{text}”; {now}."


def contradicted(*, firm_id: int) -> list[Finding]:
    summaries = list(summaries_with_reference(firm_id=firm_id).values_list("case_id", "reference", "content"))
    cited: dict[str, set[tuple[int, str]]] = defaultdict(set)
    for case_id, _, content in summaries:
        for statements in (content or {}).values():
            for statement in statements:
                for source_id in statement.get("sources", []):
                    kind, key, _ = parse_source(source_id)
                    cited[kind].add((case_id, key))
    live = {(case_id, r.kind, r.key): r for case_id, r in get_adapter().lint_records(firm_id=firm_id, cited=cited)}
    found: list[Finding] = []
    for case_id, reference, content in summaries:
        case = f"Case {reference}"
        for statements in (content or {}).values():
            for statement in statements:
                text = statement.get("text", "")
                for source_id in statement.get("sources", [])[:1]:
                    kind, key, page = parse_source(source_id)
                    record = live.get((case_id, kind, key))
                    records = [{"type": "source", "id": source_id, "statement": text}]
                    if statement.get("kind") == "field":
                        problem = _field_finding(text, source_id, record, case)
                    elif record is None:
                        problem = ("record_deleted", HIGH, f"{case}: “{text}” cites {source_id}, which is gone.")
                    elif quote_span(statement.get("quote", "")) not in _live_text(record, page):
                        problem = (
                            "record_changed", MEDIUM,
                            f"{case}: “{text}” quotes {source_id}, which no longer says so (changed since the summary).",
                        )  # fmt: skip
                    else:
                        problem = None
                    if problem is not None:
                        code, severity, message = problem
                        found.append(Finding(KIND, code, severity, message, case_id=case_id, records=records))
    return found
