"""Deletion-only shortening: a sentence with words removed, never one with words added, replaced or moved.

A writer may propose a shorter form of a sentence it selected. `shorten`
keeps it only if it is the sentence with words removed: the proposal's words,
in order, are words of the sentence (case, curly quotation marks and dashes
aside), and every removed word may be removed:

- a word that carries meaning (meaning.py: negations, modal verbs,
  conditions, time relations, quantities, hedges) never;
- a word of a fact (a digit, a month, a currency, a scale such as "million",
  "percent") only inside a bracketed aside that goes whole ("(SPA 5.2,
  p. 54)") and holds no meaning word;
- a capitalised word (a name, or a sentence's first word) only with the rest
  of its run of capitalised words ("Brightline Logistics LLC" goes whole or
  stays whole), or inside an aside that goes whole.

What is served is never the proposal's own text: it is built from the
sentence's own characters (the kept words with the punctuation between
them), so nothing can be added by construction. A proposal that fails any
rule is replaced by the whole sentence, never by nothing: a true point is not
lost because its shortening was wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graph_memory.summaries import meaning
from graph_memory.summaries.facts import CURRENCY_CODES, is_fact_word
from graph_memory.summaries.sentences import normalise_quote

# A word: letters, digits and the marks that join them inside one word ("Castell's", "5.2", "INV-0057", "7%").
_WORD = re.compile(r"[\w$€£¥%]+(?:[\u2019'.,\-/:][\w%]+)*")
_OPENERS = "“\"\u2018'(["
_PAIRS = (("(", ")"), ("[", "]"), ("“", "”"))
# Fewest words a shortening keeps: less reads as a fragment, not a point.
MIN_WORDS = 3


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int

    @property
    def key(self) -> str:
        return normalise_quote(self.text).casefold()


def tokens(text: str) -> list[Token]:
    return [Token(m.group(), m.start(), m.end()) for m in _WORD.finditer(text)]


def _is_fact(token: Token) -> bool:
    bare = token.text.strip(".,").casefold()
    return (
        any(c.isdigit() for c in token.text)
        or any(c in token.text for c in "$€£¥%")
        or token.text.strip(".,") in CURRENCY_CODES
        or (bare != "and" and is_fact_word(bare))
    )


def _is_capitalised(token: Token) -> bool:
    return token.text[:1].isupper()


def _asides(text: str, words: list[Token]) -> list[set[int]]:
    """The word positions inside each outermost bracketed aside: "( ... )" or "[ ... ]"."""
    found: list[set[int]] = []
    depth, opened = 0, 0
    for position, char in enumerate(text):
        if char in "([":
            depth, opened = depth + 1, position if depth == 0 else opened
        elif char in ")]" and depth:
            depth -= 1
            if depth == 0:
                found.append({i for i, w in enumerate(words) if opened < w.start and w.end <= position})
    return [aside for aside in found if aside]


def _runs(text: str, words: list[Token]) -> list[set[int]]:
    """Runs of capitalised words separated by spaces only (or ", " before a company form)."""
    runs: list[set[int]] = []
    current: set[int] = set()
    for i, word in enumerate(words):
        joined = i > 0 and (i - 1) in current and text[words[i - 1].end : word.start] in (" ", ", ")
        if _is_capitalised(word):
            if not joined and current:
                runs.append(current)
                current = set()
            current.add(i)
        elif current:
            runs.append(current)
            current = set()
    if current:
        runs.append(current)
    return [run for run in runs if len(run) > 1]


def _align(sentence: list[Token], proposal: list[Token], hard: set[int]) -> list[int] | None:
    """Positions of `sentence` matching `proposal` in order, deleting only positions outside `hard`; None if none."""
    n, m = len(sentence), len(proposal)
    # can[i][j]: proposal[j:] aligns into sentence[i:].
    can = [[False] * (m + 1) for _ in range(n + 1)]
    can[n][m] = True
    for i in range(n - 1, -1, -1):
        can[i][m] = i not in hard and can[i + 1][m]
        for j in range(m - 1, -1, -1):
            match = sentence[i].key == proposal[j].key and can[i + 1][j + 1]
            can[i][j] = match or (i not in hard and can[i + 1][j])
    if not can[0][0]:
        return None
    kept, j = [], 0
    for i in range(n):
        if j < m and sentence[i].key == proposal[j].key and can[i + 1][j + 1]:
            kept.append(i)
            j += 1
    return kept


@dataclass(frozen=True)
class Shortening:
    """What is served for one selected sentence: `text`, and whether it is shortened (else the whole
    sentence). `refused` says why a proposal was not kept ("" when kept or none was made)."""

    text: str
    shortened: bool = False
    refused: str = ""


def _served(sentence: str, words: list[Token], kept: list[int]) -> str:
    runs: list[list[int]] = []
    for i in kept:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    parts = []
    for run in runs:
        start = words[run[0]].start
        while start > 0 and sentence[start - 1] in _OPENERS:
            start -= 1
        parts.append(sentence[start : words[run[-1]].end])
    text = " ".join(parts)
    if kept[-1] == len(words) - 1:
        text += sentence[words[-1].end :].strip()
    else:
        text = text.rstrip(",;:\u2013\u2014-") + (sentence.rstrip()[-1] if sentence.rstrip()[-1:] in (".", "?", "!") else "")
    if kept[0] != 0 and text[:1].islower():
        text = text[0].upper() + text[1:]
    return text


def _balanced(text: str) -> bool:
    plain = normalise_quote(text)
    return all(text.count(a) == text.count(b) for a, b in _PAIRS) and plain.count('"') % 2 == 0


def shorten(sentence: str, proposal: str) -> Shortening:
    """What to serve for `sentence` when a writer proposed `proposal` (may be "") as its shorter form."""
    whole = Shortening(sentence)
    proposal = " ".join(proposal.split())
    if not proposal or normalise_quote(proposal).casefold() == normalise_quote(sentence).casefold():
        return whole
    words, wanted = tokens(sentence), tokens(proposal)
    if len(wanted) < MIN_WORDS:
        return Shortening(sentence, refused="too short")
    hard = meaning.protected_positions([w.text for w in words])
    kept = _align(words, wanted, hard)
    if kept is None:
        return Shortening(sentence, refused=_why_not(words, wanted, hard))
    if len(kept) == len(words):
        return whole
    deleted = set(range(len(words))) - set(kept)
    asides = [aside for aside in _asides(sentence, words) if aside <= deleted and not aside & hard]
    in_aside = set().union(*asides) if asides else set()
    facts = [words[i].text for i in sorted(deleted - in_aside) if _is_fact(words[i])]
    if facts:
        return Shortening(sentence, refused=f"removes a fact: {', '.join(facts)}")
    for run in _runs(sentence, words):
        cut = run & deleted - in_aside
        if cut and cut != run:
            return Shortening(sentence, refused=f"removes part of a name: {' '.join(words[i].text for i in sorted(cut))}")
    text = _served(sentence, words, kept)
    if not _balanced(text):
        return Shortening(sentence, refused="leaves a bracket or quotation mark open")
    return Shortening(text, shortened=True)


def _why_not(words: list[Token], wanted: list[Token], hard: set[int]) -> str:
    if _align(words, wanted, set()) is None:
        return "not the sentence with words removed (a word added, replaced or moved)"
    return "removes a word that carries meaning: " + ", ".join(
        sorted({words[i].text for i in hard} - {w.text for w in wanted}) or ["(one of them)"]
    )


def faithful(served: str, sentence: str) -> bool:
    """The property everything served keeps: `served` is `sentence`, or what `shorten` makes of it as a proposal."""
    if normalise_quote(served).casefold() == normalise_quote(sentence).casefold():
        return True
    result = shorten(sentence, served)
    return result.shortened and [t.key for t in tokens(result.text)] == [t.key for t in tokens(served)]
