"""The write-back guard: a note may not carry into a case the facts of a case its audience may not all open.

A note filed into case T is read by everyone who may open T (briefs, search,
`sources/note:…`). Before it is stored, its text is compared with what the
filer can see *outside* T's audience: the *crossing* cases, those the filer may
open that at least one person who may open T may not (firm admins see every
case of their firm, so they never make a case crossing). A fact of a crossing
case found in the note, and not a fact of T itself, refuses the note.

Right by construction rather than by a list of cases:
- the crossing cases are one statement built from the wall's own definition
  (`access.visible_case_ids_sql` of the filer, and of each member of T's
  audience, `access.case_audience`): only cases the filer may open are ever
  read, so a case hidden from the filer is never a match source, and a
  refusal never tells the filer anything they could not open themselves;
- a fact T holds too (its own client, its own dates, a sentence of its own
  records) never refuses a note, however many other cases hold it.

What is compared (SQL over the map, the summaries and the records; no model):
party names from the connection map and case references, looked up from the
note's side over every crossing case (indexed: `Node.party_key`/`name_key`,
the host's case reference); and, for the NOTE_GUARD_MAX_CASES most recently
active crossing cases, case titles, amounts, dates, identifiers and verbatim
runs of RUN_WORDS words of their header, their records as the summary slice
reads them, and their summaries (facts.py says how formats are normalised).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from django.db.models import Q
from django.db.models.expressions import RawSQL
from django.db.models.functions import Upper

from graph_memory import conf
from graph_memory.adapter import RECORD_KINDS, CaseHeader, Record, SliceLimits, case_model, get_adapter
from graph_memory.adapter import firm_cases as firm_cases_of
from graph_memory.map.names import MAX_QUERY_WORDS, lookup_key, party_key
from graph_memory.models import CaseSummary, Edge, NoteRefusal
from graph_memory.plumbing.stmt import Stmt, sql
from graph_memory.wall import access
from graph_memory.wall.writeback.facts import RUN_WORDS, Facts, Probe, facts_of, phrases_of, words_of

KINDS = ("party", "case", "reference", "identifier", "amount", "date", "run")
_TITLE_WORDS_MAX = 16  # a case title longer than this is looked for by its first words' runs like any text
_NAME_MIN_CHARS = 3
_SPAN_WORDS_SHOWN = 24
_TOKEN = re.compile(r"\w(?:[\w./-]*\w)?")
# The target case is read more fully than a crossing one: a fact of its own must never refuse a note.
_TARGET_LIMITS = SliceLimits(
    per_kind=dict.fromkeys(RECORD_KINDS, 200), counterparties=1000, text_chars=50_000, pages_per_document=50
)


@dataclass(frozen=True)
class Match:
    kind: str  # one of KINDS
    value: str  # as the note has it (a name, an amount, a run of words), for the filer's eyes only
    case_id: int  # the filer's crossing case it belongs to


@dataclass(frozen=True)
class CaseName:
    reference: str
    title: str


class NoteCrossesWall(Exception):
    """The note carries facts of cases outside the target case's audience; nothing was filed.

    `matches` and `cases` name only the filer's own cases (they may open them).
    """

    field = "text"

    def __init__(self, matches: list[Match], cases: dict[int, CaseName]) -> None:
        self.matches = matches
        self.cases = cases
        super().__init__(self.describe())

    def describe(self) -> str:
        by_case: dict[int, list[Match]] = defaultdict(list)
        for m in self.matches:
            by_case[m.case_id].append(m)
        parts = []
        for case_id, found in sorted(by_case.items(), key=lambda item: self.cases[item[0]].reference):
            name = self.cases[case_id]
            what = ", ".join(f"{_LABELS[m.kind]} “{m.value}”" for m in found)
            parts.append(f"from your case {name.reference} “{name.title}”: {what}")
        return (
            "Not filed: this note carries facts of other cases that not everyone who may open this case may "
            "open (" + "; ".join(parts) + "). Leave them out, or file the note into the case they belong to."
        )


_LABELS = {
    "party": "party", "case": "case", "reference": "case number", "identifier": "identifier",
    "amount": "amount", "date": "date", "run": "words quoted verbatim",
}  # fmt: skip


@dataclass
class _CaseFacts:
    facts: Facts = field(default_factory=Facts)
    names: dict[str, tuple[str, str]] = field(default_factory=dict)  # folded name -> (kind, as written)
    folded: str = ""  # every word of the case's texts, folded, space-delimited (a name of its own is in it)


def _each(template: str, parts: list[tuple[str, tuple[Any, ...]]], joiner: str) -> Stmt:
    """`template`, whose `{part}` is a statement, once for each of `parts` (SQL and parameters), joined by `joiner`."""
    names = {f"part_{i}": Stmt(*part) for i, part in enumerate(parts)}
    return sql(joiner.join(template.replace("{part}", f"{{{name}}}") for name in names), **names)


def crossing_case_ids_sql(*, holders: list[Any], case_id: int, firm_id: int) -> tuple[str, tuple[Any, ...]] | None:
    """The ids of the cases any of `holders` may open that someone who may open `case_id` may not, as SQL
    and parameters (one column); None when there are none. `case_id` itself is never one.

    Filing a note, `holders` is the filer; the lint passes the case's audience. A host whose adapter
    cannot say who may open a case (`case_member_ids`) has every other case of the holders crossing.
    """
    held = [s for s in (access.visible_case_ids_sql(h) for h in holders) if s is not None]
    if not held:
        return None
    audience = access.case_audience(case_id=case_id, firm_id=firm_id)
    crossing = sql(
        "SELECT h.id FROM ({held}) h(id) WHERE h.id <> %(case)s", held=_each("({part})", held, " UNION "), case=case_id
    )
    if audience is not None:
        # A lone holder sees all of their own cases: asking for theirs again would change nothing.
        mine = {h.pk for h in holders} if len(holders) == 1 else set()
        readers = [s for s in (access.visible_case_ids_sql(u) for u in audience if u.pk not in mine) if s is not None]
        if not readers:
            return None
        every = _each("h.id IN ({part})", readers, " AND ")
        crossing = sql("{crossing} AND NOT ({every})", crossing=crossing, every=every)
    return crossing.sql, crossing.params


@dataclass(frozen=True)
class _Header:
    reference: str
    title: str
    description: str
    opened: date | None
    parties: tuple[str, ...]

    @classmethod
    def of(cls, header: CaseHeader) -> _Header:
        parties = ([header.client] if header.client else []) + list(header.counterparties)
        return cls(header.reference, header.title, header.description, header.opened, tuple(p.name for p in parties))


def _headers(case_ids: list[int]) -> dict[int, _Header]:
    """The headers of many cases in one query (the adapter's brief annotations)."""
    if not case_ids:
        return {}
    annotations = get_adapter().case_header_annotations()
    wanted = ("reference", "title", "description", "opened", "client_name", "counterparty_names")
    rows = (
        case_model().objects.filter(pk__in=case_ids)
        .annotate(**{f"_h_{k}": annotations[k] for k in wanted}).values("pk", *(f"_h_{k}" for k in wanted))
    )  # fmt: skip
    return {
        row["pk"]: _Header(
            str(row["_h_reference"] or ""), str(row["_h_title"] or ""), str(row["_h_description"] or ""),
            row["_h_opened"], tuple(n for n in [row["_h_client_name"], *(row["_h_counterparty_names"] or [])] if n),
        )
        for row in rows
    }


def _texts(header: _Header | None, records: dict[str, list[Record]], summary: str) -> tuple[list[str], Facts]:
    """The case's texts, and the facts its fields hold as values (dates, amounts, numbers)."""
    texts, facts = [summary], Facts()
    if header is not None:
        texts += [header.reference, header.title, header.description]
        if header.opened:
            facts.dates.add(header.opened.isoformat())
    for record in (r for rs in records.values() for r in rs):
        texts += [record.title, record.text, *record.pages]
        for value in (record.date, *record.fields.values()):
            if isinstance(value, datetime):
                facts.dates.add(value.date().isoformat())
            elif isinstance(value, date):
                facts.dates.add(value.isoformat())
            elif isinstance(value, Decimal) and value:
                facts.amounts.add(format(value.normalize(), "f"))
            elif isinstance(value, str):
                texts.append(value)
    return [t for t in texts if t], facts


def _case_facts(
    header: _Header | None, records: dict[str, list[Record]], summary: str, probe: Probe, *, folded: bool = False
) -> _CaseFacts:
    """The facts one case shares with the note (`probe`), and its names; with `folded`, every word of its
    texts too (the target's: a name it holds anywhere is its own)."""
    texts, fielded = _texts(header, records, summary)
    note = probe.note
    out = _CaseFacts(
        facts=Facts(
            amounts=fielded.amounts & note.amounts, dates=fielded.dates & note.dates,
            identifiers=fielded.identifiers & note.identifiers,
        )
    )  # fmt: skip
    folded_parts = []
    for text in texts:
        words = words_of(text) if folded or note.runs else None
        if folded and words is not None:
            folded_parts.append(" ".join(words))
        out.facts |= probe.found_in(text, words)
    out.folded = " " + " | ".join(folded_parts) + " "
    if header is not None:
        out.facts.identifiers.add(header.reference.upper())
        if len(words_of(header.title)) >= 2:  # a one-word title ("Arbitration") names no case
            out.names[lookup_key(header.title)] = ("case", header.title)
        for name in header.parties:
            for key in {lookup_key(name), party_key(name)}:
                if len(key) >= _NAME_MIN_CHARS:
                    out.names[key] = ("party", name)
    return out


def _slice_limits() -> SliceLimits:
    return SliceLimits(
        per_kind={kind: conf.get(f"CONTEXT_MAX_{kind.upper()}S") for kind in RECORD_KINDS},
        counterparties=conf.get("CONTEXT_MAX_COUNTERPARTIES"),
        text_chars=conf.get("CONTEXT_ITEM_MAX_CHARS"),
        pages_per_document=conf.get("CONTEXT_MAX_PAGES_PER_DOCUMENT"),
    )


def _unnest(values: set[str]) -> RawSQL:
    statement = sql("SELECT unnest(%(values)s::text[])", values=sorted(values))
    return RawSQL(statement.sql, statement.params)


def _spans(words: list[str], hits: set[str]) -> list[str]:
    """The note's words covered by matching runs, merged into maximal spans (shown to the filer)."""
    covered = [False] * len(words)
    for i in range(len(words) - RUN_WORDS + 1):
        if " ".join(words[i : i + RUN_WORDS]) in hits:
            covered[i : i + RUN_WORDS] = [True] * RUN_WORDS
    spans, start = [], None
    for i, on in enumerate([*covered, False]):
        if on and start is None:
            start = i
        elif not on and start is not None:
            span = words[start:i]
            spans.append(" ".join(span[:_SPAN_WORDS_SHOWN]) + (" …" if len(span) > _SPAN_WORDS_SHOWN else ""))
            start = None
    return spans


def note_crossings(
    *, holders: list[Any], case_id: int, firm_id: int, text: str, note_key: str | None = None
) -> tuple[list[Match], dict[int, CaseName]]:
    """The facts of `text` that belong to a crossing case (of `holders`, for case `case_id`) and not to the
    case itself, and the names of the cases they come from. Reads only cases the holders may open.
    `note_key`: the text is that note of the case, already stored (the lint), not one of its own facts."""
    crossing = crossing_case_ids_sql(holders=holders, case_id=case_id, firm_id=firm_id)
    if crossing is None:
        return [], {}
    adapter = get_adapter()
    words = words_of(text)
    phrases = phrases_of(words, _TITLE_WORDS_MAX)
    note = facts_of(text)
    note.identifiers |= {t.upper() for t in _TOKEN.findall(text) if len(t) >= 4 and any(c.isdigit() for c in t)}
    in_crossing = RawSQL(*crossing)
    firm_cases = firm_cases_of(firm_id)

    summaries = dict(CaseSummary.objects.filter(firm_id=firm_id, case_id=case_id).values_list("case_id", "text"))
    own_header = adapter.case_header(case_id=case_id, limits=_TARGET_LIMITS)
    own_records = adapter.case_records(case_id=case_id, limits=_TARGET_LIMITS)
    own_records["note"] = [r for r in own_records.get("note", []) if r.key != note_key]
    # A stored note checked again (the lint) is in the summary too, when it was compiled: the summary then
    # cannot say what is the case's own, and only its records do.
    summary = summaries.get(case_id, "") if note_key is None else ""
    probe = Probe(note)
    target = _case_facts(
        _Header.of(own_header) if own_header is not None else None, own_records, summary, probe, folded=True
    )
    target_parties = set(
        Edge.objects.filter(case_id=case_id, kind__in=(Edge.Kind.FOR_CLIENT, Edge.Kind.AGAINST))
        .values_list("target__party_key", flat=True)
    )  # fmt: skip

    def own(key: str) -> bool:
        return key in target.names or key in target_parties or f" {key} " in target.folded

    found: dict[tuple[str, str, int], Match] = {}

    def add(kind: str, value: str, source: int) -> None:
        found.setdefault((kind, value, source), Match(kind, value, source))

    # Party names from the map, over every crossing case: the note's phrases looked up by index.
    name_keys = {p for p in phrases_of(words, MAX_QUERY_WORDS) if len(p) >= _NAME_MIN_CHARS}
    if name_keys:
        parties = (
            Edge.objects.filter(firm_id=firm_id, kind__in=(Edge.Kind.FOR_CLIENT, Edge.Kind.AGAINST))
            .filter(case_id__in=in_crossing)
            .filter(Q(target__party_key__in=_unnest(name_keys)) | Q(target__name_key__in=_unnest(name_keys)))
            .values_list("case_id", "target__label", "target__party_key", "target__name_key")
        )
        for source, label, pkey, nkey in parties:
            if not (own(pkey) or own(nkey)):
                add("party", label, source)
    # Case numbers, over every crossing case.
    tokens = {t.upper() for t in _TOKEN.findall(text)}
    references = (
        firm_cases.filter(pk__in=in_crossing).annotate(_r=Upper(adapter.case_reference()))
        .filter(_r__in=_unnest(tokens)).values_list("pk", "_r")
    )  # fmt: skip
    for source, reference in references:
        if reference not in target.facts.identifiers and f" {lookup_key(reference)} " not in target.folded:
            add("reference", reference, source)
    # Everything else, from the most recently active crossing cases' texts.
    recent = list(
        firm_cases.filter(pk__in=in_crossing).order_by(adapter.case_activity().desc(), "-pk")
        .values_list("pk", flat=True)[: int(conf.get("NOTE_GUARD_MAX_CASES"))]
    )  # fmt: skip
    summaries = dict(CaseSummary.objects.filter(firm_id=firm_id, case_id__in=recent).values_list("case_id", "text"))
    headers = _headers(recent)
    records = adapter.cases_records(case_ids=recent, limits=_slice_limits())
    for source in recent:
        other = _case_facts(headers.get(source), records.get(source, {}), summaries.get(source, ""), probe)
        for key, (kind, name) in other.names.items():
            if key in phrases and not own(key):
                add(kind, name, source)
        for kind, mine, theirs, ours in (
            ("amount", note.amounts, other.facts.amounts, target.facts.amounts),
            ("date", note.dates, other.facts.dates, target.facts.dates),
            ("identifier", note.identifiers, other.facts.identifiers, target.facts.identifiers),
        ):
            for value in sorted((mine & theirs) - ours):
                add(kind, f"{Decimal(value):,}" if kind == "amount" else value, source)
        hits = (note.runs & other.facts.runs) - target.facts.runs
        for span in _spans(words, hits):
            add("run", span, source)
    matches = sorted(found.values(), key=lambda m: (m.case_id, KINDS.index(m.kind), m.value))
    names = {
        pk: CaseName(ref, title)
        for pk, ref, title in firm_cases.filter(pk__in={m.case_id for m in matches})
        .annotate(_r=adapter.case_reference(), _t=adapter.case_title()).values_list("pk", "_r", "_t")
    }
    return matches, names


def note_guard(*, filer: Any, case_id: int, title: str, text: str) -> None:
    """Refuse a note that would carry facts of the filer's crossing cases into case `case_id`.

    Promises: reads only cases `filer` may open (a hidden case is never a match source, so a
    hidden case's facts in a note are stored like any text and their refusal can never leak
    it); a refusal raises `NoteCrossesWall`, naming what matched and from which of the filer's
    cases, after recording it (`NoteRefusal`: kinds and case ids, never the note's text).
    """
    firm_id = access.viewer_firm_id(filer)
    if firm_id is None:
        return
    matches, cases = note_crossings(holders=[filer], case_id=case_id, firm_id=firm_id, text=f"{title}\n{text}")
    if not matches:
        return
    NoteRefusal.objects.create(
        firm_id=firm_id,
        case_id=case_id,
        filer=filer,
        kinds=sorted({m.kind for m in matches}, key=KINDS.index),
        source_case_ids=sorted({m.case_id for m in matches}),
        matches=len(matches),
    )
    raise NoteCrossesWall(matches, cases)
