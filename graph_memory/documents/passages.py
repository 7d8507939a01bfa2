"""The offline answer: passages of the routed pages, the heading each sits under, ranked by the question's words together.

A passage is a paragraph of a page (long ones cut at sentence ends), never a heading or a page
footer. It *qualifies* only when it holds the question's key words close together: inside one
window of PROXIMITY_WINDOW content words of its own text, the words of the headings it sits
under ("ARTICLE 5 ESCROW", "5.2 Release of the Escrow Amount") counting as part of every window.

- The key words are the question's content words (stemmed, stop words and words about the
  document itself out) that the loaded pages use at all: a word they never use ("SPA", naming
  the document; a paraphrase) can neither be quoted nor be required.
- Each key word weighs its rarity among the passages (idf): "escrow" says more than "seller".
- A passage's coverage is the weight its best window holds, over the weight of all key words.
  It qualifies at MIN_COVERAGE, with at least two distinct key words (one for a one-word
  question): "release" alone, in a passage about a *press* release, does not answer a question
  about the escrow release, however often it says "release".
- Ranked by coverage, then by how much of it the passage's own words hold (a clause that says
  it before a paragraph merely filed under the right heading), then BM25. Coverage is counted
  first without the sentences the loaded pages repeat word for word elsewhere: boilerplate
  ("Nothing in this clause shall limit ...") qualifies a passage like any text, but is no
  clause's own statement, so it ranks behind a passage that says it once.

A general rule, not a list of cases: nothing here knows any document, question or vocabulary.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from graph_memory.documents.offline import find_headings
from graph_memory.documents.terms import BM25, query_tokens, tokens
from graph_memory.summaries.sentences import split as sentences

PASSAGE_MAX_CHARS = 700
PASSAGE_MIN_WORDS = 6
PROXIMITY_WINDOW = 16  # content words, about one clause of a sentence
MIN_COVERAGE = 0.5


@dataclass(frozen=True)
class Passage:
    page: int
    text: str
    heading: str  # the headings it sits under, outermost first, as written ("" for none)
    owner: object = None  # what the caller filed the page under (its routed section)


@dataclass(frozen=True)
class Ranked:
    passage: Passage
    distinct: float  # the coverage without sentences repeated elsewhere in the pages
    coverage: float  # of the key words' weight, in the best window with the headings
    own: float  # of that, what the passage's own words hold
    bm25: float


def _blocks(text: str) -> list[str]:
    blocks = [" ".join(b.split()) for b in re.split(r"\n\s*\n", text) if b.strip()]
    if len(blocks) <= 1:
        blocks = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    return blocks


def _cut(block: str) -> list[str]:
    if len(block) <= PASSAGE_MAX_CHARS:
        return [block]
    out: list[str] = []
    current = ""
    for sentence in sentences(block):
        if current and len(current) + len(sentence) + 1 > PASSAGE_MAX_CHARS:
            out.append(current)
            current = ""
        current = f"{current} {sentence}".strip()
    if current:
        out.append(current)
    return out


def passages(pages: Sequence[tuple[object, int, str]]) -> list[Passage]:
    """The passages of `pages` ((owner, page number, text), in reading order), each with its headings.

    Headings carry over page breaks while the owner (the routed section) stays the same; a new
    top-level heading ("ARTICLE 6 ...") closes the clause headings of the one before."""
    out: list[Passage] = []
    owner: object = object()
    top = inner = ""
    for section, number, text in pages:
        if section is not owner:
            owner, top, inner = section, "", ""
        for block in _blocks(text):
            found = find_headings([block])
            if found:
                if found[0].level == "top":
                    top, inner = found[0].title, ""
                else:
                    inner = found[0].title
                continue
            heading = " / ".join(h for h in (top, inner) if h)
            out.extend(Passage(number, part, heading, section) for part in _cut(block)
                       if len(part.split()) >= PASSAGE_MIN_WORDS)  # fmt: skip
    return out


def key_words(question: str, found: Sequence[Sequence[str]]) -> dict[str, float]:
    """The question's content words that occur in `found` (token lists), each with its idf there."""
    df: Counter[str] = Counter()
    for words in found:
        df.update(set(words))
    n = len(found)
    return {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in dict.fromkeys(query_tokens(question))
            if df[t]}  # fmt: skip


def coverage(words: Sequence[str], heading: set[str], keys: dict[str, float]) -> tuple[float, float, int]:
    """(coverage, the part the passage's own words hold, distinct key words) of the best window."""
    total = sum(keys.values())
    if not total:
        return 0.0, 0.0, 0
    from_heading = heading & keys.keys()
    best = (0.0, 0.0, 0)
    for start in range(max(1, len(words) - PROXIMITY_WINDOW + 1)):
        own = set(words[start : start + PROXIMITY_WINDOW]) & keys.keys()
        held = own | from_heading
        score = (sum(keys[t] for t in held) / total, sum(keys[t] for t in own) / total, len(held))
        best = max(best, score)
    return best


def rank(candidates: Sequence[Passage], question: str) -> list[Ranked]:
    """The qualifying passages, best first (see the module's docstring); [] when none qualifies."""
    own_words = [tokens(p.text) for p in candidates]
    said = Counter(s for p in candidates for s in set(sentences(p.text)))
    once = [tokens(" ".join(s for s in sentences(p.text) if said[s] == 1)) for p in candidates]
    heading_words = [set(tokens(p.heading)) for p in candidates]
    keys = key_words(question, [w + sorted(h) for w, h in zip(own_words, heading_words, strict=True)])
    if not candidates or not keys:
        return []
    needed = min(2, len(keys))
    bm25 = BM25(own_words).scores(list(keys))
    ranked: list[tuple[int, Ranked]] = []
    for i, passage in enumerate(candidates):
        share, own, held = coverage(own_words[i], heading_words[i], keys)
        if share >= MIN_COVERAGE and held >= needed:
            distinct = coverage(once[i], heading_words[i], keys)[0]
            ranked.append((i, Ranked(passage, distinct, share, own, bm25[i])))
    ranked.sort(key=lambda p: (-round(p[1].distinct, 6), -round(p[1].coverage, 6), -round(p[1].own, 6),
                               -p[1].bm25, p[0]))  # fmt: skip
    return [r for _, r in ranked]
