"""The context slice: the bounded, recent part of ONE case's records a summary is written from.

Everything here is read through the host's adapter, by the one case id, so
nothing from another case can enter a slice. Each item has a
stable source id, every item's text is capped, the number of items of each
kind is capped, and so is the rendered total. Seven queries, whatever the
size of the case. The same records always give the same slice.

Items, in priority order (the total cap cuts from the end):
`case:header`, `client:<key>`, `counterparty:<key>`, `deadline:<key>` (open
ones soonest first, then done ones most recent first), `invoice:<key>`
(latest first), `note:<key>`, `draft:<key>` and `document:<key>#p<n>`
(processed documents only, latest first, the first pages of each).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from graph_memory import conf
from graph_memory.adapter import RECORD_KINDS, SliceLimits, get_adapter
from graph_memory.summaries.facts import CURRENCY_CODES, CURRENCY_SYMBOLS, MONTHS

# An item cut by the total cap is kept only if this much of it still fits.
MIN_CLIPPED_ITEM_CHARS = 200


class CaseNotFound(Exception):
    pass


@dataclass(frozen=True)
class ContextItem:
    source_id: str
    kind: str
    text: str
    body_start: int = 0  # where the record's own text starts, after a label such as 'Working note (2026-11-02): '
    # The record's own fields, for statements rendered from them rather than
    # written: header {reference, title, status, opened}; client / counterparty
    # {name, role}; deadline {title, due, done}; invoice {number, issued,
    # amount, currency, status}; note / draft / document {title, date}.
    fields: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def label(self) -> str:
        return self.text[: self.body_start].rstrip(": ")

    @property
    def body(self) -> str:
        return self.text[self.body_start :]

    @property
    def line(self) -> str:
        return f"[{self.source_id}] {self.text}"


@dataclass(frozen=True)
class ContextSlice:
    case_id: int
    firm_id: int
    case_key: str
    title: str
    description: str
    client_name: str
    counterparty_names: tuple[str, ...]
    items: tuple[ContextItem, ...]
    omitted: int  # items left out by the total cap

    @property
    def party_names(self) -> tuple[str, ...]:
        return (self.client_name, *self.counterparty_names)

    @property
    def source_ids(self) -> tuple[str, ...]:
        return tuple(item.source_id for item in self.items)

    def get(self, source_id: str) -> ContextItem | None:
        return next((item for item in self.items if item.source_id == source_id), None)

    @property
    def text(self) -> str:
        """The slice as the model reads it: one line per item."""
        return "\n".join(item.line for item in self.items)

    @property
    def char_count(self) -> int:
        return len(self.text)

    @property
    def approx_tokens(self) -> int:
        """Rough token count: one token per four characters (rounded up)."""
        return math.ceil(self.char_count / 4)


def _fragile(word: str) -> bool:
    """A word that may be half of a date or an amount, so a cut must not end on it."""
    bare = word.strip(".,;:()“”\"'\u2019")
    return (
        any(ch.isdigit() for ch in bare)
        or bare.casefold() in MONTHS
        or bare in CURRENCY_CODES
        or bare in CURRENCY_SYMBOLS
        or bare.casefold() in {"of", "per", "cent", "percent"}
    )


def clip(text: str, limit: int) -> str:
    """`text` on one line, cut to at most `limit` characters at a word boundary.

    The cut never leaves half a date or amount at the end ("31 December" of
    "31 December 2025"), so a clipped text never seems to say something the
    full one does not.
    """
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 1, 0)]
    words = cut[: cut.rfind(" ")].split(" ") if " " in cut else [cut]
    while words and _fragile(words[-1]):
        words.pop()
    return (" ".join(words).rstrip(",;:\u2013\u2014-") + "…").lstrip()


def _day(value: date | datetime) -> str:
    return (value.date() if isinstance(value, datetime) else value).isoformat()


def _amount(amount: Decimal) -> str:
    return f"{amount:,.2f}"


def _item(source_id: str, kind: str, label: str, body: str, limit: int, fields: Mapping[str, Any]) -> ContextItem:
    text = clip(label + (body or ""), limit)
    return ContextItem(source_id, kind, text, body_start=min(len(label), len(text)) if label else 0, fields=fields)


def build_context(*, case_id: int) -> ContextSlice:
    """The slice of case `case_id`'s own records a summary may be written from.

    Raises `CaseNotFound` when there is no such case. Reads no other case
    (the adapter reads by this one id), never reasons about viewers (the
    writing side never does).
    """
    item_max = conf.get("CONTEXT_ITEM_MAX_CHARS")
    total_max = conf.get("CONTEXT_MAX_CHARS")
    adapter = get_adapter()
    limits = SliceLimits(
        per_kind={kind: conf.get(f"CONTEXT_MAX_{kind.upper()}S") for kind in RECORD_KINDS},
        counterparties=conf.get("CONTEXT_MAX_COUNTERPARTIES"),
        # One more than an item may hold, so that clip() knows a text was cut.
        text_chars=item_max + 1,
        pages_per_document=conf.get("CONTEXT_MAX_PAGES_PER_DOCUMENT"),
    )
    header = adapter.case_header(case_id=case_id, limits=limits)
    if header is None:
        raise CaseNotFound(case_id)
    records = adapter.case_records(case_id=case_id, limits=limits)

    # (source id, kind, label, the record's own text, its fields)
    candidates: list[tuple[str, str, str, str, dict[str, Any]]] = [
        (
            "case:header",
            "header",
            f"Case {header.reference}: {header.title}. Status: {header.status}."
            + (f" Opened: {_day(header.opened)}. " if header.opened else " "),
            header.description,
            {"reference": header.reference, "title": header.title, "status": header.status, "opened": header.opened},
        ),
    ]
    parties = ([header.client] if header.client else []) + list(header.counterparties)
    candidates += [
        (f"{p.role}:{p.key}", p.role, f"{p.role.capitalize()}: ", p.name, {"name": p.name, "role": p.role})
        for p in parties
    ]
    for d in records.get("deadline", []):
        done = bool(d.fields["done"])
        body = f"Deadline “{d.fields['title']}”: due {_day(d.fields['due'])}, {'done' if done else 'open'}."
        candidates.append((f"deadline:{d.key}", "deadline", "", body, dict(d.fields)))
    for i in records.get("invoice", []):
        f = i.fields
        body = (
            f"Invoice {f['number']} issued {_day(f['issued'])}: {f['currency']} {_amount(f['amount'])}, {f['status']}."
        )
        candidates.append((f"invoice:{i.key}", "invoice", "", body, dict(f)))
    for n in records.get("note", []):
        label = f"Working note{f' “{n.title}”' if n.title else ''} ({_day(n.date)}): " if n.date else "Working note: "
        candidates.append((f"note:{n.key}", "note", label, n.text, {"title": n.title, "date": n.date}))
    for d in records.get("draft", []):
        label = f"Draft “{d.title}” ({_day(d.date)}): " if d.date else f"Draft “{d.title}”: "
        candidates.append((f"draft:{d.key}", "draft", label, d.text, {"title": d.title, "date": d.date}))
    for doc in records.get("document", []):
        for number, page in enumerate(doc.pages, start=1):
            if page and page.strip():
                when = f" ({_day(doc.date)})" if doc.date else ""
                label = f"Document “{doc.title}”{when}, page {number}: "
                fields = {"title": doc.title, "date": doc.date, "page": number}
                candidates.append((f"document:{doc.key}#p{number}", "document", label, page, fields))

    items: list[ContextItem] = []
    used = 0
    for position, (source_id, kind, label, body, fields) in enumerate(candidates):
        label = " ".join(label.split()) + " " if label.strip() else ""
        item = _item(source_id, kind, label, body, item_max, fields)
        room = total_max - used - (1 if items else 0)
        if len(item.line) > room:
            overhead = len(item.line) - len(item.text)
            if room - overhead < MIN_CLIPPED_ITEM_CHARS:
                omitted = len(candidates) - position
                break
            item = _item(source_id, kind, label, body, room - overhead, fields)
        items.append(item)
        used += len(item.line) + (1 if len(items) > 1 else 0)
    else:
        omitted = 0

    return ContextSlice(
        case_id=header.case_id,
        firm_id=header.firm_id,
        case_key=header.reference,
        title=header.title,
        description=clip(header.description, item_max),
        client_name=header.client.name if header.client else "",
        counterparty_names=tuple(p.name for p in header.counterparties),
        items=tuple(items),
        omitted=omitted,
    )
