"""Sentences of a slice, numbered: what a writer selects from and what a summary serves.

`split` cuts a record's text into sentences. A full stop ends a sentence only
when the next word starts like one (a capital, a digit, a quotation mark or a
bracket) and the word it closes is not an abbreviation a legal record uses:
"p. 54", "No. 7", "Art. 5", "cl. 9", "e.g.", "U.S.", initials ("J. Lee"),
titles and company forms. A company form that closes a name ("Inc.", "LLC.",
"Ltd.") is its name's last word, so a capitalised word after it opens the
next sentence ("... signed by Aster Capital LLC. Damages are claimed ..."),
unless that word is another company form ("Ltd."), a capitalised word
follows it too (the name may go on: "Acme Inc. Pension Trustees Limited"),
or a digit, bracket or quotation mark follows ("Acme Inc. (the Buyer)"):
a sentence cut inside a name could say that the name's first part did what
the whole did, so where in doubt the sentence stays whole. A decimal ("5.2")
has no space after its point, so it never ends one.

`number` gives every sentence of the slice's narrative records (the case's
description, notes, drafts, document pages) an id, `s1`, `s2`, ... in slice
order: the same slice always gives the same ids, and each id belongs to one
record. Records that hold only fields (parties, deadlines, invoices) and the
header's own fields get no ids: fields.py renders them. A sentence that the
slice cut ("…") gets no id either, so nothing served is ever a cut sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from graph_memory.summaries.context import ContextSlice
from graph_memory.summaries.facts import name_key

NARRATIVE_KINDS = ("header", "note", "draft", "document")
CUT_MARK = "…"

# Company forms that close a name (compared case-folded, with their stop): a capitalised word after one opens a
# sentence. "Co." and "Bros." are not among them: a name goes on after them ("Castell Co. Ltd.", "Warner Bros.
# Pictures").
COMPANY_FORMS = frozenset({"inc.", "corp.", "ltd.", "plc.", "llc.", "llp.", "s.a.", "n.v.", "b.v.", "ag."})
# Words that end with a full stop without ending a sentence (compared case-folded, with their stop).
ABBREVIATIONS = frozenset(
    {
        # citations: pages, numbers, articles, clauses, sections, paragraphs, schedules
        "p.", "pp.", "no.", "nos.", "art.", "arts.", "cl.", "cls.", "s.", "ss.", "sec.", "secs.", "para.",
        "paras.", "sch.", "ch.", "chap.", "vol.", "fig.", "ex.", "exh.", "reg.", "r.", "rr.", "ord.", "pt.",
        "n.", "fn.", "ibid.", "id.", "cf.", "al.", "ff.",
        # Latin and common short forms
        "e.g.", "i.e.", "viz.", "etc.", "approx.", "ca.", "c.", "est.", "incl.", "excl.", "min.", "max.",
        "v.", "vs.", "re.", "resp.",
        # titles
        "mr.", "mrs.", "ms.", "dr.", "prof.", "sr.", "jr.", "st.", "hon.", "mt.", "messrs.", "gen.", "col.",
        "capt.", "lt.", "rev.", "sen.", "rep.", "gov.", "pres.", "supt.", "dept.", "univ.",
        # company forms
        "co.", "bros.", *COMPANY_FORMS,
        # months and days
        "jan.", "feb.", "mar.", "apr.", "jun.", "jul.", "aug.", "sep.", "sept.", "oct.", "nov.", "dec.",
        "mon.", "tue.", "tues.", "wed.", "thu.", "thur.", "thurs.", "fri.", "sat.", "sun.",
    }
)  # fmt: skip
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


# A candidate end: . ! or ? (with any closing quotation marks or brackets), then spaces.
_END = re.compile(r"[.!?][\"'”\u2019)\]]*\s+")
_STARTS_SENTENCE = re.compile(r"[A-Z0-9\"'“\u2018(\[]")
# "U.S.", "e.g.", "J.": letters each followed by a full stop.
_INITIALS = re.compile(r"(?:[^\W\d_]\.)+", re.UNICODE)


def _ends_sentence(text: str, end: re.Match[str]) -> bool:
    if not _STARTS_SENTENCE.match(text, end.end()):
        return False
    closing = end.group().rstrip()
    if closing[0] != "." or len(closing) > 1:
        return True  # ! or ?, or a full stop inside or after a closing mark: "(... p. 54)." ends
    word = text[: end.start() + 1].rsplit(None, 1)[-1].lstrip("\"'“\u2018([")
    if word.casefold() in COMPANY_FORMS:
        following = text[end.end() :].split(None, 2)
        if not following[0][:1].isalpha() or not name_key(following[0]):
            return False  # "(the Buyer)", "12 shares", "Ltd." after "Inc.": the name or the sentence goes on
        return len(following) < 2 or not following[1][:1].isupper()  # "Pension Trustees Limited" names on
    return word.casefold() not in ABBREVIATIONS and not _INITIALS.fullmatch(word)


def spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each sentence of `text`, without the spaces between them."""
    start = 0
    for end in _END.finditer(text):
        if _ends_sentence(text, end):
            stop = end.start() + len(end.group().rstrip())
            if text[start:stop].strip():
                yield start, stop
            start = end.end()
    if text[start:].strip():
        yield start, len(text.rstrip())


def split(text: str) -> list[str]:
    """The sentences of `text`, each on one line."""
    text = " ".join(text.split())
    return [text[a:b] for a, b in spans(text)]


@dataclass(frozen=True)
class Sentence:
    id: str  # "s17"
    source_id: str  # the record it belongs to
    text: str  # the record's own words, on one line


@dataclass(frozen=True)
class NumberedSlice:
    """A slice with its narrative sentences numbered. `text` is what a writer reads."""

    context: ContextSlice
    sentences: tuple[Sentence, ...]

    @property
    def by_id(self) -> dict[str, Sentence]:
        return {s.id: s for s in self.sentences}

    @property
    def text(self) -> str:
        """One line per record ("[source id] heading"), each of its sentences under it as "  [s17] sentence"."""
        of: dict[str, list[Sentence]] = {}
        for sentence in self.sentences:
            of.setdefault(sentence.source_id, []).append(sentence)
        lines = []
        for item in self.context.items:
            numbered = of.get(item.source_id)
            if not numbered:
                lines.append(item.line)
                continue
            heading = item.label or {"header": "Case description", "note": "Working note"}.get(item.kind, item.kind)
            lines.append(f"[{item.source_id}] {heading}" + ("" if heading.endswith((".", ":")) else ":"))
            lines += [f"  [{s.id}] {s.text}" for s in numbered]
        return "\n".join(lines)


def number(context: ContextSlice) -> NumberedSlice:
    """Every whole sentence of the slice's narrative records, numbered in slice order."""
    found: list[Sentence] = []
    for item in context.items:
        if item.kind not in NARRATIVE_KINDS:
            continue
        parts = split(item.body)
        if parts and item.text.endswith(CUT_MARK):
            parts.pop()  # the slice cut this record here: its last sentence is not whole
        for part in parts:
            found.append(Sentence(f"s{len(found) + 1}", item.source_id, part))
    return NumberedSlice(context=context, sentences=tuple(found))
