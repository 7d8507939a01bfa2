"""Name normalisation for the connection map: one module, two keys.

`lookup_key` is what name lookup compares: case, accents, punctuation and
spacing ignored, so "Müller" is found by "muller" and "Holdings, Inc." by
"holdings inc". `party_key` is what the conflict check compares: the lookup
key with trailing legal-form words removed as well, so "ACME Corp." and
"Acme Corporation" are the same party. Both are pure functions of the text:
the graph stores them, and the reads apply the same function to the query.
"""

from __future__ import annotations

import hashlib
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


# Stands for the holder in a sight lookup's tsquery (wall/reads.py's sighted lookup puts each holder in its place);
# no lookup key holds it (names.lookup_key keeps letters, digits and spaces).
HOLDER_MARK = "#"


def lookup_query(firm_id: int | str, key: str) -> str:
    """A tsquery for the node index of migration 0016 (graph_memory_lookup_words): the nodes of this firm
    whose lookup key may contain `key` (a lookup key). Each indexed lexeme is the firm and a suffix of
    one word; `key`'s first word must end a word, its middle words be words and its last begin one,
    so the index hands over every node that contains `key`, and a LIKE on the key then keeps the exact ones.
    The sight's index (migration 0017) keys the same lexemes by holder: `firm_id` is then HOLDER_MARK."""
    terms = [f"'{firm_id}:{w}'" for w in key.replace("\\", "\\\\").replace("'", "''").split(" ") if w]
    terms[-1] += ":*"
    return " & ".join(terms)


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
# words in another order, or initials for words: "Lee, Jordan", "J. Lee"), `similar` (typing
# errors: each word asked is within `word_edits_allowed` edits of a distinct word of the name
# (its legal form and a leading "the" included), or of two neighbouring words with the space
# between them, and the edits add up to at most `name_edits_allowed`). Edits are optimal
# string alignment edits: insert, delete or substitute a letter, or swap two neighbours.
#
# Candidates are found in SQL before they are scored here: for every word of a party key the
# graph's index holds its deletion neighbourhood (the word with up to `word_edits_allowed`
# letters deleted) and so does the query for each word asked; two words within k edits share
# a string of those neighbourhoods (the symmetric-deletion rule), so the index hands over every
# party the scoring accepts (words that look like a legal form or "the" are left to the scoring).
# The SQL function of migration 0005 computes `party_variants`; keep the two in step.

KINDS = ("exact", "words", "reordered", "similar")
MAX_QUERY_WORDS = 8  # beyond this, only exact and words matches are looked for


def word_edits_allowed(length: int) -> int:
    """Edits one word of this many letters may carry and still match: 0, 1 for two letters, else 2."""
    return max(0, min(2, length - 1))


def name_edits_allowed(letters: int) -> int:
    """Edits a whole name of this many letters (spaces aside) may carry: 0 below 4, 1 below 7, else 2."""
    return 0 if letters < 4 else 1 if letters < 7 else 2


def deletions(word: str, k: int) -> set[str]:
    """`word` with up to `k` of its letters deleted (itself included)."""
    found, frontier = {word}, {word}
    for _ in range(k):
        frontier = {w[:i] + w[i + 1 :] for w in frontier for i in range(len(w))}
        found |= frontier
    return found


def party_variants(firm_id: int, key: str, lookup: str) -> set[str]:
    """What the graph's index holds for a party (its party key and lookup key): each word's deletion
    neighbourhood (an initial as "^j": a query looks initials up apart, as their deletion strings
    would be far too common) and, for each two neighbouring words of the whole name (legal form
    included), the two run together with up to one letter deleted; every string prefixed with the
    firm. Nothing for a node without a party key."""
    words = [w for w in key.split(" ") if w]
    if not words:
        return set()
    whole = [w for w in lookup.split(" ") if w]
    units = {f"^{w}" if len(w) == 1 else v for w in words for v in deletions(w, word_edits_allowed(len(w)))}
    units |= {v for a, b in itertools.pairwise(whole) for v in deletions(a + b, 1)}
    return {f"{firm_id}:{u}" for u in units}


# A lawyer's sight (graph_memory.wall.sight) holds each party's index strings as 32-bit numbers, so a
# conflict check tests a few hundred bytes per party instead of a TOASTed text array: the first
# four bytes of the string's SHA-256, signed. Migration 0013's SQL function
# graph_memory_party_hashes computes them for every node, `party_hashes` here. A collision
# only adds a candidate, which `conflict_match` then turns down. The exact party key is one
# more string, "<firm>:=<key>" (no index string holds "=").


def variant_hash(text: str) -> int:
    """The signed 32-bit number a sight holds for this index string."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big", signed=True)


def party_hashes(firm_id: int, key: str, lookup: str) -> set[int]:
    """The numbers a sight holds for a party: its index strings' and its exact key's (none without a key)."""
    if not key:
        return set()
    return {variant_hash(s) for s in party_variants(firm_id, key, lookup) | {exact_string(firm_id, key)}}


def exact_string(firm_id: int, key: str) -> str:
    """The index string a sight adds for a party's exact key."""
    return f"{firm_id}:={key}"


@dataclass(frozen=True)
class NameMatch:
    kind: str  # one of KINDS
    similarity: float  # the share of the party's name (letters) the name asked accounts for, less its edits


def _near(word: str, targets: frozenset[str]) -> int | None:
    """The fewest edits from `word` to one of `targets` of two letters or more, if within 1 (2 for six letters or more)."""
    found = [OSA.distance(word, t) for t in targets if len(t) > 1 and abs(len(t) - len(word)) <= 2]
    best = min(found, default=None)
    return best if best is not None and best <= (2 if len(word) >= 6 else 1) else None


@dataclass(frozen=True)
class ConflictQuery:
    """A name asked for, prepared once: its party key, its words as typed, its readings and index strings."""

    text: str
    key: str
    words: tuple[str, ...]  # of the party key
    edits_allowed: int
    readings: tuple[tuple[tuple[str, ...], int], ...]  # (words, edits the reading already spent)
    indexed: tuple[bool, ...]  # per word: looked up in the index (not an initial, a legal form or "the")
    optional: dict[str, int]  # misspelt legal forms or "the" a party may lack: word -> edits to drop it

    def index_groups(self, firm_id: int) -> list[list[list[str]]]:
        """For each reading, one list of index strings per word looked up: a candidate holds at least
        one string of every list of some reading (readings with no such word are not looked up)."""
        looked_up = {w for w, indexed in zip(self.words, self.indexed, strict=True) if indexed}
        groups = []
        for words, spent in self.readings:
            budget = self.edits_allowed - spent
            lists = [
                sorted({f"{firm_id}:{v}" for v in deletions(w, min(word_edits_allowed(len(w)), budget))} | {f"{firm_id}:^{w[0]}"})
                for w in words
                if len(w) > 1 and (w in looked_up or w not in self.words)
            ]
            if lists:
                groups.append(lists)
        return groups


# A letter typed straight after punctuation and standing alone ("Logistics,y B.V."): a stray keystroke.
_STRAY = re.compile(r"[^\w\s]([^\W\d_])(?=\s|$)")


def conflict_query(text: str) -> ConflictQuery:
    key = _party_key(_tokens(text or ""))
    words = tuple(key.split()) if key else ()
    allowed = name_edits_allowed(sum(len(w) for w in words))
    # What the party key kept because it is misspelt ("Ltd" as "Ld", "The" as "Hhe") is left to
    # the scoring, which matches it against the party's own legal form or "the".
    indexed = [len(w) > 1 for w in words]
    optional: dict[str, int] = {}
    end = len(words)
    while end > 1 and (edits := _near(words[end - 1], LEGAL_FORMS)) is not None:
        end -= 1
        indexed[end] = False
        if len(words[end]) >= 3:  # "Limted", "Incorporatd": dropped as the party key drops "Limited"
            optional[words[end]] = edits
    if len(words) > 1 and (edits := _near(words[0], _LEADING_ARTICLES)) is not None:
        indexed[0] = False
        optional[words[0]] = edits
    readings: list[tuple[tuple[str, ...], int]] = [(words, 0)]
    if 1 < len(words) <= MAX_QUERY_WORDS:
        for i, (a, b) in enumerate(itertools.pairwise(words)):
            before, after = words[:i], words[i + 2 :]
            if len(a) > 1 and len(b) > 1:  # a space typed inside a word
                readings.append(((*before, a + b, *after), 1))
            if len(a) > 1:  # the space typed one letter early, or late
                readings.append(((*before, a[:-1], a[-1] + b, *after), 1))
            if len(b) > 1:
                readings.append(((*before, a + b[0], b[1:], *after), 1))
    optional = {w: n for w, n in optional.items() if w not in LEGAL_FORMS and w not in _LEADING_ARTICLES}
    if len(words) > 1:
        optional |= {letter: 1 for letter in _STRAY.findall(_fold(text or "")) if letter in words}
    return ConflictQuery(text, key, words, allowed, tuple(readings), tuple(indexed), optional)


def _is_initial(a: str, b: str) -> bool:
    return (len(a) == 1 and len(b) > 1 and b[0] == a) or (len(b) == 1 and len(a) > 1 and a[0] == b)


def _subsequence(words: Sequence[str], of: Sequence[str]) -> bool:
    it = iter(of)
    return all(any(w == x for x in it) for w in words)


# A unit of a name: the tokens it uses, its text, and the letters of the party key it stands for.
_Unit = tuple[frozenset[int], str, int]


def _assign(
    words: Sequence[str], units: list[_Unit], budget: int, optional: dict[str, int] | None = None
) -> tuple[int, int] | None:
    """The cheapest way to match every word to a distinct unit (or leave an `optional` one out, at
    its cost): (edits, letters of the party key matched), or None if it takes more than `budget` edits."""
    options_per_word = []
    for w in words:
        options: list[tuple[int, frozenset[int], int]] = (
            [(optional[w], frozenset(), 0)] if optional and w in optional else []
        )
        for used, unit, letters in units:
            if w == unit:
                options.append((0, used, letters))
            elif _is_initial(w, unit):
                options.append((0, used, 1 if letters else 0))
            elif budget:
                cap = min(word_edits_allowed(max(len(w), len(unit))), budget)
                d = OSA.distance(w, unit, score_cutoff=cap)
                if d <= cap:
                    options.append((d, used, letters))
        if not options:
            return None
        options_per_word.append(sorted(options, key=lambda o: o[0]))
    best: tuple[int, int] | None = None

    def walk(i: int, taken: frozenset[int], edits: int, letters: int) -> None:
        nonlocal best
        if edits > budget or (best is not None and edits > best[0]):
            return
        if i == len(options_per_word):
            if best is None or (edits, -letters) < (best[0], -best[1]):
                best = (edits, letters)
            return
        for cost, used, length in options_per_word[i]:
            if not used & taken:
                walk(i + 1, taken | used, edits + cost, letters + length)

    walk(0, frozenset(), 0, 0)
    return best


def conflict_match(query: ConflictQuery, party_key_of_name: str, lookup_key_of_name: str = "") -> NameMatch | None:
    """How `query` matches a party with this party key (and lookup key: its legal form and a
    leading "the" can then absorb misspelt ones); None when it does not."""
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
    units: list[_Unit] = [(frozenset({i}), w, len(w)) for i, w in enumerate(name)]
    found = _assign(query.words, units, 0)
    if found is not None:
        return NameMatch("reordered", round(found[1] / letters, 4))
    # The whole name as looked up: the party key's words with any leading "the" and trailing legal forms.
    full = lookup_key_of_name.split() or name
    start = next((i for i in range(len(full) - len(name) + 1) if full[i : i + len(name)] == name), 0)
    own = range(start, start + len(name))
    units = [(frozenset({i}), w, len(w) if i in own else 0) for i, w in enumerate(full)]
    units += [
        (frozenset({i, i + 1}), f"{a} {b}", (len(a) if i in own else 0) + (len(b) if i + 1 in own else 0))
        for i, (a, b) in enumerate(itertools.pairwise(full))
    ]
    best: tuple[int, int] | None = None
    for words, spent in query.readings:
        found = _assign(words, units, query.edits_allowed - spent, query.optional)
        if found is not None and (best is None or (found[0] + spent, -found[1]) < (best[0], -best[1])):
            best = (found[0] + spent, found[1])
    if best is None or best[1] == 0:
        return None
    return NameMatch("similar", round(max(best[1] - best[0], 0) / letters, 4))
