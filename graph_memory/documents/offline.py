"""An index without a model: sections from the headings in the page text, terms by document-level tf-idf.

Headings are lines of their own: "ARTICLE 7 ESCROW", "Schedule 3 - Warranties",
"Chapter IV", or a numbered clause "7. Escrow" (at most ten words, no closing
full stop: "7. The Buyer shall pay ..." is a paragraph, not a heading). The
top level found at least twice makes the sections; the level below (a
numbered sub-clause "7.2 Release of the Escrow Amount") names what each
covers. A document without such headings gets sections of fixed page
windows. Every term is a word or a two-word phrase copied from the section's
own text (so it passes the literal check by construction), ranked by how
much more often it occurs there than across the document.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from graph_memory.documents.terms import normalise
from graph_memory.summaries.facts import STOPWORDS

_PART = r"(?P<word>article|chapter|part|schedule|annex|appendix|exhibit|section)"
_NUMBER = r"(?P<number>\d{1,3}|[ivxlc]{1,7}|[a-z])"
_TOP = re.compile(rf"^{_PART}\s+{_NUMBER}\b[\s.:\u2013\u2014-]*(?P<title>.{{0,100}})$", re.I)
_CLAUSE = re.compile(r"^(?P<number>\d{1,3})\.\s+(?P<title>[A-Z][^\n]{1,100})$")
_SUB = re.compile(r"^(?P<number>\d{1,3}\.\d{1,3})\.?\s+(?P<title>[A-Z][^\n]{1,100})$")
_WORD = re.compile(r"[^\W\d_][^\W_]*(?:['\u2019-][^\W_]+)*")
WINDOW_PAGES = 10
COVERS_MAX_CHARS = 240


@dataclass
class Heading:
    page: int  # 1-based
    level: str  # "top", "clause" or "sub"
    number: str
    title: str  # the heading line as written
    word: str = ""  # "article", "schedule" ... for top-level headings


@dataclass
class Section:
    id: str
    title: str
    first_page: int
    last_page: int
    terms: list[str] = field(default_factory=list)
    covers: str = ""

    def as_dict(self) -> dict[str, object]:
        return {"id": self.id, "title": self.title, "first_page": self.first_page, "last_page": self.last_page,
                "terms": self.terms, "covers": self.covers}  # fmt: skip


def _is_title(text: str) -> bool:
    text = text.strip()
    return bool(text) and len(text.split()) <= 10 and not text.endswith((".", ",", ";", ":"))


def find_headings(pages: Sequence[str]) -> list[Heading]:
    found: list[Heading] = []
    for number, page in enumerate(pages, start=1):
        for raw in page.splitlines():
            line = " ".join(raw.split())
            if not line or len(line) > 120:
                continue
            if (m := _TOP.match(line)) and (not m.group("title") or _is_title(m.group("title"))):
                found.append(Heading(number, "top", m.group("number"), line, m.group("word").lower()))
            elif (m := _SUB.match(line)) and _is_title(m.group("title")):
                found.append(Heading(number, "sub", m.group("number"), line))
            elif (m := _CLAUSE.match(line)) and _is_title(m.group("title")):
                found.append(Heading(number, "clause", m.group("number"), line))
    return found


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-")[:48] or "section"


def _outline(pages: Sequence[str], headings: list[Heading], *, max_pages: int) -> list[tuple[Section, list[str]]]:
    """Sections (without terms) and the sub-headings each covers."""
    levels = Counter(h.level for h in headings)
    level = "top" if levels["top"] >= 2 else "clause" if levels["clause"] >= 2 else None
    below = {"top": ("clause", "sub"), "clause": ("sub",)}.get(level or "", ())
    n = len(pages)
    starts: list[tuple[Heading | None, int]] = []
    if level is None:
        starts = [(None, p) for p in range(1, n + 1, WINDOW_PAGES)]
    else:
        tops = [h for h in headings if h.level == level]
        if tops[0].page > 1:
            starts.append((None, 1))
        starts += [(h, h.page) for h in tops]
    outline: list[tuple[Section, list[str]]] = []
    for i, (heading, first) in enumerate(starts):
        following = starts[i + 1][1] if i + 1 < len(starts) else n + 1
        last = max(first, following - 1)
        if heading is None:
            title = "Front matter" if level is not None else f"Pages {first}\u2013{last}"
            base = "front-matter" if level is not None else f"pages-{first}-{last}"
        else:
            title = heading.title
            base = f"{heading.word or 'clause'}-{_slug(heading.number)}"
        subs = [h.title for h in headings if h.level in below and first <= h.page <= last and h is not heading]
        for part, part_first in enumerate(range(first, last + 1, max_pages), start=1):
            part_last = min(part_first + max_pages - 1, last)
            suffix = "" if part_first == first and part_last == last else f"-part-{part}"
            part_title = title if not suffix else f"{title} (part {part})"
            in_part = [s for s in subs if _sub_page(headings, s, part_first, part_last)]
            outline.append((Section(base + suffix, part_title, part_first, part_last), in_part))
    seen: Counter[str] = Counter()
    for section, _ in outline:
        seen[section.id] += 1
        if seen[section.id] > 1:
            section.id = f"{section.id}-{seen[section.id]}"
    return outline


def _sub_page(headings: list[Heading], title: str, first: int, last: int) -> bool:
    return any(h.title == title and first <= h.page <= last for h in headings)


def _candidates(text: str) -> Counter[str]:
    """Words and two-word phrases (joined only by spaces in the text) that could be routing terms."""
    counts: Counter[str] = Counter()
    previous: tuple[str, int] | None = None
    for match in _WORD.finditer(text):
        word = match.group(0)
        low = word.casefold()
        content = len(low) >= 3 and low not in STOPWORDS
        if content:
            counts[low] += 1
            if previous is not None and text[previous[1] : match.start()].isspace():
                counts[f"{previous[0]} {low}"] += 1
        previous = (low, match.end()) if content else None
    return counts


def build_offline(pages: Sequence[str], *, max_pages: int, terms_per_section: int) -> list[Section]:
    """The document's sections with their most distinctive terms and a covers line. Deterministic."""
    if not pages:
        return []
    outline = _outline(pages, find_headings(pages), max_pages=max_pages)
    texts = [" ".join(pages[s.first_page - 1 : s.last_page]) for s, _ in outline]
    counts = [_candidates(t) for t in texts]
    df: Counter[str] = Counter()
    for c in counts:
        df.update(c.keys())
    n = len(outline)
    sections: list[Section] = []
    for (section, subs), c in zip(outline, counts, strict=True):
        def score(term: str, c: Counter[str] = c) -> float:
            idf = math.log((1 + n) / (1 + df[term])) + 1
            return (1 + math.log(c[term])) * idf * (1.5 if " " in term else 1.0)

        ranked = sorted((t for t in c if c[t] >= 1), key=lambda t: (-score(t), t))
        headline = [" ".join(s.split(None, 1)[1:]) or s for s in subs]
        terms = list(dict.fromkeys([*(h for h in headline if h), *ranked]))[: terms_per_section]
        section.terms = terms
        listed = "; ".join(headline) if headline else ", ".join(ranked[:6])
        section.covers = (f"Covers: {listed}" if listed else "")[:COVERS_MAX_CHARS]
        sections.append(section)
    return sections


def section_text(pages: Sequence[str], first: int, last: int) -> str:
    """The normalised text of pages `first`..`last` (1-based, inclusive), as the term check reads it."""
    return normalise(" ".join(pages[first - 1 : last]))
