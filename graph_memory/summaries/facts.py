"""What a text states, normalised: its dates, amounts, percentages, numbers, identifiers, names and words.

Shared by the context slice (a cut must not split a date or an amount), the
extractive writer (which sentence gives an amount or a date), the selection's
checks (a label holds no fact or name; a key-dates point has a date) and the
shortening (a fact never goes outside a citing aside), so that all of them read
a text the same way.

Normalisation (the same fact written two ways compares equal):
- Dates: "2026-12-15", "15 December 2026", "15th Dec 2026", "December 15, 2026",
  "Dec. 15, 2026" and "12/15/2026" are one date. A slash date is read as
  month/day when the day is > 12 in second place, day/month when > 12 in first
  place; when both parts are <= 12 (and differ) it is ambiguous and matches only
  the same slash date written the same way. Dotted dates ("15.12.2026", also at
  the end of a sentence) are day.month.year. "December 2026" is a month.
- Money: a currency code or symbol before or after the amount ("USD 31,840.50",
  "$31,840.50", "31840.50 USD", "EUR 48m", "EUR 48 Million", "USD 1.5M",
  "EUR 48 mln", "€48,000,000", "twelve million dollars") becomes (currency,
  value). Scale words are read in any case. "$" is read as USD. Thousands
  separators are commas (or dots when there are several, or when a comma
  decimal follows).
- Percentages: "3%", "3 %", "3 percent", "3 per cent", "three percent".
- Identifiers (tokens mixing digits with letters or hyphens: "INV-0057",
  "2026-014", "v3") compare literally (case-insensitively).
- Other numbers, in digits or in words ("two", "forty-five", "twelve
  million"), compare by value. A lone "one" is read as a number only inside a
  compound ("twenty-one", "one million"): alone it is too often a pronoun.

Names: a run of two or more capitalised words (joined by spaces, "&" or
particles such as "of", "van", "de"), optionally ending in a legal suffix after
a comma ("Holdings, Inc."), is a name; so is a single capitalised word that
does not start a sentence. Leading sentence words and roles ("The", "Client",
"Buyer", ...) are stripped, and month names, weekdays and currency codes split
a run. `name_key` compares names: case folded, without punctuation or legal
suffixes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation

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
CURRENCY_WORDS = {"dollars": "USD", "dollar": "USD", "euros": "EUR", "euro": "EUR", "pounds": "GBP"}
SCALES = {"thousand": 1_000, "k": 1_000, "million": 1_000_000, "mn": 1_000_000, "mln": 1_000_000,
          "m": 1_000_000, "billion": 1_000_000_000, "bn": 1_000_000_000}  # fmt: skip
NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
WORD_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
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
    "i", "according", "yes", "there", "here", "all", "any", "some", "most", "none", "one",
}  # fmt: skip

_MONTH_RE = r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_NUM_RE = r"\d{1,3}(?:[,.\u00a0\u202f'\u2019]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?"
# Scale words in any case ("48 Million", "1.5M", "48 mln"); a letter scale must touch its word's end.
_SCALE_RE = r"(?:\s?(?P<scale>(?i:thousand|million|billion|mln|mn|bn|m|k))\b)?"
_CUR_BEFORE = r"(?P<cur>US\$|\$|€|£|¥|\b(?:" + "|".join(sorted(CURRENCY_CODES)) + r"))"
_CUR_AFTER = r"(?P<cur2>€|£|\b(?:" + "|".join(sorted(CURRENCY_CODES)) + r"|(?i:dollars?|euros?|pounds))\b)"

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
    # A full stop after the year ends the sentence; only a digit after it would make it something else.
    ("dots", re.compile(r"(?<![\d.])(?P<d>\d{1,2})\.(?P<m>\d{1,2})\.(?P<y>\d{4})(?!\d|\.\d)")),
    ("month", re.compile(_MONTH_RE + r"\s+(?P<y>\d{4})(?!\d)", re.I)),
]
_MONEY_BEFORE = re.compile(_CUR_BEFORE + r"\s?(?P<num>" + _NUM_RE + r")" + _SCALE_RE)
_MONEY_AFTER = re.compile(r"(?<![\w.,])(?P<num>" + _NUM_RE + r")" + _SCALE_RE + r"\s?" + _CUR_AFTER)
_PERCENT = re.compile(r"(?<![\w.,])(?P<num>" + _NUM_RE + r")\s?(?:%|percent\b|per\s+cent\b|pct\b)", re.I)
_IDENT = re.compile(r"(?<![\w.,-])(?=[\w/-]*\d)[A-Za-z0-9]+(?:[-_/][A-Za-z0-9]+)*(?![\w-])")
_PLAIN_NUMBER = re.compile(r"(?<![\w.,])(?P<num>" + _NUM_RE + r")" + _SCALE_RE)
_ORDINAL_OR_UNIT = re.compile(r"(?P<num>\d+)(?:st|nd|rd|th|-[a-z]+)", re.I)
_NUMBER_WORD = "|".join(sorted([*NUMBER_WORDS, *WORD_SCALES], key=len, reverse=True))
_WORD_NUMBER = re.compile(rf"\b(?:{_NUMBER_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_NUMBER_WORD}))*\b", re.I)
_AFTER_WORD_NUMBER = re.compile(
    r"\s*(?:(?P<pct>%|percent\b|per\s+cent\b)|(?P<cur>"
    + "|".join(sorted(CURRENCY_CODES))
    + r"|(?i:dollars?|euros?|pounds)\b))"
)
_BEFORE_WORD_NUMBER = re.compile(r"(?P<cur>US\$|\$|€|£|¥|\b(?:" + "|".join(sorted(CURRENCY_CODES)) + r"))\s?$")

_CAPWORD = r"[A-Z][\w'\u2019.&-]*"
_PARTICLE = r"(?:&|of|de|du|da|del|der|den|van|von|la|le)"
_SUFFIX = r"(?:Inc\.?|LLC|LLP|L\.L\.C\.|Ltd\.?|Corp\.?|Co\.|GmbH|AG|S\.A\.|SA|B\.V\.|BV|N\.V\.|NV|plc|PLC|Pty|KG|SE|SpA|S\.p\.A\.)"
_NAME_RUN = re.compile(rf"{_CAPWORD}(?:\s+(?:{_PARTICLE}\s+)?{_CAPWORD})*(?:,\s+{_SUFFIX})?")
_OPENERS = "\u201c\"'\u2018(\u00ab[\u201e"


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

    def __bool__(self) -> bool:
        return any((self.dates, self.months, self.as_written, self.money, self.percents, self.idents, self.numbers))


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


def words_value(words: str) -> Decimal | None:
    """'forty-five' -> 45, 'twelve million' -> 12000000, 'three hundred and ten' -> 310."""
    total = current = 0
    seen = False
    for word in re.split(r"[\s-]+", words.casefold()):
        if word == "and" or not word:
            continue
        if word in NUMBER_WORDS:
            current += NUMBER_WORDS[word]
        elif word == "hundred":
            current = (current or 1) * 100
        elif word in WORD_SCALES:
            total += (current or 1) * WORD_SCALES[word]
            current = 0
        else:
            return None
        seen = True
    return Decimal(total + current) if seen else None


def _scaled(num: str, scale: str | None) -> Decimal | None:
    value = parse_number(num)
    if value is None:
        return None
    return value * SCALES[scale.lower()] if scale else value


def _currency(written: str) -> str:
    return CURRENCY_SYMBOLS.get(written) or CURRENCY_WORDS.get(written.lower()) or written.upper()


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
            value = _scaled(m["num"], m["scale"])
            if value is not None:
                facts.money.add((_currency(m.groupdict().get("cur") or m.groupdict().get("cur2") or ""), value))
            text = _mask(text, m.start(), m.end())
    for m in _PERCENT.finditer(text):
        value = parse_number(m["num"])
        if value is not None:
            facts.percents.add(value)
        text = _mask(text, m.start(), m.end())
    text = _word_numbers(text, facts)
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


def _word_numbers(text: str, facts: Facts) -> str:
    """Numbers written in words: amounts, percentages or plain numbers; returns `text` with them masked."""
    for m in _WORD_NUMBER.finditer(text):
        if m.group().casefold() == "one":
            continue  # "one of the parties", "no one": not a count
        value = words_value(m.group())
        if value is None:
            continue
        after = _AFTER_WORD_NUMBER.match(text, m.end())
        before = _BEFORE_WORD_NUMBER.search(text, 0, m.start())
        start, end = m.start(), m.end()
        if after and after["pct"]:
            facts.percents.add(value)
            end = after.end()
        elif after and after["cur"]:
            facts.money.add((_currency(after["cur"]), value))
            end = after.end()
        elif before:
            facts.money.add((_currency(before["cur"]), value))
            start = before.start()
        else:
            facts.numbers.add(value)
        text = _mask(text, start, end)
    return text


def name_key(text: str) -> str:
    """Case-folded words without punctuation or legal suffixes, space-separated."""
    words = re.findall(r"[\w&]+", re.sub(r"['\u2019]s\b", "", text.casefold().replace(".", "")))
    return " ".join(w for w in words if w not in LEGAL_SUFFIXES)


def starts_sentence(text: str, start: int) -> bool:
    """Whether the word at `start` opens `text` or a sentence of it (after . ! or ?, past opening quotes)."""
    before = text[:start].rstrip().rstrip(_OPENERS).rstrip()
    return not before or before[-1] in ".!?"


def _bare(word: str) -> str:
    return re.sub(r"['\u2019]s$", "", word.strip(".,;:'\u2019")).casefold()


def proper_terms(text: str) -> list[str]:
    """Names in `text` (see the module docstring): multi-word runs, and single capitalised
    words that do not start a sentence. Each as written, without a trailing full stop."""
    found: list[str] = []
    for m in _NAME_RUN.finditer(text):
        words = [(w.group(), m.start() + w.start()) for w in re.finditer(r"\S+", m.group())]
        segment: list[tuple[str, int]] = []
        for word, start in [*words, ("", -1)]:
            bare = _bare(word)
            # Words of dates and amounts ("December", "Million", "USD") and identifiers ("INV-0057")
            # are facts, checked as such: they split a run.
            splits = is_fact_word(bare) or word.strip(".,") in CURRENCY_CODES or any(c.isdigit() for c in word)
            if word and not splits:
                segment.append((word, start))
                continue
            while segment and _bare(segment[0][0]) in STARTERS:
                segment.pop(0)
            while segment and re.fullmatch(_PARTICLE, segment[-1][0]):
                segment.pop()
            if segment:
                last = segment[-1][0]
                if last.rstrip(".").casefold() not in {"inc", "corp", "ltd", "co"}:
                    segment[-1] = (last.rstrip(".,;:"), segment[-1][1])  # a full stop, not "Inc."
                if len(segment) >= 2 or not starts_sentence(text, segment[0][1]):
                    term = " ".join(w for w, _ in segment).strip(".,;:")
                    if name_key(term):
                        found.append(term)
            segment = []
    return found


# --- words -------------------------------------------------------------------------------------

STOPWORDS = {
    "a", "an", "the", "and", "or", "but", "nor", "so", "yet", "of", "to", "in", "on", "at", "by", "for",
    "from", "with", "without", "into", "onto", "upon", "about", "above", "below", "over", "under",
    "between", "among", "through", "during", "before", "after", "since", "until", "till", "within",
    "against", "per", "via", "as", "than", "then", "there", "here", "this", "that", "these", "those",
    "it", "its", "itself", "they", "them", "their", "theirs", "he", "him", "his", "she", "her", "hers",
    "we", "us", "our", "ours", "you", "your", "i", "me", "my", "who", "whom", "whose", "which", "what",
    "when", "where", "why", "how", "whether", "if", "because", "while", "although", "though", "unless",
    "is", "are", "was", "were", "be", "been", "being", "am", "has", "have", "had", "having", "do",
    "does", "did", "doing", "will", "would", "shall", "should", "may", "might", "must", "can", "could",
    "also", "only", "just", "very", "too", "more", "most", "less", "least", "such", "both", "each",
    "either", "any", "all", "some", "other", "another", "same", "own", "up", "down", "out", "off",
    "again", "further", "once", "still", "now", "currently", "already", "s", "v", "vs", "re", "etc",
    "e", "g", "ie", "eg", "around", "approximately", "including",
}  # fmt: skip
_SUFFIXES = (
    "ational", "ations", "ation", "ements", "ement", "ments", "ment", "ingly", "ings", "ing", "ated",
    "ates", "ate", "ied", "ies", "edly", "ed", "es", "ly", "s", "e", "y",
)  # fmt: skip
_IRREGULAR = {"paid": "pay", "met": "meet", "won": "win", "lost": "lose", "sent": "send", "held": "hold"}
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)?")


def words(text: str) -> list[str]:
    """The words of `text`, case-folded, without digits; hyphenated words split, possessives dropped."""
    return [re.sub(r"['\u2019]s$", "", w) for w in _WORD.findall(text.casefold().replace("n't", " not"))]


def stem(word: str) -> str:
    """A crude English stem: 'terminated', 'terminates', 'termination' -> 'termin'."""
    w = word.casefold()
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    for _ in range(2):
        for suffix in _SUFFIXES:
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                w = w[: -len(suffix)]
                break
        else:
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]  # "submitt" -> "submit"
    return w


def is_fact_word(word: str) -> bool:
    """A word that is part of a date, amount or number, checked as a fact rather than as a word."""
    return (
        word in MONTHS
        or word in WEEKDAYS
        or word in NUMBER_WORDS
        or word in WORD_SCALES
        or word in SCALES
        or word in CURRENCY_WORDS
        or word.upper() in CURRENCY_CODES
        or word in {"percent", "cent", "pct", "and"}
    )
