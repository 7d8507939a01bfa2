"""The context slice: the bounded, recent part of ONE case's records a summary is written from.

Everything here is read through `graph_memory.source` and filtered by the one
case id, so nothing from another case can enter a slice. Each item has a
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

from django.db import connection
from django.db.models import Case as SqlCase
from django.db.models import F, Value, When
from django.db.models.expressions import RawSQL
from django.db.models.fields import DateField
from django.db.models.functions import Left

from graph_memory import conf, source
from graph_memory.summaries.verify import CURRENCY_CODES, CURRENCY_SYMBOLS, MONTHS

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

    Raises `CaseNotFound` when there is no such case. Reads no other case,
    never reasons about viewers (the writing side never does).
    """
    item_max = conf.get("CONTEXT_ITEM_MAX_CHARS")
    total_max = conf.get("CONTEXT_MAX_CHARS")
    Case, Document = source.Case, source.Document

    header = (
        Case.objects.filter(pk=case_id)
        .values("pk", "firm_id", "key", "title", "status", "opened", "client__key", "client__name")
        .annotate(description_head=Left("description", item_max + 1))
        .first()
    )
    if header is None:
        raise CaseNotFound(case_id)
    counterparties = list(
        source.CaseCounterparty.objects.filter(case_id=case_id)
        .order_by("counterparty__name", "counterparty__key")
        .values_list("counterparty__key", "counterparty__name")[: conf.get("CONTEXT_MAX_COUNTERPARTIES")]
    )
    deadlines = list(
        source.Deadline.objects.filter(case_id=case_id)
        # Open deadlines first, soonest first; then done ones, most recent first.
        .order_by(
            "done",
            SqlCase(When(done=False, then=F("due")), default=Value(None), output_field=DateField()).asc(),
            F("due").desc(),
            "key",
        )
        .values("key", "title", "due", "done")[: conf.get("CONTEXT_MAX_DEADLINES")]
    )
    invoices = list(
        source.Invoice.objects.filter(case_id=case_id)
        .order_by("-issued", "-id")
        .values("key", "number", "issued", "amount", "currency", "status")[: conf.get("CONTEXT_MAX_INVOICES")]
    )
    notes = list(
        source.Note.objects.filter(case_id=case_id)
        .order_by("-created", "-id")
        .annotate(text_head=Left("text", item_max + 1))
        .values("key", "created", "text_head")[: conf.get("CONTEXT_MAX_NOTES")]
    )
    drafts = list(
        source.Draft.objects.filter(case_id=case_id)
        .order_by("-created", "-id")
        .annotate(text_head=Left("text", item_max + 1))
        .values("key", "title", "created", "text_head")[: conf.get("CONTEXT_MAX_DRAFTS")]
    )
    # Only the first pages of each document, each cut in SQL, so a 500-page
    # scan costs no more to read than a one-page letter.
    pages_sql = (
        f"ARRAY(SELECT left(p, %s) FROM unnest({connection.ops.quote_name(Document._meta.db_table)}.pages[1:%s]) "
        "WITH ORDINALITY AS u(p, n) ORDER BY n)"
    )
    documents = list(
        Document.objects.filter(case_id=case_id, status=Document.Status.PROCESSED)
        .order_by("-created", "-id")
        .annotate(first_pages=RawSQL(pages_sql, (item_max + 1, conf.get("CONTEXT_MAX_PAGES_PER_DOCUMENT"))))
        .values("key", "title", "created", "first_pages")[: conf.get("CONTEXT_MAX_DOCUMENTS")]
    )

    status_labels = dict(Case.Status.choices)
    invoice_labels = dict(source.Invoice.Status.choices)
    # (source id, kind, label, the record's own text, its fields)
    candidates: list[tuple[str, str, str, str, dict[str, Any]]] = [
        (
            "case:header",
            "header",
            f"Case {header['key']}: {header['title']}. Status: {status_labels.get(header['status'], header['status'])}."
            f" Opened: {_day(header['opened'])}. ",
            header["description_head"],
            {
                "reference": header["key"],
                "title": header["title"],
                "status": status_labels.get(header["status"], header["status"]),
                "opened": header["opened"],
            },
        ),
        (
            f"client:{header['client__key']}",
            "client",
            "Client: ",
            header["client__name"],
            {"name": header["client__name"], "role": "client"},
        ),
    ]
    candidates += [
        (f"counterparty:{key}", "counterparty", "Counterparty: ", name, {"name": name, "role": "counterparty"})
        for key, name in counterparties
    ]
    candidates += [
        (
            f"deadline:{d['key']}",
            "deadline",
            "",
            f"Deadline “{d['title']}”: due {_day(d['due'])}, {'done' if d['done'] else 'open'}.",
            {"title": d["title"], "due": d["due"], "done": d["done"]},
        )
        for d in deadlines
    ]
    candidates += [
        (
            f"invoice:{i['key']}",
            "invoice",
            "",
            f"Invoice {i['number']} issued {_day(i['issued'])}: {i['currency']} {_amount(i['amount'])},"
            f" {invoice_labels.get(i['status'], i['status']).lower()}.",
            {
                "number": i["number"],
                "issued": i["issued"],
                "amount": i["amount"],
                "currency": i["currency"],
                "status": invoice_labels.get(i["status"], i["status"]).lower(),
            },
        )
        for i in invoices
    ]
    candidates += [
        (
            f"note:{n['key']}",
            "note",
            f"Working note ({_day(n['created'])}): ",
            n["text_head"],
            {"title": "", "date": n["created"]},
        )
        for n in notes
    ]
    candidates += [
        (
            f"draft:{d['key']}",
            "draft",
            f"Draft “{d['title']}” ({_day(d['created'])}): ",
            d["text_head"],
            {"title": d["title"], "date": d["created"]},
        )
        for d in drafts
    ]
    for doc in documents:
        for number, page in enumerate(doc["first_pages"] or [], start=1):
            if page and page.strip():
                label = f"Document “{doc['title']}” ({_day(doc['created'])}), page {number}: "
                fields = {"title": doc["title"], "date": doc["created"], "page": number}
                candidates.append((f"document:{doc['key']}#p{number}", "document", label, page, fields))

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
        case_id=header["pk"],
        firm_id=header["firm_id"],
        case_key=header["key"],
        title=header["title"],
        description=clip(header["description_head"], item_max),
        client_name=header["client__name"],
        counterparty_names=tuple(name for _, name in counterparties),
        items=tuple(items),
        omitted=omitted,
    )
