"""The literal checks and the word statistics that long documents share.

- `TermCheck`: every routing term is found *literally* in the pages of the
  section that claims it: case-, whitespace-, quotation-mark- and
  dash-insensitive, on word boundaries ("tax" is not found in "taxonomy"),
  nothing looser. A term not found there is dropped; the report says whether
  it was somewhere else in the document (`in_other_section`: cross-
  contaminated from a neighbouring chapter) or nowhere (`not_in_document`).
- `quote_on_page`: the same normalisation as summary quotes
  (`summaries.verify.quote_span`), a quote is served only if it is a span of
  the page it cites.
- `tokens` / `BM25`: the offline router and the offline answer rank with BM25
  over crudely stemmed words.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from graph_memory.summaries.facts import STOPWORDS, stem
from graph_memory.summaries.sentences import normalise_quote, quote_span

TERM_MAX_CHARS = 80
EXAMPLES_MAX = 12
_TOKEN = re.compile(r"[^\W_]+(?:[.'\u2019-][^\W_]+)*")
# Words that say nothing about where a question should go.
QUESTION_WORDS = {"say", "says", "said", "tell", "document", "documents", "page", "pages", "clause", "section"}


def normalise(text: str) -> str:
    """Case-folded, whitespace collapsed, quotation marks straight and dashes hyphens."""
    return normalise_quote(text).casefold()


def contains_term(normalised_text: str, term: str) -> bool:
    """Whether `term` occurs in `normalised_text` (already `normalise`d) on word boundaries."""
    needle = normalise(term)
    if not needle:
        return False
    return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", normalised_text) is not None


def quote_on_page(quote: str, page_text: str) -> bool:
    """Whether the quote is a verbatim span of the page (quotation marks, dashes and spacing aside)."""
    span = quote_span(quote)
    return len(span) >= 2 and span in normalise_quote(page_text)


@dataclass
class TermCheck:
    """Checks each section's proposed terms against its own pages; counts and keeps examples of the dropped."""

    document_text: str  # the whole document, normalised, to tell cross-contamination from invention
    proposed: int = 0
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    examples: list[dict[str, str]] = field(default_factory=list)

    @classmethod
    def of(cls, pages: Sequence[str]) -> TermCheck:
        return cls(document_text=normalise(" ".join(pages)))

    def keep(self, section_id: str, terms: Iterable[str], section_text: str, *, limit: int) -> list[str]:
        """The terms literally in `section_text` (normalised), deduplicated, at most `limit`; the rest counted."""
        kept: list[str] = []
        seen: set[str] = set()
        for raw in terms:
            term = " ".join(str(raw).split())
            self.proposed += 1
            key = normalise(term)
            if not key or key in seen:
                self._drop(section_id, term, "duplicate" if key else "empty")
            elif len(term) > TERM_MAX_CHARS:
                self._drop(section_id, term[:TERM_MAX_CHARS], "too_long")
            elif not contains_term(section_text, term):
                reason = "in_other_section" if contains_term(self.document_text, term) else "not_in_document"
                self._drop(section_id, term, reason)
            elif len(kept) >= limit:
                self._drop(section_id, term, "over_limit")
            else:
                seen.add(key)
                kept.append(term)
                self.kept += 1
        return kept

    def _drop(self, section_id: str, term: str, reason: str) -> None:
        self.dropped[reason] += 1
        if len(self.examples) < EXAMPLES_MAX:
            self.examples.append({"section": section_id, "term": term, "reason": reason})

    def report(self) -> dict[str, object]:
        return {
            "proposed": self.proposed,
            "kept": self.kept,
            "dropped": sum(self.dropped.values()),
            "dropped_by_reason": dict(sorted(self.dropped.items())),
            "examples": self.examples,
        }


def tokens(text: str) -> list[str]:
    """Stemmed content words of `text` (numbers such as "7.2" kept whole, stop words out)."""
    out: list[str] = []
    for match in _TOKEN.finditer(text.casefold()):
        word = match.group(0).strip(".'\u2019-")
        if not word or word in STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        out.append(word if any(ch.isdigit() for ch in word) else stem(word))
    return out


def query_tokens(question: str) -> list[str]:
    return [t for t in tokens(question) if t not in {stem(w) for w in QUESTION_WORDS}]


class BM25:
    """Okapi BM25 over a fixed list of token lists (k1 1.2, b 0.75)."""

    def __init__(self, documents: Sequence[Sequence[str]], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.counts = [Counter(d) for d in documents]
        self.lengths = [len(d) for d in documents]
        self.average = (sum(self.lengths) / len(self.lengths)) if self.lengths else 0.0
        df: Counter[str] = Counter()
        for counts in self.counts:
            df.update(counts.keys())
        n = len(documents)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def scores(self, query: Sequence[str]) -> list[float]:
        wanted = set(query)
        out = []
        for counts, length in zip(self.counts, self.lengths, strict=True):
            score = 0.0
            norm = self.k1 * (1 - self.b + self.b * (length / self.average if self.average else 0))
            for term in wanted:
                tf = counts.get(term, 0)
                if tf:
                    score += self.idf[term] * tf * (self.k1 + 1) / (tf + norm)
            out.append(score)
        return out
