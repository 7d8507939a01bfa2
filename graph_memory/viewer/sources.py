"""Opening what a summary cites: one source of one case, as the host holds it now, for one viewer.

Every statement of a summary cites source ids (summaries/context.py names
them): `case:header`, `client:<key>`, `counterparty:<key>`, `deadline:<key>`,
`invoice:<key>`, `note:<key>`, `draft:<key>` and `document:<key>#p<page>`.
`source_get` turns one of them back into the live record — its current text
and fields, uncut, read through the host's adapter — so "verify against the
live file" is one call. The text is served in windows of characters
(`offset`, `limit`), never silently cut: the answer says how long the whole
text is and where the next window starts.

The wall: the case is reached through the viewer's own visible cases
(`selectors.node_get`, which embeds `access.visible_case_ids`), and the
record through that case's id only. An id that is malformed, does not exist,
belongs to another case, or to a case the viewer may not open raises the one
`access.NotFound`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from graph_memory import conf
from graph_memory.adapter import RECORD_KINDS, NotSupported, Record, SliceLimits, Viewer, get_adapter
from graph_memory.models import Node
from graph_memory.viewer.selectors import NodeRef, node_get
from graph_memory.wall import access

# A source id as the context slice writes it; keys are the host's, so anything but the separators.
_SOURCE_ID = re.compile(r"(?P<kind>[a-z]+):(?P<key>[^#\s]{1,200}?)(?:#p(?P<page>[1-9][0-9]{0,5}))?")
SOURCE_ID_MAX_CHARS = 220
# Reading the header of one case for a source: every counterparty (a source may name any of them).
_HEADER_LIMITS = SliceLimits(per_kind={}, counterparties=1000, text_chars=10**9, pages_per_document=0)


@dataclass(frozen=True)
class Source:
    """One window of one source's current text, with its fields."""

    case: NodeRef
    id: str
    kind: str
    title: str
    date: date | datetime | None
    fields: dict[str, Any]  # JSON-ready: dates as ISO 8601, amounts as strings
    text: str  # text[offset : offset + limit]
    offset: int
    total_chars: int  # the whole text's length
    next_offset: int | None  # where the next window starts; None when this one reaches the end

    @property
    def truncated(self) -> bool:
        return self.next_offset is not None


def case_node_get(*, viewer: Viewer, case_node_id: Any) -> tuple[NodeRef, int]:
    """The case node and case id if the viewer may open that case; `NotFound` for anything else.

    A case node is reachable only through its own case's edges, so `node_get`
    (one query, the wall inside it) answers exactly "may this viewer open it".
    A node of another kind is a not-found too, with the same exception.
    """
    node = node_get(viewer=viewer, node_id=case_node_id)
    if node.kind != Node.Kind.CASE:
        raise access.NotFound
    return NodeRef.of(node), int(node.ref_id)


def _parse_source_id(source_id: Any) -> tuple[str, str, int | None]:
    """(kind, key, page) of a source id; `NotFound` for anything that is not one (same as unknown)."""
    if not isinstance(source_id, str) or len(source_id) > SOURCE_ID_MAX_CHARS:
        raise access.NotFound
    match = _SOURCE_ID.fullmatch(source_id)
    if match is None:
        raise access.NotFound
    kind, key, page = match["kind"], match["key"], match["page"]
    if (kind == "document") != (page is not None):  # a document is cited by page; nothing else has pages
        raise access.NotFound
    if kind == "case" and key != "header":
        raise access.NotFound
    if kind not in ("case", "client", "counterparty", *RECORD_KINDS):
        raise access.NotFound
    return kind, key, int(page) if page else None


def _plain(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return f"{value:.2f}"
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _day(value: Any) -> str:
    return (value.date() if isinstance(value, datetime) else value).isoformat() if value else ""


def _record_text(record: Record) -> str:
    """The record's own text; deadlines and invoices, which have none, as the slice words their fields."""
    f = record.fields
    if record.kind == "deadline":
        due = f"due {_day(f.get('due'))}, " if f.get("due") else ""
        return f"Deadline “{f.get('title', record.title)}”: {due}{'done' if f.get('done') else 'open'}."
    if record.kind == "invoice":
        amount = f.get("amount")
        money = f"{f.get('currency', '')} {amount:,.2f}".strip() if isinstance(amount, Decimal) else str(amount or "")
        issued = f" issued {_day(f.get('issued'))}" if f.get("issued") else ""
        return f"Invoice {f.get('number', record.title)}{issued}: {money}, {f.get('status', '')}."
    if record.kind == "document":
        return record.pages[0] if record.pages else ""
    return record.text


def _window(text: str, offset: int, limit: int) -> tuple[str, int | None]:
    chunk = text[offset : offset + limit]
    end = offset + len(chunk)
    return chunk, (end if end < len(text) else None)


def _limit(limit: int | None) -> int:
    if limit is None:
        return int(conf.get("SOURCE_CHARS_DEFAULT"))
    most = int(conf.get("SOURCE_CHARS_MAX"))
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= most:
        raise ValueError(f"limit must be an integer from 1 to {most}")
    return limit


def source_get(*, viewer: Viewer, case_node_id: Any, source_id: Any, offset: int = 0, limit: int | None = None) -> Source:
    """One source of a case the viewer may open, as the host holds it now, text windowed by characters.

    Promises: hidden, absent, malformed, another case's and unknown source ids
    all raise the same `access.NotFound`; nothing is written or cached. `limit`
    is 1..SOURCE_CHARS_MAX characters (default SOURCE_CHARS_DEFAULT); an offset
    at or past the end gives an empty window with the true `total_chars`.
    Raises `NotSupported` when the adapter cannot read single records (header
    and party sources still open). Two or three queries, whatever the case holds.
    """
    limit = _limit(limit)
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValueError("offset must be a non-negative integer")
    kind, key, page = _parse_source_id(source_id)
    adapter = get_adapter()
    if kind in RECORD_KINDS and not adapter.supports("case_record"):
        raise NotSupported("case_record")
    case, case_id = case_node_get(viewer=viewer, case_node_id=case_node_id)
    title, when, fields, text = "", None, {}, ""
    if kind in RECORD_KINDS:
        record = adapter.case_record(case_id=case_id, kind=kind, key=key, page=page)
        if record is None or record.kind != kind:
            raise access.NotFound
        title, when, text = record.title, record.date, _record_text(record)
        fields = {"title": record.title, "date": record.date, **dict(record.fields)}
        if page is not None:
            fields["page"] = page
        if kind == "note":
            fields["assistant_filed"] = bool(fields.get("origin"))
    else:
        header = adapter.case_header(case_id=case_id, limits=_HEADER_LIMITS)
        if header is None:
            raise access.NotFound
        if kind == "case":
            title, text = header.title, header.description
            fields = {
                "reference": header.reference,
                "title": header.title,
                "status": header.status,
                "opened": header.opened,
                "client": header.client.name if header.client else None,
                "counterparties": [p.name for p in header.counterparties],
            }
        else:
            parties = ([header.client] if header.client else []) + list(header.counterparties)
            party = next((p for p in parties if p.role == kind and p.key == key), None)
            if party is None:
                raise access.NotFound
            title, text, fields = party.name, party.name, {"name": party.name, "role": party.role}
    chunk, next_offset = _window(text, offset, limit)
    return Source(
        case=case,
        id=source_id,
        kind=kind,
        title=title,
        date=when,
        fields=_plain(fields),
        text=chunk,
        offset=offset,
        total_chars=len(text),
        next_offset=next_offset,
    )
