"""Model answers with planted inventions and true statements, generated from one case's context slice.

Used by bench_faithfulness.py. Everything here reads only the slice (so it
works on the demo firm and on generated firms alike) and a seeded
`random.Random`, so a run is reproducible. Each generator returns
`Planted(kind, label, statement)`: `kind` is "invention" (must be dropped) or
"true" (must be kept); `label` is the class of invention or the format
variant; `statement` is {"text", "sources", "quote"} as a model would answer.

True statements are built from a record's own sentence (the quote) with one
format variant applied; inventions follow the classes of issue 12, each made
as hard as it can be: the quote is always a real span of a real record.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from graph_memory.summaries.context import ContextItem, ContextSlice
from graph_memory.summaries.extractive import sentences
from graph_memory.summaries.facts import name_key, proper_terms, words

MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
               "November", "December"]  # fmt: skip
ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]  # fmt: skip
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
CURRENCY_WORD = {"USD": "dollars", "EUR": "euros", "GBP": "pounds"}
SYMBOL = {"USD": "$", "EUR": "€", "GBP": "£"}
EVENTS = [
    "The court granted the motion.", "The court denied the application.", "The claim was dismissed.",
    "The parties signed the settlement agreement.", "Opposing counsel agreed to an extension.",
    "The board approved the transaction.", "The regulator opened an investigation.",
    "The hearing was adjourned at the request of the defence.", "The client accepted the offer.",
    "The judge struck out the defence.", "The tribunal published its award.",
    "The counterparty withdrew its objection.", "The mediation collapsed after the first session.",
    "Witness statements were exchanged with the other side.", "The injunction was lifted.",
    "The auditors qualified the accounts.", "The insurer disputes coverage for the loss.",
    "An expert report on quantum was commissioned.",
]  # fmt: skip
INVENTED_NAMES = ["Oyelaran", "Whitcombe", "Castellanos", "Okafor", "Lindqvist", "Moreau", "Tanaka", "Petrov",
                  "Haddad", "Brennan", "Szabo", "Achebe", "Kowalczyk", "Delacroix", "Nakamura", "Ferreira"]  # fmt: skip
NOUNS = ["witnesses", "exhibits", "employees", "shipments", "hearings", "claims", "invoices", "experts"]
SUBJECTS = ["The team has identified", "The client reported", "The court listed", "Opposing counsel served"]
_ISO = re.compile(r"(?<![\d.])(\d{4})-(\d{2})-(\d{2})(?!\d)")
_MONEY = re.compile(r"\b(USD|EUR|GBP|CHF) (\d{1,3}(?:,\d{3})*(?:\.\d{2})?)(?![\d,])")
_PERCENT = re.compile(r"(?<![\d.,])(\d+(?:\.\d+)?)%")
# A small count, not part of a date ("7 March 2025"), an amount or a percentage.
_SMALL = re.compile(r"(?<![\w.,:/-])([2-9]|1[0-9])(?![\w.,%/-]|\s*(?:%|per\s|(?:" + "|".join(MONTH_NAMES) + r")\b))")


@dataclass(frozen=True)
class Planted:
    kind: str  # "invention" or "true"
    label: str
    statement: dict[str, Any]


def in_words(n: int) -> str:
    """12 -> 'twelve', 45 -> 'forty-five', 4_800_000 -> 'four million eight hundred thousand'."""
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + (f"-{ONES[n % 10]}" if n % 10 else "")
    for size, word in ((1_000_000_000, "billion"), (1_000_000, "million"), (1_000, "thousand"), (100, "hundred")):
        if n >= size:
            rest = n % size
            return f"{in_words(n // size)} {word}" + (f" {in_words(rest)}" if rest else "")
    raise ValueError(n)


def _long_date(iso: re.Match[str], style: str) -> str:
    y, m, d = int(iso[1]), int(iso[2]), int(iso[3])
    month = MONTH_NAMES[m - 1]
    return {
        "dmy": f"{d} {month} {y}",
        "mdy": f"{month} {d}, {y}",
        "abbrev": f"{month[:3]}. {d}, {y}" if len(month) > 3 else f"{month} {d}, {y}",
        "dots": f"{d:02d}.{m:02d}.{y}",
        "month": f"{month} {y}",
    }[style]


def _value(raw: str) -> Decimal:
    return Decimal(raw.replace(",", ""))


def _scaled(value: Decimal, size: int, places: int) -> str | None:
    scaled = value / size
    if value < size or scaled != round(scaled, places):
        return None
    return f"{scaled.normalize():f}"


def _amount_variants(m: re.Match[str]) -> dict[str, str]:
    code, raw = m[1], m[2]
    value = _value(raw)
    out: dict[str, str] = {"amount: code after": f"{raw} {code}"}
    if code in SYMBOL:
        out["amount: symbol"] = f"{SYMBOL[code]}{raw}"
    millions = _scaled(value, 1_000_000, 2)
    if millions:
        out["amount: scale word"] = f"{code} {millions} million"
        out["amount: scale word in title case"] = f"{code} {millions} Million"
        out["amount: letter scale"] = f"{code} {millions}M"
        out["amount: mln"] = f"{code} {millions} mln"
    thousands = _scaled(value, 1_000, 1)
    if thousands and not millions:
        out["amount: k"] = f"{code} {thousands}k"
    if code in CURRENCY_WORD and value == int(value) and value >= 1000:
        out["amount: in words"] = f"{in_words(int(value))} {CURRENCY_WORD[code]}"
    return out


def narrative(context: ContextSlice) -> list[tuple[ContextItem, str]]:
    """(item, sentence) for every sentence of the records' own text: the spans a model may quote."""
    found = []
    for item in context.items:
        if item.kind in ("header", "note", "draft", "document"):
            found += [(item, s) for s in sentences(item.body) if len(s) <= 280 and len(words(s)) >= 3]
    return found


def _stmt(text: str, quote: str, *sources: str) -> dict[str, Any]:
    return {"text": text, "sources": list(sources), "quote": quote}


def _sub(pattern: re.Pattern[str], text: str, repl: str | Callable[[re.Match[str]], str]) -> str | None:
    new = pattern.sub(repl, text, count=1)
    return new if new != text else None


def true_statements(context: ContextSlice, rng: random.Random) -> Iterator[Planted]:
    """Every format variant that applies to each sentence of the slice, each once."""
    parties = [context.client_name, *context.counterparty_names]
    for item, sentence in narrative(context):
        sid = item.source_id
        yield Planted("true", "verbatim", _stmt(sentence, sentence, sid))
        framing = {"note": "The working note records that", "draft": "The draft states that"}.get(
            item.kind, "The document states that" if item.kind == "document" else "The records state that"
        )
        yield Planted("true", "framing", _stmt(f"{framing} {sentence}", sentence, sid))
        iso = _ISO.search(sentence)
        if iso:
            for style in ("dmy", "mdy", "abbrev", "dots", "month"):
                label = {"month": "month and year of a quoted date", "dots": "dotted date"}.get(style, f"date: {style}")
                if style == "dots" and sentence[iso.end() :] == ".":
                    label = "dotted date ending a sentence"
                yield Planted("true", label, _stmt(sentence.replace(iso[0], _long_date(iso, style), 1), sentence, sid))
        money = _MONEY.search(sentence)
        if money:
            for label, written in _amount_variants(money).items():
                yield Planted("true", label, _stmt(sentence.replace(money[0], written, 1), sentence, sid))
        pct = _PERCENT.search(sentence)
        if pct:
            new = sentence.replace(pct[0], f"{pct[1]} {rng.choice(['percent', 'per cent'])}", 1)
            yield Planted("true", "percentage in words", _stmt(new, sentence, sid))
        small = _SMALL.search(sentence)
        if small:
            new = sentence[: small.start()] + in_words(int(small[1])) + sentence[small.end() :]
            yield Planted("true", "number in words", _stmt(new, sentence, sid))
        word_number = re.search(r"\b(two|three|four|five|six|seven|eight|nine|ten|twelve)\b", sentence)
        if word_number:
            new = sentence.replace(word_number[0], str(ONES.index(word_number[1])), 1)
            yield Planted("true", "number in digits for words", _stmt(new, sentence, sid))
        title = str(item.fields.get("title") or "")
        if item.kind in ("document", "draft") and title and not re.search(r"\d", title):
            heading = " ".join(w[:1].upper() + w[1:] for w in title.split())
            yield Planted(
                "true", "heading of the cited record", _stmt(f"According to the {heading}, {sentence}", sentence, sid)
            )
        for party in parties:
            short = " ".join(w for w in re.split(r",?\s+", party) if name_key(w))
            if party in sentence and short != party:
                yield Planted("true", "short party name", _stmt(sentence.replace(party, short, 1), sentence, sid))
                break
    for item in context.items:
        if item.kind in ("client", "counterparty"):
            text = f"{item.fields['name']} is the {item.kind}."
            yield Planted("true", "role as the records give it", _stmt(text, item.text, item.source_id))


def inventions(context: ContextSlice, rng: random.Random, other_names: list[str]) -> Iterator[Planted]:
    """Statements with one planted invention each, of every class that applies to the slice."""
    sents = narrative(context)
    if not sents:
        return
    items = {i.kind: [j for j in context.items if j.kind == i.kind] for i in context.items}
    slice_key = f" {name_key(context.text)} "

    def pick() -> tuple[ContextItem, str]:
        return rng.choice(sents)

    # Events with no digits or names, on any record, quoting a real span of it.
    for event in rng.sample(EVENTS, 6):
        item = rng.choice(list(context.items))
        quote = rng.choice(sentences(item.body) or [item.text]) if item.body else item.text
        yield Planted("invention", "event without digits or names", _stmt(event, quote, item.source_id))

    # Status flips.
    for d in items.get("deadline", []):
        flip = rng.choice(["is still open", "was missed"] if d.fields.get("done") else
                          ["has been met", "is done", "was completed", "was missed"])  # fmt: skip
        yield Planted(
            "invention", "status flip", _stmt(f"The “{d.fields['title']}” deadline {flip}.", d.text, d.source_id)
        )
    for i in items.get("invoice", []):
        status = i.fields.get("status")
        flip = rng.choice(["is unpaid", "remains outstanding", "is overdue"] if status == "paid" else
                          ["was paid", "has been paid in full"])  # fmt: skip
        yield Planted("invention", "status flip", _stmt(f"Invoice {i.fields['number']} {flip}.", i.text, i.source_id))
    header = context.get("case:header")
    if header is not None and header.fields.get("status"):
        status = str(header.fields["status"])
        quote = f"Status: {status}."
        if quote in header.text:
            flip = (
                "was reopened"
                if status.lower() == "closed"
                else rng.choice(["is closed", "was settled", "was dismissed"])
            )
            yield Planted("invention", "status flip", _stmt(f"The case {flip}.", quote, "case:header"))

    # Role swaps.
    client = next(iter(items.get("client", [])), None)
    for cp in items.get("counterparty", [])[:2]:
        if client is None:
            break
        c, o = client.fields["name"], cp.fields["name"]
        for text, quote in (
            (f"{o} is the client and {c} is the counterparty.", client.text),
            (f"{o} is the client.", cp.text),
            (f"{c} is the counterparty.", client.text),
        ):
            yield Planted("invention", "role swap", _stmt(text, quote, client.source_id, cp.source_id))

    # Values swapped between two cited records: an amount or a date of B in A's statement.
    money = [(i, s, m) for i, s in [(x, x.text) for x in context.items if x.kind == "invoice"] + sents
             for m in [_MONEY.search(s)] if m]  # fmt: skip
    dated = [(i, s, m) for i, s in [(x, x.text) for x in context.items if x.kind in ("deadline", "invoice")] + sents
             for m in [_ISO.search(s)] if m]  # fmt: skip
    for pool in (money, dated):
        for _ in range(4):
            if len(pool) < 2:
                break
            (a, sa, ma), (b, sb, mb) = rng.sample(pool, 2)
            if a.source_id == b.source_id or ma[0] == mb[0] or mb[0] in sa:
                continue
            quote = sa if rng.random() < 0.7 else sb
            text = sa.replace(ma[0], mb[0], 1)
            yield Planted(
                "invention", "value swapped between cited records", _stmt(text, quote, a.source_id, b.source_id)
            )

    # A number of a record bound to another noun.
    numbered = [(i, s, n) for i, s in sents for n in re.findall(r"(?<![\w.,:/-])(\d{1,3}(?:,\d{3})*)(?![\w%/-])", s)
                if n not in ("0", "1")]  # fmt: skip
    for item, sentence, number in rng.sample(numbered, min(4, len(numbered))):
        text = f"{rng.choice(SUBJECTS)} {number} {rng.choice(NOUNS)}."
        yield Planted("invention", "number re-bound to another noun", _stmt(text, sentence, item.source_id))

    # The right words from the wrong record of the same case.
    for _ in range(6):
        (x, sx), (y, sy) = pick(), pick()
        if x.source_id == y.source_id or sy in x.text:
            continue
        form = rng.randrange(3)
        if form == 0:
            planted = _stmt(sy, sy, x.source_id)  # Y's words and quote, cited to X
        elif form == 1:
            planted = _stmt(sy, sx, x.source_id)  # Y's words, X's quote
        else:
            terms = [t for t in proper_terms(sy) if f" {name_key(t)} " not in f" {name_key(x.text)} "
                     and not any(name_key(t) in name_key(p) for p in context.party_names)]  # fmt: skip
            if not terms:
                continue
            planted = _stmt(f"{sx.rstrip('.')}, concerning the {terms[0]}.", sx, x.source_id)
        yield Planted("invention", "term cited to the wrong record", planted)

    # Numbers written in words that the quote does not give.
    for _ in range(4):
        item, sentence = pick()
        n = rng.choice([3, 7, 12, 15, 45, 250]) * rng.choice([1, 1_000, 1_000_000])
        if in_words(n) in sentence or f"{n:,}" in sentence:
            continue
        tail = rng.choice(
            [
                f", up to {in_words(n)} {rng.choice(['dollars', 'euros'])}",
                f", with {in_words(n)} {rng.choice(NOUNS)} pending",
            ]
        )
        yield Planted(
            "invention", "number in words", _stmt(sentence.rstrip(".") + tail + ".", sentence, item.source_id)
        )

    # A month or year borrowed from another cited record's date.
    all_dates = [(i, m) for i, s, m in dated]
    for d in items.get("deadline", []):
        due = _ISO.search(d.text)
        others = [(i, m) for i, m in all_dates if i.source_id != d.source_id and due and m[0][:7] != due[0][:7]]
        if not due or not others:
            continue
        other, m = rng.choice(others)
        text = f"The “{d.fields['title']}” deadline is due in {_long_date(m, 'month')}."
        yield Planted(
            "invention", "month or year borrowed from another date", _stmt(text, d.text, d.source_id, other.source_id)
        )
    for _ in range(3):
        item, sentence = pick()
        others = [(i, m) for i, m in all_dates if i.source_id != item.source_id and m[1] not in sentence]
        if not others:
            continue
        other, m = rng.choice(others)
        text = f"{sentence.rstrip('.')} in {m[1]}."
        yield Planted(
            "invention",
            "month or year borrowed from another date",
            _stmt(text, sentence, item.source_id, other.source_id),
        )

    # One-word names: invented, or a party of another case of the same firm.
    names = [n for n in INVENTED_NAMES + other_names if f" {name_key(n)} " not in slice_key]
    for _ in range(4):
        if not names:
            break
        item, sentence = pick()
        name = rng.choice(names)
        text = rng.choice([f"Counsel for {name} says that {sentence}", f"{sentence.rstrip('.')}, as {name} confirmed."])
        yield Planted("invention", "one-word name", _stmt(text, sentence, item.source_id))

    # The old classes: a shifted date, a changed amount.
    for pool, label in ((dated, "shifted date"), (money, "changed amount")):
        for item, sentence, m in rng.sample(pool, min(2, len(pool))):
            if label == "shifted date":
                new = (date(int(m[1]), int(m[2]), int(m[3])) + timedelta(days=rng.choice([-30, -1, 1, 7]))).isoformat()
            else:
                new = f"{m[1]} {_value(m[2]) * Decimal('1.1'):,.2f}"
            yield Planted("invention", label, _stmt(sentence.replace(m[0], new, 1), sentence, item.source_id))
