"""Name normalisation for the connection map: one module, two keys.

`lookup_key` is what name lookup compares: case, accents, punctuation and
spacing ignored, so "Müller" is found by "muller" and "Holdings, Inc." by
"holdings inc". `party_key` is what the conflict check compares: the lookup
key with trailing legal-form words removed as well, so "ACME Corp." and
"Acme Corporation" are the same party. Both are pure functions of the text:
the graph stores them, and the reads apply the same function to the query.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz.distance import OSA

# Apostrophes and full stops join what they separate ("O'Brien" = "OBrien",
# "S.A." = "SA"); any other punctuation separates words.
_JOINERS = str.maketrans("", "", "'`.\u2018\u2019\u02bc")
_NON_WORD = re.compile(r"[\W_]+")

# Legal-form words, as tokens of the lookup key (full stops already removed,
# so "L.L.C." arrives as "llc" and "S.A." as "sa"). Forms written as several
# short tokens ("S. A.", "Sp. z o.o.") are matched joined ("sa", "spzoo").
LEGAL_FORMS = frozenset(
    {
        # English-speaking jurisdictions
        "inc", "incorporated", "corp", "corporation", "co", "company", "cos", "companies",
        "llc", "llp", "lp", "lllp", "ltd", "limited", "plc", "pllc", "pc", "pty", "pte",
        # Continental Europe
        "gmbh", "ag", "kg", "kgaa", "ohg", "ug", "se", "sa", "sas", "sarl", "sca", "snc", "sl", "slu",
        "srl", "spa", "bv", "nv", "oy", "oyj", "ab", "publ", "as", "asa", "aps", "spzoo",
        # Latin America and Asia
        "de", "cv", "ltda", "kk", "bhd", "sdn",
    }
)
_LEADING_ARTICLES = frozenset({"the"})
_SHORT = 3  # the longest piece of a form written in spaced parts ("spa" of "S.p.A." is already one token)


def _fold(text: str) -> str:
    """Casefolded text without accents; ligatures and width variants folded too (NFKD)."""
    if text.isascii():  # most names: nothing to decompose (a rebuild folds thousands)
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def _tokens(text: str) -> list[str]:
    folded = _fold(text).replace("&", " and ").translate(_JOINERS)
    return [t for t in _NON_WORD.split(folded) if t]


def lookup_key(text: str) -> str:
    """Lower-case, accent-free words separated by single spaces ("" when nothing is left)."""
    return " ".join(_tokens(text or ""))


def _strip_one_form(tokens: list[str]) -> int:
    """How many trailing tokens make one legal form (0 if none), never the whole name."""
    for n in (4, 3, 2):
        tail = tokens[-n:]
        if len(tokens) > n and all(len(t) <= _SHORT for t in tail) and "".join(tail) in LEGAL_FORMS:
            return n
    if len(tokens) > 1 and tokens[-1] in LEGAL_FORMS:
        return 1
    return 0


def party_key(text: str) -> str:
    """The lookup key without a leading "the" and trailing legal forms: what a conflict check compares.

    "ACME Corp.", "Acme Corporation" and "The Acme Company" all give "acme";
    "GmbH & Co. KG" goes as a whole. A name made only of legal-form words
    keeps them, so no name normalises to nothing.
    """
    return _party_key(_tokens(text or ""))


def name_keys(text: str) -> tuple[str, str]:
    """(lookup_key(text), party_key(text)), folding the text once."""
    tokens = _tokens(text or "")
    return " ".join(tokens), _party_key(tokens)


def _party_key(tokens: list[str]) -> str:
    if len(tokens) > 1 and tokens[0] in _LEADING_ARTICLES:
        tokens = tokens[1:]
    while True:
        n = _strip_one_form(tokens)
        if not n:
            break
        tokens = tokens[:-n]
        # "Müller GmbH & Co. KG": an "and" left dangling joined two forms.
        if len(tokens) > 1 and tokens[-1] == "and":
            tokens = tokens[:-1]
    return " ".join(tokens)


# --- Conflict matching: how a name asked for matches a party's name ------------------------------
#
# Kinds, best first: `exact` (same party key), `words` (the words asked are words of the
# name, in its order: "Northwind" finds "Northwind Holdings, Inc."), `reordered` (the same
# words in another order, or initials for words: "Lee, Jordan", "J. Lee"), `similar` (typos:
# each word asked is within a few edits of a distinct word of the name, or of two of its
# words run together, and the edits add up to at most `name_edits_allowed`). Edits are
# optimal-string-alignment edits (insert, delete, substitute, swap two neighbours).
#
# Candidates are found in SQL before they are scored here: for every word of a party key the
# graph's index holds its deletion neighbourhood (the word with up to `word_edits_allowed`
# letters deleted) and so does the query for each word asked; two words within k edits share
# a string of that neighbourhood (the symmetric-deletion rule), so the index misses no match
# the scoring below would accept. The SQL function of migration 0005 computes
# `party_variants`; keep the two in step.

KINDS = ("exact", "words", "reordered", "similar")
MAX_QUERY_WORDS = 8  # beyond this, only exact and words matches are looked for


def word_edits_allowed(length: int) -> int:
    """Edits one word of this many letters may carry and still match: 0, 1 for two letters, else 2."""
    return max(0, min(2, length - 1))


def name_edits_allowed(letters: int) -> int:
    """Edits a whole name of this many letters (spaces aside) may carry: 0 below 4, 1 below 8, else 2."""
    return 0 if letters < 4 else 1 if letters < 8 else 2


def deletions(word: str, k: int) -> set[str]:
    """`word` with up to `k` of its letters deleted (itself included)."""
    found, frontier = {word}, {word}
    for _ in range(k):
        frontier = {w[:i] + w[i + 1 :] for w in frontier for i in range(len(w))}
        found |= frontier
    return found


def party_variants(firm_id: int, key: str) -> set[str]:
    """What the graph's index holds for a party key: each word's deletion neighbourhood and each pair
    of neighbouring words run together with one letter deleted, every string prefixed with the firm."""
    words = [w for w in key.split(" ") if w]
    units = {v for w in words for v in deletions(w, word_edits_allowed(len(w)))}
    units |= {v for a, b in itertools.pairwise(words) for v in deletions(a + b, 1)}
    return {f"{firm_id}:{u}" for u in units}


@dataclass(frozen=True)
class NameMatch:
    kind: str  # one of KINDS
    similarity: float  # the share of the party's name (letters) the name asked accounts for, less its edits


@dataclass(frozen=True)
class _Reading:
    """One way to read the query's words: as typed, two of them run together, or a misspelt legal form dropped."""

    words: tuple[str, ...]
    edits: int  # edits this reading already spent


@dataclass(frozen=True)
class ConflictQuery:
    """A name asked for, prepared once: its party key, its readings and the index strings each word needs."""

    text: str
    key: str
    words: tuple[str, ...]
    edits_allowed: int
    readings: tuple[_Reading, ...]

    def index_groups(self, firm_id: int) -> list[list[list[str]]]:
        """For each reading, one list of index strings per word that is not an initial: a candidate
        holds at least one string of every list of some reading."""
        groups = []
        for reading in self.readings:
            budget = self.edits_allowed - reading.edits
            lists = [
                sorted({f"{firm_id}:{v}" for v in deletions(w, min(word_edits_allowed(len(w)), budget))} | {f"{firm_id}:{w[0]}"})
                for w in reading.words
                if len(w) > 1
            ]
            if lists:
                groups.append(lists)
        return groups


def conflict_query(text: str) -> ConflictQuery:
    tokens = _tokens(text or "")
    key = _party_key(tokens)
    words = tuple(key.split()) if key else ()
    allowed = name_edits_allowed(sum(len(w) for w in words))
    readings = [_Reading(words, 0)]
    if 1 < len(words) <= MAX_QUERY_WORDS:
        for i in range(len(words) - 1):  # a space typed inside a word
            readings.append(_Reading((*words[:i], words[i] + words[i + 1], *words[i + 2 :]), 1))
        last = words[-1]
        form = min(LEGAL_FORMS, key=lambda f: (OSA.distance(last, f), f))
        spent = OSA.distance(last, form)
        if len(form) >= 3 and 0 < spent <= min(word_edits_allowed(len(form)), allowed):  # "Incorporatd", "Limted"
            readings.append(_Reading(words[:-1], spent))
    return ConflictQuery(text=text, key=key, words=words, edits_allowed=allowed, readings=tuple(readings))


def _is_initial(a: str, b: str) -> bool:
    return (len(a) == 1 and len(b) > 1 and b[0] == a) or (len(b) == 1 and len(a) > 1 and a[0] == b)


def _subsequence(words: Sequence[str], of: Sequence[str]) -> bool:
    it = iter(of)
    return all(any(w == x for x in it) for w in words)


def _assign(words: Sequence[str], units: list[tuple[frozenset[int], str]], budget: int) -> tuple[int, int] | None:
    """The cheapest way to match every word to a distinct unit (a word of the name, or two run together):
    (edits, letters of the name matched), or None if it takes more than `budget` edits."""
    costs = []
    for w in words:
        options = []
        for used, unit in units:
            spaces = len(used) - 1  # two words of the name run together: a space missing
            if w == unit:
                options.append((spaces, used, len(unit)))
            elif _is_initial(w, unit):
                options.append((0, used, 1))
            else:
                cap = min(word_edits_allowed(max(len(w), len(unit))), budget)
                d = OSA.distance(w, unit, score_cutoff=cap)
                if d <= cap:
                    options.append((d + spaces, used, len(unit)))
        if not options:
            return None
        costs.append(sorted(options, key=lambda o: o[0]))
    best: tuple[int, int] | None = None

    def walk(i: int, taken: frozenset[int], edits: int, letters: int) -> None:
        nonlocal best
        if edits > budget or (best is not None and edits > best[0]):
            return
        if i == len(costs):
            if best is None or (edits, -letters) < (best[0], -best[1]):
                best = (edits, letters)
            return
        for cost, used, length in costs[i]:
            if not used & taken:
                walk(i + 1, taken | used, edits + cost, letters + length)

    walk(0, frozenset(), 0, 0)
    return best


def conflict_match(query: ConflictQuery, party_key_of_name: str) -> NameMatch | None:
    """How `query` matches a party whose party key is `party_key_of_name` (None: it does not)."""
    name = party_key_of_name.split()
    if not query.words or not name:
        return None
    letters = sum(len(w) for w in name)
    if query.key == party_key_of_name:
        return NameMatch("exact", 1.0)
    if _subsequence(query.words, name):
        return NameMatch("words", round(sum(len(w) for w in query.words) / letters, 4))
    if len(query.words) > MAX_QUERY_WORDS:
        return None
    units = [(frozenset({i}), w) for i, w in enumerate(name)]
    exact_units = [(used, w) for used, w in units]
    found = _assign(query.words, exact_units, 0)
    if found is not None:
        return NameMatch("reordered", round(found[1] / letters, 4))
    units += [(frozenset({i, i + 1}), a + b) for i, (a, b) in enumerate(itertools.pairwise(name))]
    best: tuple[int, int] | None = None
    for reading in query.readings:
        found = _assign(reading.words, units, query.edits_allowed - reading.edits)
        if found is not None:
            edits = found[0] + reading.edits
            if best is None or (edits, -found[1]) < (best[0], -best[1]):
                best = (edits, found[1])
    if best is None:
        return None
    return NameMatch("similar", round(max(best[1] - best[0], 0) / letters, 4))
