"""Name normalisation for the connection map: one module, two keys.

`lookup_key` is what name lookup compares: case, accents, punctuation and
spacing ignored, so "Müller" is found by "muller" and "Holdings, Inc." by
"holdings inc". `party_key` is what the conflict check compares: the lookup
key with trailing legal-form words removed as well, so "ACME Corp." and
"Acme Corporation" are the same party. Both are pure functions of the text:
the graph stores them, and the reads apply the same function to the query.
"""

from __future__ import annotations

import re
import unicodedata

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
