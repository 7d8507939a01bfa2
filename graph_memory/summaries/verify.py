"""Mechanical verification of written statements, each against the quote it carries.

A written statement is {"text", "sources", "quote"}: `quote` is a span the
writer copied from one cited record. The statement is kept only if every rule
below holds; the first rule it breaks is the reason it is dropped, recorded in
the report with a detail naming what was missing.

- `empty`, `too_long` (over rulebook.MAX_STATEMENT_CHARS), `contentless` (fewer
  than two words, or nothing but stop words, fillers such as "Yes", "No", "N/A"
  and the parties' names), `no_sources`, `unknown_source`
  (a cited id not in the slice), `no_quote`, `quote_too_long` (over
  rulebook.MAX_QUOTE_CHARS).
- `quote_not_in_source`: the quote is a substring of the text of a cited
  record after normalising whitespace, quotation marks and dashes; nothing
  looser (its own enclosing quotation marks and final punctuation mark are not
  part of the span). The kept statement cites that one record.
- `unsupported_date` / `_amount` / `_percentage` / `_identifier` / `_number`:
  every fact of the text (facts.py: dates, months, years, amounts with scale
  words in any case, percentages, identifiers, numbers in digits or in words)
  is a fact of the quote. A quoted date also supports its month and year, a
  quoted amount its bare figure.
- `unsupported_state`: every word of state in the text (paid, unpaid, met,
  missed, open, done, granted, denied, signed, settled, filed, served,
  dismissed, agreed, refused, closed ...) is in the quote, in one of its own
  forms ("settled" is not "settlement").
- `unsupported_negation`: a text with a negation ("not", "no", "never",
  "n't", "without" ...) needs one in its quote.
- `wrong_role`: a role word attached to a party ("X is the client",
  "counterparty X", "X, the counterparty") is that party's role in this case.
- `unknown_name` / `name_not_in_quote`: every name (facts.proper_terms:
  multi-word runs and capitalised words that do not start a sentence) is in
  the quote, is part of a party's name, or is the cited record's own heading
  opening the text as its source ("According to the Due Diligence Memo, ...",
  "The Due Diligence Memo states ...", citing that memo). Otherwise a name
  the slice writes capitalised elsewhere was taken from another record
  (`name_not_in_quote`); a phrase the slice writes only in lower case is
  ordinary words, left to the next rule; a phrase absent from the slice (an
  invented party, a heading such as "Billing Ledger" that no record has) is
  `unknown_name`.
- `uncovered`: at least SUMMARY_MIN_QUOTE_COVERAGE (default 0.75) of the
  text's content words, stemmed, are in the quote (words naming the cited
  record as the source, see `source_span`, aside).
  Content words are all but stop words, framing words ("according", "states",
  "note" ...), words of facts and words of the parties' names. So an invented
  event ("The court granted the motion.") or a number bound to another noun
  ("400 witnesses" from "400 Harbor Street") fails.
- `duplicate`: the same text (case, spacing and punctuation aside) as a
  statement kept before it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graph_memory import conf
from graph_memory.summaries.facts import (
    FILLERS,
    FRAMING,
    LEGAL_SUFFIXES,
    NEGATIONS,
    STOPWORDS,
    extract_facts,
    is_fact_word,
    name_key,
    proper_terms,
    source_facts,
    stem,
    unsupported,
    words,
)
from graph_memory.summaries.rulebook import MAX_QUOTE_CHARS, MAX_STATEMENT_CHARS, SECTIONS

if TYPE_CHECKING:
    from graph_memory.summaries.context import ContextItem, ContextSlice

# Each tuple is one state in its own forms; a text's state word needs one of them in the quote.
STATE_FORMS: tuple[tuple[str, ...], ...] = (
    ("paid", "repaid"), ("unpaid",), ("outstanding",), ("overdue",), ("met",), ("unmet",),
    ("missed", "miss", "misses"), ("open", "opened", "opens", "reopened"), ("done",),
    ("complete", "completed", "completes"), ("incomplete",), ("pending",), ("granted", "grant", "grants"),
    ("denied", "deny", "denies"), ("signed", "sign", "signs", "countersigned"), ("unsigned",),
    ("executed", "execute", "executes"), ("settled", "settle", "settles"), ("filed", "file", "files"),
    ("served", "serve", "serves"), ("dismissed", "dismiss", "dismisses"), ("agreed", "agree", "agrees"),
    ("refused", "refuse", "refuses"), ("rejected", "reject", "rejects"), ("accepted", "accept", "accepts"),
    ("approved", "approve", "approves"), ("declined", "decline", "declines"), ("closed", "close", "closes"),
    ("terminated", "terminate", "terminates"), ("withdrawn", "withdrew", "withdraw", "withdraws"),
    ("expired", "expire", "expires"), ("cancelled", "canceled", "cancel", "cancels"),
    ("resolved", "resolve", "resolves"), ("unresolved",), ("won", "win", "wins"), ("lost", "lose", "loses"),
    ("breached", "breach", "breaches"), ("upheld", "uphold", "upholds"), ("overturned", "overturn"),
    ("reversed", "reverse"), ("vacated", "vacate"), ("sent", "send", "sends"),
    ("received", "receive", "receives"), ("submitted", "submit", "submits"),
    ("delivered", "deliver", "delivers"), ("void", "voided"), ("lapsed", "lapse"),
    ("suspended", "suspend"), ("revoked", "revoke"), ("concluded", "conclude"), ("abandoned", "abandon"),
    ("finalised", "finalized", "finalise", "finalize"),
)  # fmt: skip
_STATE_OF = {form: forms for forms in STATE_FORMS for form in forms}
ROLE_WORDS = {
    "client": "client", "clients": "client", "counterparty": "counterparty",
    "counterparties": "counterparty", "opponent": "counterparty", "adversary": "counterparty",
}  # fmt: skip
# Words that may stand between a party and its role: "X is the client", "X, our client".
_ROLE_GLUE = {"is", "was", "are", "remains", "acts", "act", "as", "the", "a", "an", "our", "firm", "firms"}

_QUOTE_MARKS = str.maketrans(
    {
        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"',
        "\u00bb": '"', "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
        "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-",
        "\u2212": "-",
    }
)  # fmt: skip


def normalise_quote(text: str) -> str:
    """Whitespace collapsed, curly quotation marks made straight, every dash a hyphen."""
    return " ".join(text.translate(_QUOTE_MARKS).split())


def quote_span(quote: str) -> str:
    """The span a quote claims, normalised: without its own enclosing quotation marks or final punctuation."""
    span = normalise_quote(quote)
    while len(span) > 1 and span[0] == span[-1] and span[0] in "\"'":
        span = span[1:-1].strip()
    return span.rstrip(".,;:!?").rstrip() or span


def statement_key(text: str) -> str:
    """What makes two statements the same one: case, spacing and punctuation aside."""
    return " ".join(re.findall(r"\w+", text.casefold()))


VerificationReport = dict[str, Any]


@dataclass(frozen=True)
class Verification:
    content: dict[str, list[dict[str, Any]]]
    report: VerificationReport

    @property
    def kept(self) -> int:
        return int(self.report["kept"])

    @property
    def ok(self) -> bool:
        return self.kept > 0

    @property
    def source_ids(self) -> list[str]:
        seen: dict[str, None] = {}
        for statements in self.content.values():
            for statement in statements:
                seen.update(dict.fromkeys(statement["sources"]))
        return list(seen)


REASONS = (
    "empty", "too_long", "contentless", "no_sources", "unknown_source", "no_quote", "quote_too_long",
    "quote_not_in_source", "unsupported_date", "unsupported_amount", "unsupported_percentage",
    "unsupported_identifier", "unsupported_number", "unsupported_state", "unsupported_negation", "wrong_role",
    "unknown_name", "name_not_in_quote", "uncovered", "duplicate",
)  # fmt: skip


class _Slice:
    """What the rules need from a slice, computed once per summary."""

    def __init__(self, context: ContextSlice) -> None:
        self.items = {item.source_id: item for item in context.items}
        self.normalised = {sid: normalise_quote(item.text) for sid, item in self.items.items()}
        self.parties: list[tuple[list[str], str]] = [
            (name_key(name).split(), "client") for name in [context.client_name] if name_key(name)
        ] + [(name_key(name).split(), "counterparty") for name in context.counterparty_names if name_key(name)]
        self.party_keys = [" ".join(tokens) for tokens, _ in self.parties]
        names = [(context.client_name, "client")] + [(name, "counterparty") for name in context.counterparty_names]
        # Each party as a statement may name it: in full, or by its first word when that word is distinctive.
        self.aliases: list[tuple[str, list[str], str]] = []
        for name, role in names:
            tokens = name_key(name).split()
            if tokens:
                self.aliases.append((name, tokens, role))
            if len(tokens) > 1 and len(tokens[0]) >= 4 and tokens[0] not in STOPWORDS and tokens[0] not in ROLE_WORDS:
                self.aliases.append((name, tokens[:1], role))
        self.party_words = {word for tokens, _ in self.parties for word in tokens}
        self.text_key = f" {name_key(' '.join(item.text for item in context.items))} "
        # Names as the records write them: capitalised, anywhere in the slice.
        self.proper_keys = {name_key(term) for item in context.items for term in proper_terms(item.text)}
        self.coverage = float(conf.get("SUMMARY_MIN_QUOTE_COVERAGE"))

    def label_of(self, item: ContextItem) -> str:
        return f"{item.label} {item.fields.get('title') or ''}"


def _within(part: str, whole: str) -> bool:
    return bool(part) and f" {part} " in f" {whole} "


def _contentless(text: str, where: _Slice) -> bool:
    tokens = words(text)
    if len(tokens) < 2:
        return True
    content = [t for t in tokens if t not in STOPWORDS and t not in FILLERS and t not in LEGAL_SUFFIXES]
    content = [t for t in content if not is_fact_word(t)]
    return not any(t not in where.party_words for t in content)


def _wrong_role(text: str, where: _Slice) -> str | None:
    tokens = name_key(text).split()
    for name, alias, role in where.aliases:
        width = len(alias)
        for start in range(len(tokens) - width + 1):
            if tokens[start : start + width] != alias:
                continue
            claimed = ROLE_WORDS.get(tokens[start - 1]) if start else None
            after = start + width
            while claimed is None and after < len(tokens) and after < start + width + 4:
                claimed = ROLE_WORDS.get(tokens[after])
                if claimed is None and tokens[after] not in _ROLE_GLUE and tokens[after] not in where.party_words:
                    break
                after += 1
            if claimed and claimed != role:
                return f"{name} is the {role}, not the {claimed}"
    return None


_SOURCE_OPENING = re.compile(r"(?:according to|as (?:stated|recorded|set out) in|in|under|per)\s+(?:the\s+)?", re.I)
_SOURCE_VERBS = {
    "states", "records", "says", "notes", "provides", "shows", "sets", "reads", "flags", "mentions", "confirms",
    "lists", "describes", "explains", "reports", "indicates", "recites",
}  # fmt: skip


def source_span(text: str, label: str) -> int:
    """Where the words of `text` that name its cited record end (0 if it names none).

    A text names its record when it opens with the record's own label words
    (its kind, title, heading) as its source: "According to the Due Diligence
    Memo, ...", "The working note records that ...". Those words need no quote;
    anywhere else a record's own heading is a claim like any other (a document
    titled "Master services agreement" may be about a lease)."""
    label_words = set(words(label))
    opening = _SOURCE_OPENING.match(text) or re.match(r"(?:the\s+)?", text, re.I)
    start = opening.end() if opening else 0
    end = named = 0
    for token in re.finditer(r"\S+", text[start:]):
        token_words = words(token.group())
        if named and token.group().casefold() in _SOURCE_VERBS:
            return start + token.end()
        if not token_words or not all(w in label_words for w in token_words):
            break
        named, end = named + 1, start + token.end()
        if token.group().endswith(","):
            break
    named_by_opening = bool(_SOURCE_OPENING.match(text)) and text[:end].endswith(",")
    return end if named and named_by_opening else 0


def _names(text: str, quote: str, label: str, span: int, where: _Slice) -> tuple[str, list[str]] | None:
    quote_key, label_key = name_key(quote), name_key(label)
    strangers: list[str] = []
    elsewhere: list[str] = []
    for term in proper_terms(text):
        key = name_key(term)
        if _within(key, quote_key) or any(_within(key, party) for party in where.party_keys):
            continue
        if _within(key, label_key) and 0 <= text.find(term) < span:
            continue
        if any(_within(key, proper) for proper in where.proper_keys):
            elsewhere.append(term)
        elif f" {key} " not in where.text_key:
            strangers.append(term)
    if strangers:
        return "unknown_name", strangers
    if elsewhere:
        return "name_not_in_quote", elsewhere
    return None


def _uncovered(text: str, quote: str, span: int, where: _Slice) -> list[str] | None:
    known = {stem(w) for w in words(quote)}
    content = [
        w
        for w in words(text[span:])
        if w not in STOPWORDS and w not in FRAMING and w not in NEGATIONS and not is_fact_word(w)
        if w not in where.party_words
    ]
    missing = [w for w in content if stem(w) not in known]
    if content and (len(content) - len(missing)) / len(content) < where.coverage:
        return list(dict.fromkeys(missing))
    return None


def check_statement(text: str, quote: str, item: ContextItem, where: _Slice) -> tuple[str, str] | None:
    """The first rule (after the quote was found in `item`) that `text` breaks, with its detail."""
    problem = unsupported(extract_facts(text), source_facts(quote))
    if problem:
        return problem[0], ", ".join(problem[1])
    text_words, quote_words = words(text), set(words(quote))
    states = [w for w in dict.fromkeys(text_words) if w in _STATE_OF and not quote_words & set(_STATE_OF[w])]
    if states:
        return "unsupported_state", ", ".join(states)
    negations = [w for w in dict.fromkeys(text_words) if w in NEGATIONS]
    if negations and not quote_words & NEGATIONS:
        return "unsupported_negation", ", ".join(negations)
    role = _wrong_role(text, where)
    if role:
        return "wrong_role", role
    label = where.label_of(item)
    span = source_span(text, label)
    names = _names(text, quote, label, span, where)
    if names:
        return names[0], ", ".join(names[1])
    missing = _uncovered(text, quote, span, where)
    if missing is not None:
        return "uncovered", ", ".join(missing)
    return None


def verify_summary(content: dict[str, Any], context: ContextSlice) -> Verification:
    """Keep the statements of `content` that their quotes support; report the others and why.

    `content` must already match the output schema. The result's `content`
    has every section, each holding only kept statements, each of them
    {"text", "sources": [the record holding the quote], "quote", "kind": "quote"}.
    """
    where = _Slice(context)
    kept: dict[str, list[dict[str, Any]]] = {section: [] for section in SECTIONS}
    seen: set[str] = set()
    dropped: list[dict[str, str]] = []

    def drop(section: str, text: str, reason: str, detail: str = "") -> None:
        dropped.append({"section": section, "text": text, "reason": reason, "detail": detail})

    for section in SECTIONS:
        for statement in content.get(section, []):
            text = " ".join(str(statement.get("text", "")).split())
            quote = " ".join(str(statement.get("quote", "")).split())
            sources = list(dict.fromkeys(statement.get("sources", [])))
            if not text:
                drop(section, text, "empty")
                continue
            if len(text) > MAX_STATEMENT_CHARS:
                drop(section, text, "too_long", f"{len(text)} characters")
                continue
            if _contentless(text, where):
                drop(section, text, "contentless")
                continue
            if not sources:
                drop(section, text, "no_sources")
                continue
            unknown = [s for s in sources if s not in where.items]
            if unknown:
                drop(section, text, "unknown_source", ", ".join(unknown))
                continue
            if not quote_span(quote):
                drop(section, text, "no_quote")
                continue
            if len(quote) > MAX_QUOTE_CHARS:
                drop(section, text, "quote_too_long", f"{len(quote)} characters")
                continue
            span = quote_span(quote)
            holder = next((s for s in sources if span in where.normalised[s]), None)
            if holder is None:
                drop(section, text, "quote_not_in_source", ", ".join(sources))
                continue
            problem = check_statement(text, span, where.items[holder], where)
            if problem:
                drop(section, text, *problem)
                continue
            key = statement_key(text)
            if key in seen:
                drop(section, text, "duplicate")
                continue
            seen.add(key)
            kept[section].append({"text": text, "sources": [holder], "quote": quote, "kind": "quote"})

    n_kept = sum(len(v) for v in kept.values())
    counts = dict.fromkeys(REASONS, 0)
    for entry in dropped:
        counts[entry["reason"]] += 1
    report = {
        "kept": n_kept,
        "dropped": dropped,
        "counts": {"statements": n_kept + len(dropped), "kept": n_kept, "dropped": len(dropped), **counts},
    }
    return Verification(content=kept, report=report)
