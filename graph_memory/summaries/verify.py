"""Mechanical verification of a written summary against the slice it was written from.

A statement is kept only when
1. every source id it cites is in the slice;
2. every date, month, money amount, percentage, identifier and other number in
   it appears in the text of the sources it cites, after normalisation;
3. every party-like name in it is a name in the slice.

Normalisation (so that the same fact written two ways compares equal):
- Dates: "2026-12-15", "15 December 2026", "15th Dec 2026", "December 15, 2026",
  "Dec. 15, 2026" and "12/15/2026" are one date. A slash date is read as
  month/day when the day is > 12 in second place, day/month when > 12 in first
  place; when both parts are <= 12 (and differ) it is ambiguous and matches only
  the same slash date written the same way. Dotted dates ("15.12.2026") are
  day.month.year. "December 2026" is a month; it matches any date in that
  month. A bare year matches a year of any cited date.
- Money: a currency code or symbol before or after the amount ("USD 31,840.50",
  "$31,840.50", "31840.50 USD", "EUR 48m", "EUR 48 million", "€48,000,000")
  becomes (currency, value). "$" is read as USD. Thousands separators are
  commas (or dots when there are several, or when a comma decimal follows).
- Percentages: "3%", "3 %", "3 percent", "3 per cent" become one value.
- Identifiers (tokens mixing digits with letters or hyphens: "INV-0057",
  "2026-014", "v3") must appear literally (case-insensitively).
- Any other number must equal a number, amount, percentage or year in the
  cited sources. Numbers written as words are not checked.

Names (a mechanical rule, deliberately conservative): a run of two or more
capitalised words (joined by spaces, "&" or particles such as "of", "van",
"de"), optionally ending in a legal suffix after a comma ("Holdings, Inc."),
is a name candidate. Leading sentence words and roles ("The", "Client",
"Buyer", ...) are stripped, and month names, weekdays and currency codes split
a run. After case folding, dropping punctuation and legal suffixes, the
candidate must be a contiguous part of a client's or counterparty's name, or
occur in the text of the slice. A lone capitalised word is never checked: it
cannot be told apart from the first word of a sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from graph_memory.summaries.rulebook import MAX_STATEMENT_CHARS, SECTIONS

if TYPE_CHECKING:
    from graph_memory.summaries.context import ContextSlice

MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
    "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9,
    "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
WEEKDAYS = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
CURRENCY_CODES = {
    "USD", "EUR", "GBP", "CHF", "JPY", "CAD", "AUD", "NZD", "CNY", "HKD", "SGD", "INR", "SEK", "NOK",
    "DKK", "PLN", "CZK", "HUF", "RON", "ZAR", "BRL", "MXN", "TRY", "AED", "SAR", "ILS", "KRW",
}  # fmt: skip
CURRENCY_SYMBOLS = {"US$": "USD", "$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
CURRENCY_WORDS = {"dollars": "USD", "euros": "EUR", "euro": "EUR", "pounds": "GBP"}
SCALES = {"thousand": 1_000, "k": 1_000, "million": 1_000_000, "mn": 1_000_000, "m": 1_000_000,
          "billion": 1_000_000_000, "bn": 1_000_000_000}  # fmt: skip
LEGAL_SUFFIXES = {
    "inc", "incorporated", "llc", "llp", "lp", "lllp", "pllc", "ltd", "limited", "corp", "corporation",
    "co", "company", "gmbh", "ag", "kg", "sa", "sas", "sarl", "bv", "nv", "plc", "pty", "se", "spa",
    "srl", "oy", "ab", "pc",
}  # fmt: skip
STARTERS = {
    "the", "a", "an", "this", "that", "these", "those", "on", "in", "at", "by", "for", "from", "to",
    "under", "over", "as", "since", "until", "after", "before", "per", "with", "without", "both", "each",
    "no", "not", "our", "their", "its", "his", "her", "it", "we", "they", "he", "she", "if", "when",
    "while", "where", "once", "also", "and", "but", "or", "case", "matter", "client", "counterparty",
    "buyer", "seller", "sellers", "purchaser", "vendor", "plaintiff", "defendant", "claimant",
    "respondent", "landlord", "tenant", "employer", "employee", "opposing", "former", "status",
    "invoice", "deadline", "document", "draft", "note", "working", "due", "next", "last", "new", "open",
}  # fmt: skip

_MONTH_RE = r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_NUM_RE = r"\d{1,3}(?:[,.\u00a0\u202f'\u2019]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?"
_SCALE_RE = r"(?:\s?(?P<scale>thousand|million|billion|mn|bn|m|k)\b)?"
_CUR_BEFORE = r"(?P<cur>US\$|\$|€|£|¥|\b(?:" + "|".join(sorted(CURRENCY_CODES)) + r"))"
_CUR_AFTER = r"(?P<cur2>€|£|\b(?:" + "|".join(sorted(CURRENCY_CODES)) + r"|dollars|euros?|pounds)\b)"

_DATE_PATTERNS = [
    ("iso", re.compile(r"(?<![\d.])(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?!\d)")),
    (
        "dmy",
        re.compile(
            r"(?<!\d)(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH_RE + r",?\s+(?P<y>\d{4})(?!\d)", re.I
        ),
    ),
    ("mdy", re.compile(_MONTH_RE + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y>\d{4})(?!\d)", re.I)),
    ("slash", re.compile(r"(?<![\d/.])(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<y>\d{4})(?![\d/])")),
    ("dots", re.compile(r"(?<![\d.])(?P<d>\d{1,2})\.(?P<m>\d{1,2})\.(?P<y>\d{4})(?![\d.])")),
    ("month", re.compile(_MONTH_RE + r"\s+(?P<y>\d{4})(?!\d)", re.I)),
]
_MONEY_BEFORE = re.compile(_CUR_BEFORE + r"\s?(?P<num>" + _NUM_RE + r")" + _SCALE_RE)
_MONEY_AFTER = re.compile(r"(?<![\w.,])(?P<num>" + _NUM_RE + r")" + _SCALE_RE + r"\s?" + _CUR_AFTER)
_PERCENT = re.compile(r"(?<![\w.,])(?P<num>" + _NUM_RE + r")\s?(?:%|percent\b|per\s+cent\b|pct\b)", re.I)
_IDENT = re.compile(r"(?<![\w.,-])(?=[\w/-]*\d)[A-Za-z0-9]+(?:[-_/][A-Za-z0-9]+)*(?![\w-])")
_PLAIN_NUMBER = re.compile(r"(?<![\w.,])(?P<num>" + _NUM_RE + r")(?:\s?(?P<scale>thousand|million|billion)\b)?")
_ORDINAL_OR_UNIT = re.compile(r"(?P<num>\d+)(?:st|nd|rd|th|-[a-z]+)", re.I)

_CAPWORD = r"[A-Z][\w'\u2019.&-]*"
_PARTICLE = r"(?:&|of|de|du|da|del|der|den|van|von|la|le)"
_SUFFIX = r"(?:Inc\.?|LLC|LLP|L\.L\.C\.|Ltd\.?|Corp\.?|Co\.|GmbH|AG|S\.A\.|SA|B\.V\.|BV|N\.V\.|NV|plc|PLC|Pty|KG|SE|SpA|S\.p\.A\.)"
_NAME_RUN = re.compile(rf"{_CAPWORD}(?:\s+(?:{_PARTICLE}\s+)?{_CAPWORD})*(?:,\s+{_SUFFIX})?")


@dataclass
class Facts:
    """Normalised facts found in one text."""

    dates: set[str] = field(default_factory=set)
    months: set[str] = field(default_factory=set)
    as_written: set[str] = field(default_factory=set)
    money: set[tuple[str, Decimal]] = field(default_factory=set)
    percents: set[Decimal] = field(default_factory=set)
    idents: set[str] = field(default_factory=set)
    numbers: set[Decimal] = field(default_factory=set)

    def update(self, other: Facts) -> None:
        for name in ("dates", "months", "as_written", "money", "percents", "idents", "numbers"):
            getattr(self, name).update(getattr(other, name))


def parse_number(raw: str) -> Decimal | None:
    """'31,840.50' -> 31840.50, '48.000.000' -> 48000000, '1,5' -> 1.5, '1,500' -> 1500."""
    s = re.sub(r"[\u00a0\u202f'\u2019]", "", raw)
    if "," in s and "." in s:
        decimal_sep = "," if s.rfind(",") > s.rfind(".") else "."
        s = s.replace("." if decimal_sep == "," else ",", "").replace(",", ".")
    elif "," in s:
        s = s.replace(",", "") if re.fullmatch(r"\d{1,3}(?:,\d{3})+", s) else s.replace(",", ".")
    elif s.count(".") > 1:
        s = s.replace(".", "")
    try:
        return Decimal(s)
    except InvalidOperation:
        return None


def _scaled(num: str, scale: str | None) -> Decimal | None:
    value = parse_number(num)
    if value is None:
        return None
    return value * SCALES[scale.lower()] if scale else value


def _iso(y: int, m: int, d: int) -> str | None:
    try:
        return date(y, m, d).isoformat()
    except ValueError:
        return None


def _mask(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def extract_facts(text: str) -> Facts:
    """Every date, amount, percentage, identifier and number in `text`, normalised."""
    facts = Facts()
    for kind, pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            groups = m.groupdict()
            if groups.get("mon") and not groups["mon"][0].isupper():
                continue  # "may" and "mar" as ordinary words
            y = int(m["y"])
            month = MONTHS[groups["mon"].lower().rstrip(".")] if groups.get("mon") else None
            if kind == "month":
                facts.months.add(f"{y:04d}-{month:02d}")
            else:
                if kind == "slash":
                    a, b = int(m["a"]), int(m["b"])
                    ambiguous = a <= 12 and b <= 12 and a != b
                    iso = None if ambiguous else _iso(y, a, b) if a <= 12 else _iso(y, b, a)
                else:
                    iso = _iso(y, month or int(m["m"]), int(m["d"]))
                # An ambiguous or impossible date ("2026-02-30") compares only as written.
                if iso:
                    facts.dates.add(iso)
                else:
                    facts.as_written.add(" ".join(m.group().casefold().split()))
            text = _mask(text, m.start(), m.end())
    for pattern in (_MONEY_BEFORE, _MONEY_AFTER):
        for m in pattern.finditer(text):
            cur = m.groupdict().get("cur") or m.groupdict().get("cur2") or ""
            code = CURRENCY_SYMBOLS.get(cur) or CURRENCY_WORDS.get(cur.lower()) or cur.upper()
            value = _scaled(m["num"], m["scale"])
            if value is not None:
                facts.money.add((code, value))
            text = _mask(text, m.start(), m.end())
    for m in _PERCENT.finditer(text):
        value = parse_number(m["num"])
        if value is not None:
            facts.percents.add(value)
        text = _mask(text, m.start(), m.end())
    for m in _IDENT.finditer(text):
        if m.group().isdigit():
            continue  # a plain number, read below
        unit = _ORDINAL_OR_UNIT.fullmatch(m.group())
        if unit:
            facts.numbers.add(Decimal(unit["num"]))
        else:
            facts.idents.add(m.group().lower())
        text = _mask(text, m.start(), m.end())
    for m in _PLAIN_NUMBER.finditer(text):
        value = _scaled(m["num"], m["scale"])
        if value is not None:
            facts.numbers.add(value)
    return facts


def source_facts(text: str) -> Facts:
    """Facts of a source, widened with what a statement may derive from them:
    a date's month and year, and the bare values of amounts and percentages."""
    facts = extract_facts(text)
    for iso in facts.dates:
        facts.months.add(iso[:7])
        facts.numbers.add(Decimal(iso[:4]))
    for month in facts.months:
        facts.numbers.add(Decimal(month[:4]))
    facts.numbers.update(value for _, value in facts.money)
    facts.numbers.update(facts.percents)
    return facts


def unsupported(statement: Facts, sources: Facts) -> tuple[str, list[str]] | None:
    """The first kind of fact in `statement` missing from `sources`, with the missing values."""
    checks: list[tuple[str, list[str]]] = [
        (
            "unsupported_date",
            sorted(statement.dates - sources.dates) + sorted(statement.as_written - sources.as_written),
        ),
        ("unsupported_date", sorted(statement.months - sources.months)),
        ("unsupported_amount", sorted(f"{c} {v:f}" for c, v in statement.money - sources.money)),
        ("unsupported_percentage", sorted(f"{v:f}%" for v in statement.percents - sources.percents)),
        ("unsupported_identifier", sorted(statement.idents - sources.idents)),
        ("unsupported_number", sorted(f"{v:f}" for v in statement.numbers - sources.numbers)),
    ]
    for reason, missing in checks:
        if missing:
            return reason, missing
    return None


def name_key(text: str) -> str:
    """Case-folded words without punctuation or legal suffixes, space-separated."""
    words = re.findall(r"[\w&]+", text.casefold().replace(".", ""))
    return " ".join(w for w in words if w not in LEGAL_SUFFIXES)


def name_candidates(text: str) -> list[str]:
    """Runs of capitalised words in `text` that look like names (see module docstring)."""
    found: list[str] = []
    for m in _NAME_RUN.finditer(text):
        segment: list[str] = []
        for word in [*m.group().split(), ""]:
            bare = word.strip(".,'\u2019").casefold()
            if word and bare not in MONTHS and bare not in WEEKDAYS and word.strip(".,") not in CURRENCY_CODES:
                segment.append(word)
                continue
            while segment and segment[0].strip(".,'\u2019").casefold() in STARTERS:
                segment.pop(0)
            if segment and segment[-1].rstrip(".").casefold() not in {"inc", "corp", "ltd", "co"}:
                segment[-1] = segment[-1].rstrip(".,")  # a full stop, not "Inc."
            if len(segment) >= 2 and not re.fullmatch(_PARTICLE, segment[-1]):
                found.append(" ".join(segment))
            segment = []
    return found


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
    "empty", "too_long", "no_sources", "unknown_source", "unsupported_date", "unsupported_amount",
    "unsupported_percentage", "unsupported_identifier", "unsupported_number", "unknown_name",
)  # fmt: skip


def verify_summary(content: dict[str, Any], context: ContextSlice) -> Verification:
    """Keep the statements of `content` that the slice supports; report the others and why.

    `content` must already match the output schema. The result's `content`
    has every section, each holding only kept statements.
    """
    texts = {item.source_id: item.text for item in context.items}
    facts_cache: dict[str, Facts] = {}
    known_names = [name_key(name) for name in context.party_names]
    slice_words = f" {name_key(' '.join(texts.values()))} "
    kept: dict[str, list[dict[str, Any]]] = {section: [] for section in SECTIONS}
    dropped: list[dict[str, str]] = []

    def drop(section: str, text: str, reason: str, detail: str = "") -> None:
        dropped.append({"section": section, "text": text, "reason": reason, "detail": detail})

    for section in SECTIONS:
        for statement in content.get(section, []):
            text = " ".join(str(statement.get("text", "")).split())
            sources = list(dict.fromkeys(statement.get("sources", [])))
            if not text:
                drop(section, text, "empty")
                continue
            if len(text) > MAX_STATEMENT_CHARS:
                drop(section, text, "too_long", f"{len(text)} characters")
                continue
            if not sources:
                drop(section, text, "no_sources")
                continue
            unknown = [s for s in sources if s not in texts]
            if unknown:
                drop(section, text, "unknown_source", ", ".join(unknown))
                continue
            cited = Facts()
            for source_id in sources:
                if source_id not in facts_cache:
                    facts_cache[source_id] = source_facts(texts[source_id])
                cited.update(facts_cache[source_id])
            problem = unsupported(extract_facts(text), cited)
            if problem:
                drop(section, text, problem[0], ", ".join(problem[1]))
                continue
            strangers = [
                name
                for name in name_candidates(text)
                if not any(f" {name_key(name)} " in f" {known} " for known in known_names)
                and f" {name_key(name)} " not in slice_words
            ]
            if strangers:
                drop(section, text, "unknown_name", ", ".join(strangers))
                continue
            kept[section].append({"text": text, "sources": sources})

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
