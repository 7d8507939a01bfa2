"""Filing back into a case: the assistant stores a note the lawyer chose to keep, as a new raw source.

The wiki pattern's "good answers get filed back", behind the wall: a case has
one fixed audience, so a note filed into it is seen by exactly that audience
(briefs, search and sources of that case), and by nobody else. The note is
the host's record, written through the adapter (`MemoryAdapter.file_note`; the
memory writes nothing else of the host's): stored verbatim, attributed to the
viewer, marked assistant-filed by its origin, never edited afterwards (a
correction is a new note). Filing flags the case stale in the same
transaction, so the next nightly rewrite compiles the note into the summary
like any working note, citing `note:<key>`.

Because the audience is fixed, what goes in must be fit for all of it
(issue 31): the write-back guard (`writeback.guard`) refuses a note carrying
facts of another case the filer may open and someone on this case may not,
and a source id the note cites ("[invoice:inv-42]") must name a record of
this case, since the audience would open it here.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from django.core.cache import cache
from django.db import connection, transaction

from graph_memory import conf
from graph_memory.adapter import NoteOrigin, NotSupported, Viewer, get_adapter
from graph_memory.consent.exclusions import MemoryExcluded, case_excluded
from graph_memory.models import NoteFiling
from graph_memory.plumbing.stmt import sql
from graph_memory.refresh.marking import mark_stale
from graph_memory.viewer.selectors import NodeRef
from graph_memory.viewer.sources import case_node_get, source_get
from graph_memory.wall import access
from graph_memory.wall.writeback.guard import note_guard

ORIGIN_ID_MAX_CHARS = 200
ORIGIN_MAX_MESSAGES = 100
IDEMPOTENCY_KEY_MAX_CHARS = 200
IDEMPOTENCY_HEADER = "Idempotency-Key"
_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
CITATIONS_MAX = 50
# A source id as summaries cite it, inside a note's text: "case:header", "invoice:inv-42", "document:spa#p2".
_CITATION = re.compile(
    r"(?<![\w:/.-])(?:case:header|(?:client|counterparty|deadline|invoice|note|draft):[\w-]+(?:\.[\w-]+)*"
    r"|document:[\w-]+(?:\.[\w-]+)*#p[1-9][0-9]{0,5})(?![\w:/#-])"
)


class NoteInvalid(ValueError):
    """Bad input for a note; `field` names it. Nothing was written."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class NoteRateLimited(Exception):
    """The viewer filed NOTE_RATE notes in the current period; `wait` seconds until the next one counts."""

    def __init__(self, wait: int) -> None:
        super().__init__(f"Too many notes filed; try again in {wait} seconds.")
        self.wait = wait


@dataclass(frozen=True)
class FiledNote:
    case: NodeRef
    source_id: str  # "note:<key>": what a summary will cite, what the source endpoint opens
    title: str
    text: str
    origin: NoteOrigin
    created: date | datetime | None
    assistant_filed: bool = True
    replayed: bool = False  # an earlier filing with the same idempotency key: this is that note, nothing was written


def _unencodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _checked(title: Any, text: Any, origin: NoteOrigin, idempotency_key: Any = None) -> tuple[str, str, NoteOrigin]:
    if idempotency_key is not None and (
        not isinstance(idempotency_key, str)
        or not 1 <= len(idempotency_key) <= IDEMPOTENCY_KEY_MAX_CHARS
        or not all(" " <= c <= "~" for c in idempotency_key)
    ):
        raise NoteInvalid(
            IDEMPOTENCY_HEADER, f"An idempotency key is 1 to {IDEMPOTENCY_KEY_MAX_CHARS} printable ASCII characters."
        )
    if not isinstance(text, str) or not text.strip():
        raise NoteInvalid("text", "This field may not be blank.")
    if len(text) > int(conf.get("NOTE_MAX_CHARS")):
        raise NoteInvalid("text", f"Ensure this field has no more than {conf.get('NOTE_MAX_CHARS')} characters.")
    if not isinstance(title, str) or not title.strip():
        raise NoteInvalid("title", "This field may not be blank.")
    if len(title) > int(conf.get("NOTE_TITLE_MAX_CHARS")):
        raise NoteInvalid("title", f"Ensure this field has no more than {conf.get('NOTE_TITLE_MAX_CHARS')} characters.")
    for field, value in (("title", title), ("text", text)):
        if "\x00" in value:  # PostgreSQL text cannot hold it; refuse rather than alter the verbatim text
            raise NoteInvalid(field, "Null characters are not allowed.")
        if _unencodable(value):  # a lone surrogate ("\ud800" in JSON): not text PostgreSQL can store
            raise NoteInvalid(field, "Text must be valid Unicode (no lone surrogates).")
    ids = (origin.conversation_id, *origin.message_ids)
    if len(origin.message_ids) > ORIGIN_MAX_MESSAGES:
        raise NoteInvalid("origin", f"At most {ORIGIN_MAX_MESSAGES} message ids.")
    if any(not isinstance(i, str) or len(i) > ORIGIN_ID_MAX_CHARS or "\x00" in i or _unencodable(i) for i in ids):
        raise NoteInvalid("origin", f"Ids are strings of at most {ORIGIN_ID_MAX_CHARS} characters.")
    return title, text, origin


def _count_attempt(viewer: Viewer) -> None:
    """Count one filing attempt against NOTE_RATE, before the case is looked up.

    Counted before the lookup so that an attempt on a hidden case costs the
    same as one on an open case: the rate says nothing about which exists.
    A fixed window in the default cache (shared by every process, like the
    API's throttle); add-then-incr, so concurrent attempts may overshoot by
    a few, never undercount for long.
    """
    rate = conf.get("NOTE_RATE")
    if rate is None:
        return
    count, period = rate.split("/")
    seconds = _PERIODS[period[0]]
    window = int(time.time() // seconds)
    key = f"graph_memory:notes:{viewer.pk}:{window}"
    cache.add(key, 0, timeout=seconds + 1)
    try:
        used = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=seconds + 1)
        used = 1
    if used > int(count):
        raise NoteRateLimited(wait=max(1, int(seconds - time.time() % seconds)))


def _check_citations(*, viewer: Viewer, case_node_id: Any, fields: dict[str, str]) -> None:
    """Every source id a note cites must open in its own case; `NoteInvalid` naming the field otherwise.

    A source id names a record relative to a case, so one of another case would open nothing
    here, or worse, what that id means here. At most CITATIONS_MAX are looked up (one query each).
    """
    cited = [(f, c) for f, value in fields.items() for c in dict.fromkeys(_CITATION.findall(value))]
    if not cited:
        return
    if len(cited) > CITATIONS_MAX:
        raise NoteInvalid(cited[0][0], f"A note may cite at most {CITATIONS_MAX} sources.")
    for field, source_id in cited:
        try:
            source_get(viewer=viewer, case_node_id=case_node_id, source_id=source_id, limit=1)
        except (access.NotFound, NotSupported):
            raise NoteInvalid(
                field, f"It cites {source_id}, which is not a record of this case: a note may cite only its own case's records."
            ) from None


def _digest(*parts: str) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()


def _filing_key(*, idempotency_key: str | None, case_id: int, origin: NoteOrigin) -> tuple[str | None, bool]:
    """The digest a filing is known by, and whether it is the client's own key: the header's, else the origin's.

    An origin names the messages a note keeps, so the same messages filed into the same case again
    are the same note; without message ids there is nothing to know it by, and every filing is new.
    """
    if idempotency_key is not None:
        return _digest("header", idempotency_key), True
    if origin.message_ids:
        return _digest("origin", str(case_id), origin.conversation_id, *sorted(origin.message_ids)), False
    return None, False


def _claim_key(*, firm_id: int, filer: Viewer, key: str, case_id: int, fingerprint: str) -> int | None:
    """Insert the key's row and return its id; None if the key is taken.

    ON CONFLICT DO NOTHING against the unique key: a concurrent filing with the same key waits here
    until the first one's transaction ends, then finds its row (or, if it rolled back, takes the key).
    """
    claim = sql(
        f"INSERT INTO {NoteFiling._meta.db_table} (firm_id, filer_id, key, case_id, fingerprint, note_key, created_at) "
        "VALUES (%(firm)s, %(filer)s, %(key)s, %(case)s, %(fingerprint)s, '', now()) "
        "ON CONFLICT (firm_id, filer_id, key) DO NOTHING RETURNING id",
        firm=firm_id, filer=filer.pk, key=key, case=case_id, fingerprint=fingerprint,
    )  # fmt: skip
    with connection.cursor() as cursor:
        row = claim.execute(cursor).fetchone()
    return None if row is None else int(row[0])


def _first_note(filing: NoteFiling, *, case: NodeRef, title: str, text: str, origin: NoteOrigin) -> FiledNote | None:
    """The note filed under `filing`'s key as the host holds it now; None if the host no longer has it."""
    adapter = get_adapter()
    if not adapter.supports("case_record"):
        # Nothing to read it back with: the same key (and fingerprint, or origin) stands for what was sent.
        return FiledNote(case, f"note:{filing.note_key}", title, text, origin, filing.created_at, replayed=True)
    record = adapter.case_record(case_id=filing.case_id, kind="note", key=filing.note_key)
    if record is None:
        return None
    kept = record.fields.get("origin")  # a NoteOrigin-like mapping, or None (adapter.case_record)
    if isinstance(kept, NoteOrigin):
        first_origin = kept
    elif isinstance(kept, Mapping):
        first_origin = NoteOrigin(str(kept.get("conversation_id", "")), tuple(kept.get("message_ids", ())))
    else:
        first_origin = NoteOrigin()
    return FiledNote(case, f"note:{record.key}", record.title, record.text, first_origin, record.date, replayed=True)


def note_file(
    *,
    viewer: Viewer,
    case_node_id: Any,
    title: Any,
    text: Any,
    origin: NoteOrigin | None = None,
    idempotency_key: str | None = None,
) -> FiledNote:
    """File an assistant note, verbatim, into a case the viewer may open; flag the case stale.

    Promises: the text and title are stored exactly as given (no trimming or
    rewriting), attributed to `viewer`, with `origin`; the note and the stale
    flag commit together or not at all. Bad input raises `NoteInvalid` naming
    the field; more than NOTE_RATE attempts per period raise `NoteRateLimited`;
    a host adapter without notes raises `NotSupported` (all before anything
    is read). A case the viewer may not open, or that does not exist, raises
    `access.NotFound` and nothing is written. A cited source id that is not a
    record of the case raises `NoteInvalid` ("title" or "text"); a note carrying
    facts of a case outside the case's audience raises `NoteCrossesWall`,
    recorded, naming only the viewer's own cases; nothing is written then either.
    A case excluded from the memory (consent), once the viewer may open it, raises
    `MemoryExcluded` and nothing is written.

    Idempotent by `idempotency_key` (the client's Idempotency-Key), or else by
    the origin's message ids in this case: a filing whose key is known returns
    the first note, `replayed`, and writes nothing, concurrent duplicates
    included (`NoteFiling`'s unique key). Every check above still runs first,
    the guard included, so a repeat never returns a note to a viewer who may no
    longer open the case, nor lets a refused text through. The same client key
    sent with another note raises `NoteInvalid` ("Idempotency-Key").
    """
    origin = origin or NoteOrigin()
    title, text, origin = _checked(title, text, origin, idempotency_key)
    adapter = get_adapter()
    if not adapter.supports("file_note"):
        raise NotSupported("file_note")
    _count_attempt(viewer)
    case, case_id = case_node_get(viewer=viewer, case_node_id=case_node_id)
    # After the wall: a hidden case must answer as a nonexistent one, never as an excluded one.
    if case_excluded(case_id=case_id):
        raise MemoryExcluded(
            "Not filed: this case is excluded from the memory (the client's consent); file it in the case's records instead."
        )
    _check_citations(viewer=viewer, case_node_id=case_node_id, fields={"title": title, "text": text})
    note_guard(filer=viewer, case_id=case_id, title=title, text=text)
    key, own_key = _filing_key(idempotency_key=idempotency_key, case_id=case_id, origin=origin)
    fingerprint = _digest(str(case_id), title, text, origin.conversation_id, *origin.message_ids)
    firm_id = access.viewer_firm_id(viewer)
    if firm_id is None:  # not reached: case_node_get opened a case of the viewer's firm
        raise access.NotFound
    with transaction.atomic():
        claimed = None
        if key is not None:
            claimed = _claim_key(firm_id=firm_id, filer=viewer, key=key, case_id=case_id, fingerprint=fingerprint)
        if key is not None and claimed is None:
            first = NoteFiling.objects.get(firm_id=firm_id, filer=viewer, key=key)
            if own_key and first.fingerprint != fingerprint:
                # Named only in its own case: the user may no longer open the case of a key used elsewhere.
                named = f" (note:{first.note_key})" if first.case_id == case_id else ""
                raise NoteInvalid(
                    IDEMPOTENCY_HEADER, f"This key was used for another note{named}; send a new key for a new note."
                )
            replay = _first_note(first, case=case, title=title, text=text, origin=origin)
            if replay is not None:
                return replay
            # The host no longer has the first note: this filing takes the key over.
            NoteFiling.objects.filter(firm_id=firm_id, pk=first.pk).update(case_id=case_id, fingerprint=fingerprint)
            claimed = first.pk
        record = adapter.file_note(case_id=case_id, author=viewer, title=title, text=text, origin=origin)
        # The host may watch its note model too; flagging here keeps the promise for a host that does not.
        mark_stale(case_ids=[case_id])
        if claimed is not None:
            NoteFiling.objects.filter(firm_id=firm_id, pk=claimed).update(note_key=record.key)
    return FiledNote(
        case=case,
        source_id=f"note:{record.key}",
        title=record.title,
        text=record.text,
        origin=origin,
        created=record.date,
    )
