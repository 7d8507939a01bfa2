"""The facts of a text, as the write-back guard compares them: normalised so that formats do not hide them.

Pure functions of the text, no database. Four kinds, each a set of canonical
strings, so a note and a record written differently compare equal:
- amounts: numbers with a currency next to them, or large enough to be one
  (at least five digits, or grouped in thousands): "EUR 256,580",
  "256.580 EUR" and "€256580.00" are all "256580"; "1.2 million" is "1200000";
- dates: "7 March 2027", "March 7, 2027", "7 Mar 2027", "2027-03-07" and
  "07/03/2027" are all "2027-03-07" (a day-month order that could be either
  way gives both readings);
- identifiers: tokens that mix digits with letters or with dashes and slashes
  ("INV-2027-0042", "2026-014", "C-113/23"), upper-cased, dates and amounts
  excepted;
- runs: every run of RUN_WORDS consecutive words (case, accents and
  punctuation ignored, as `names.lookup_key` folds them).

Names are not found here: they come from the connection map and the case
headers, and `words_of` gives the folded words they are looked for in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation

from graph_memory.map.names import lookup_key

RUN_WORDS = 8
AMOUNT_MIN_DIGITS = 5  # a bare number with fewer digits is not taken for an amount (years, clause numbers, counts)

_CURRENCY = r"(?:EUR|USD|GBP|CHF|JPY|CAD|AUD|SEK|NOK|DKK|PLN|CZK|euros?|dollars?|pounds?|€|\$|£|¥)"
_NUMBER = r"\d{1,3}(?:[,.' \u00a0\u202f]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?"
_SCALE = r"(?:\s?(?P<scale>million|mln|mn|m|billion|bn|thousand|k)\b)?"
_AMOUNT = re.compile(
    rf"(?P<before>{_CURRENCY})?\s?(?<![\w.,/-])(?P<number>{_NUMBER})(?![\w/-]|[.,]\d){_SCALE}\s?(?P<after>{_CURRENCY})?",
    re.IGNORECASE,
)
_SCALES = {"million": 10**6, "mln": 10**6, "mn": 10**6, "m": 10**6, "billion": 10**9, "bn": 10**9,
           "thousand": 10**3, "k": 10**3}  # fmt: skip

_MONTHS = {
    name: number
    for number, names in enumerate(
        (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
         ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
         ("november", "nov"), ("december", "dec")),
        start=1,
    )
    for name in names
}  # fmt: skip
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DATES = (
    re.compile(r"(?<!\d)(?P<year>\d{4})([-/.])(?P<m>\d{1,2})\2(?P<d>\d{1,2})(?!\d)"),
    re.compile(rf"(?<!\d)(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+(?P<year>\d{{4}})(?!\d)", re.I),
    re.compile(rf"\b{_MONTH}\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<year>\d{{4}})(?!\d)", re.I),
    re.compile(r"(?<![\d/.])(?P<a>\d{1,2})[/.](?P<b>\d{1,2})[/.](?P<year>\d{4})(?!\d)"),
)
_NOT_DIGIT = re.compile(r"\D+")
_IDENTIFIER = re.compile(r"(?<![\w-])[A-Za-z0-9]+(?:[-/][A-Za-z0-9]+)+(?![\w-])|(?<!\w)[A-Za-z0-9]{4,}(?!\w)")


@dataclass
class Facts:
    """The facts of one text (or of many, merged with `|=`)."""

    amounts: set[str] = field(default_factory=set)
    dates: set[str] = field(default_factory=set)
    identifiers: set[str] = field(default_factory=set)
    runs: set[str] = field(default_factory=set)

    def __ior__(self, other: Facts) -> Facts:
        self.amounts |= other.amounts
        self.dates |= other.dates
        self.identifiers |= other.identifiers
        self.runs |= other.runs
        return self


def _amount(number: str, scale: str | None) -> str | None:
    digits = re.sub(r"[' \u00a0\u202f]", "", number)
    # The last separator followed by one or two digits is the decimal mark; every other one groups thousands.
    head, sep, tail = digits.rpartition("," if digits.rfind(",") > digits.rfind(".") else ".")
    if sep and len(tail) in (1, 2):
        digits = head.replace(",", "").replace(".", "") + "." + tail
    else:
        digits = digits.replace(",", "").replace(".", "")
    try:
        value = Decimal(digits) * _SCALES.get((scale or "").lower(), 1)
    except InvalidOperation:
        return None
    return format(value.normalize(), "f") if value else None


def amounts_of(text: str) -> set[str]:
    found = set()
    for m in _AMOUNT.finditer(text):
        number, scale = m["number"], m["scale"]
        currency = m["before"] or m["after"]
        grouped = bool(re.search(r"\d[,.' \u00a0\u202f]\d{3}(?!\d)", number)) and not re.fullmatch(r"\d+[.,]\d{1,2}", number)
        if not (currency or scale or grouped or len(re.sub(r"\D", "", number.split(".")[0])) >= AMOUNT_MIN_DIGITS):
            continue
        if scale and scale.lower() == "m" and not currency:
            continue  # "5 m" is as likely metres
        value = _amount(number, scale)
        if value is not None:
            found.add(value)
    return found


def _day(year: int, month: int, day: int) -> str | None:
    try:
        return date(year, month, day).isoformat()
    except ValueError:
        return None


def dates_of(text: str) -> set[str]:
    found: set[str | None] = set()
    iso, day_month, month_day, numeric = _DATES
    for m in iso.finditer(text):
        found.add(_day(int(m["year"]), int(m["m"]), int(m["d"])))
    for pattern in (day_month, month_day):
        for m in pattern.finditer(text):
            found.add(_day(int(m["year"]), _MONTHS[m["month"].lower()], int(m["d"])))
    for m in numeric.finditer(text):
        a, b, year = int(m["a"]), int(m["b"]), int(m["year"])
        found |= {_day(year, b, a), _day(year, a, b)}  # 07/03/2027: 7 March or July 3rd
    return {d for d in found if d}


def identifiers_of(text: str) -> set[str]:
    found = set()
    for m in _IDENTIFIER.finditer(text):
        token = m[0]
        if not any(c.isdigit() for c in token) or len(token) < 4:
            continue
        if not (any(c.isalpha() for c in token) or "-" in token or "/" in token):
            continue  # a bare number is an amount or nothing
        if dates_of(token):
            continue
        found.add(token.upper())
    return found


_POSSESSIVE = re.compile(r"['\u2019]s\b")


def words_of(text: str) -> list[str]:
    """The text's words as `names.lookup_key` folds them (case, accents, punctuation), a possessive's
    "'s" left out ("Brightwater's" is "brightwater", as the name is)."""
    return lookup_key(_POSSESSIVE.sub("", text)).split()


def runs_of(words: list[str], n: int = RUN_WORDS) -> set[str]:
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


def facts_of(text: str, *, runs: bool = True) -> Facts:
    """Every fact of `text` (its runs only when asked: they are the costly part)."""
    return Facts(
        amounts=amounts_of(text),
        dates=dates_of(text),
        identifiers=identifiers_of(text),
        runs=runs_of(words_of(text)) if runs else set(),
    )


def phrases_of(words: list[str], longest: int) -> set[str]:
    """Every run of 1..`longest` consecutive words: what a name's folded words are looked up in."""
    return {" ".join(words[i : i + n]) for n in range(1, longest + 1) for i in range(len(words) - n + 1)}


class Probe:
    """The facts of one note, to find in many texts cheaply: `found_in(text)` gives the note's facts that
    `text` holds too. A text is parsed for a kind only when a cheap substring test says it may hold one
    of the note's facts of that kind (an amount's leading digits, a date's year, an identifier), and
    its runs are joined only where a word starts one of the note's runs."""

    def __init__(self, note: Facts) -> None:
        self.note = note
        # An amount's significant digits, as they run in a text with every non-digit taken out:
        # "EUR 256,580" and "256.580" both hold "256"; "1.2 million" holds "12" of 1200000.
        self._amount_hints = {value.replace(".", "").rstrip("0")[:3] for value in note.amounts}
        self._years = {value[:4] for value in note.dates}
        self._firsts = {run.split(" ", 1)[0] for run in note.runs}

    def found_in(self, text: str, words: list[str] | None = None) -> Facts:
        note, found = self.note, Facts()
        if note.amounts and any(hint in _NOT_DIGIT.sub("", text) for hint in self._amount_hints):
            found.amounts = amounts_of(text) & note.amounts
        if note.dates and any(year in text for year in self._years):
            found.dates = dates_of(text) & note.dates
        if note.identifiers:
            upper = text.upper()
            if any(identifier in upper for identifier in note.identifiers):
                found.identifiers = identifiers_of(text) & note.identifiers
        if note.runs:
            words = words_of(text) if words is None else words
            firsts, runs = self._firsts, note.runs
            found.runs = {
                run
                for i in range(len(words) - RUN_WORDS + 1)
                if words[i] in firsts and (run := " ".join(words[i : i + RUN_WORDS])) in runs
            }
        return found
