"""Field facts: what the records hold as fields, rendered into statements by code, never written by a model.

The case's status and opening date, the client and counterparties with their
roles, each deadline's title, due date and open/done state, each invoice's
number, date, amount, currency and state, and the title and date of each
document, draft and titled note: one deterministic statement each, from the
slice item's own `fields`, citing that item. The same records always give the
same statements, so they need no verifying and cannot be mis-stated. Stored as
{"text", "sources": [the item], "kind": "field"}.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from graph_memory.summaries.context import ContextItem, ContextSlice
from graph_memory.summaries.rulebook import SECTIONS, TITLED_RECORDS, record_of
from graph_memory.summaries.sentences import statement_key
from graph_memory.summaries.verify import Verification

SECTION_OF = {
    "header": "status",
    "client": "parties",
    "counterparty": "parties",
    "deadline": "key_dates",
    "invoice": "money",
    "document": "recent_activity",
    "draft": "recent_activity",
    "note": "recent_activity",
}


def _day(value: Any) -> str:
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return str(value or "").strip()[:10]


def _amount(value: Any) -> str:
    try:
        return f"{Decimal(str(value)):,.2f}"
    except (InvalidOperation, ValueError):
        return str(value)


def _sentence(text: str) -> str:
    return text if text.endswith(".") else text + "."


def render(item: ContextItem) -> str | None:
    """The field fact of one slice item, or None when its kind has none (or its fields are missing)."""
    f = item.fields
    if item.kind == "header" and f.get("reference"):
        facts = [f"status {f['status']}"] if f.get("status") else []
        facts += [f"opened {_day(f['opened'])}"] if f.get("opened") else []
        return f"Case {f['reference']} “{f.get('title', '')}”" + (f": {', '.join(facts)}." if facts else ".")
    if item.kind in ("client", "counterparty") and f.get("name"):
        return _sentence(f"{str(f.get('role') or item.kind).capitalize()}: {f['name']}")
    if item.kind == "deadline" and f.get("title"):
        due = f"due {_day(f['due'])}, " if f.get("due") else ""
        return f"Deadline “{f['title']}”: {due}{'done' if f.get('done') else 'open'}."
    if item.kind == "invoice" and f.get("number"):
        parts = [f"Invoice {f['number']}"] + ([f"issued {_day(f['issued'])}"] if f.get("issued") else [])
        money = f"{f.get('currency') or ''} {_amount(f['amount'])}".strip() if f.get("amount") is not None else ""
        tail = ", ".join(x for x in (money, str(f.get("status") or "")) if x)
        return " ".join(parts) + (f": {tail}." if tail else ".")
    if item.kind in ("document", "draft", "note") and f.get("title"):
        noun = {"document": "Document", "draft": "Draft", "note": "Working note"}[item.kind]
        dated = f" dated {_day(f['date'])}" if f.get("date") else ""
        return f"{noun} “{f['title']}”{dated}."
    return None


def field_facts(context: ContextSlice) -> dict[str, list[dict[str, Any]]]:
    """Every field fact of the slice, by section, in slice order; a document once (citing its first page in the slice)."""
    content: dict[str, list[dict[str, Any]]] = {section: [] for section in SECTIONS}
    seen: set[str] = set()
    for item in context.items:
        text = render(item)
        if text is None or text in seen:
            continue
        seen.add(text)
        content[SECTION_OF[item.kind]].append({"text": text, "sources": [item.source_id], "kind": "field"})
    return content


def with_field_facts(verification: Verification, context: ContextSlice) -> Verification:
    """The selected sentences with the slice's field facts first in each section.

    A sentence selected from a document, draft or note whose title and date
    (its field fact) are in the same section is placed right after that fact,
    so the two read as one line (rulebook.render_text) and no record is listed
    twice. A statement that only repeats a field fact is dropped as a
    duplicate. The report's `kept` and `counts` stay about selected statements
    (what a writer is judged on); field facts are counted in `fields`.
    """
    facts = field_facts(context)
    rendered = {statement_key(s["text"]) for statements in facts.values() for s in statements}
    dropped = list(verification.report["dropped"])
    counts = dict(verification.report["counts"])
    content: dict[str, list[dict[str, Any]]] = {}
    for section in SECTIONS:
        sizes = Counter(s.get("point") for s in verification.content.get(section, []))
        lines = [[fact] for fact in facts[section]]
        head_of = {record_of(fact["sources"][0]): line for line, fact in zip(lines, facts[section], strict=True)}
        for statement in verification.content.get(section, []):
            if statement_key(statement["text"]) in rendered:
                dropped.append({"section": section, "reason": "duplicate", "detail": "a field fact"})
                counts.update(duplicate=counts.get("duplicate", 0) + 1, kept=counts["kept"] - 1)
                continue
            alone = sizes[statement.get("point")] == 1 and not statement.get("label")
            head = head_of.get(record_of(statement["sources"][0])) if alone else None
            if head is not None and head[0]["sources"][0].startswith(TITLED_RECORDS):
                head.append(statement)
            else:
                lines.append([statement])
        content[section] = [statement for line in lines for statement in line]
    counts["fields"] = sum(len(s) for s in facts.values())
    report = {
        **verification.report,
        "kept": counts["kept"],
        "dropped": dropped,
        "fields": counts["fields"],
        "counts": counts,
    }
    return replace(verification, content=content, report=report)
