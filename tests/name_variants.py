"""A labelled population of party names with known variants, for the conflict check's benchmark.

Parties are companies (one or two distinctive words, often a common word such
as "Holdings", usually a legal form) and people (a common first name and a
distinctive surname). Distinctive words are made up and kept at least three
edits apart from each other, so a typo of one party's name is not also a typo
of another's: any second party a typo query returns is a false hit. Near-miss
distractors sit just outside the typo budget (a distinctive word three edits
away, the same surname with another first name, the same first word with
another second word).

Each query is one variant of one target party, in a class; the parties a
correct answer must include (`relevant`) are decided here by the class, not
by the matcher: the target itself and every party whose name holds all the
words of the name meant, or for a short form all the words asked (a reviewer
must see each of them).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from graph_memory.map.names import deletions, party_key

GENERIC = ("Holdings", "Group", "Partners", "Logistics", "Foods", "Capital", "Systems", "Industries",
           "Technologies", "Realty", "Energy", "Trading", "Components", "Media", "Pharma", "Bank")  # fmt: skip
LEGAL = ("Inc.", "Inc", "LLC", "L.L.C.", "Ltd", "Ltd.", "Limited", "GmbH", "S.A.", "Corp.", "Corporation", "plc",
         "B.V.", "AG", "Co.", "Company", "Incorporated", "LLP", "Pty Ltd", "S.p.A.")  # fmt: skip
FIRST_NAMES = ("Jordan", "Maria", "Daniel", "Aisha", "Kwame", "Lena", "Thomas", "Grace", "Luis", "Miriam", "Patrick",
               "Rebecca", "Kofi", "Sofia", "Hiroshi", "Elena", "Omar", "Ingrid", "Carlos", "Priya", "Samuel", "Chloe",
               "Viktor", "Amara", "Nikolai", "Fatima", "Henrik", "Leila", "Mateo", "Yuki")  # fmt: skip
_ONSETS = ("b", "br", "c", "d", "dr", "f", "g", "gr", "h", "k", "kl", "l", "m", "n", "p", "pr", "r", "s", "st", "t",
           "tr", "v", "w", "z", "sh", "ch")  # fmt: skip
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou", "ea")
_CODAS = ("", "n", "r", "l", "s", "m", "x", "nd", "rt", "ck", "lt")
ACCENTS = {"a": "áàâä", "e": "éèêë", "i": "íï", "o": "óöô", "u": "úüù", "c": "ç", "n": "ñ"}
CLASSES = ("legal form", "punctuation", "case", "accents", "word order", "initials", "short form",
           "one typo", "two typos")  # fmt: skip


@dataclass
class Party:
    name: str
    person: bool
    words: tuple[str, ...]  # distinctive words (companies), or (first name, surname)
    generic: str = ""
    legal: str = ""


@dataclass(frozen=True)
class Query:
    kind: str  # one of CLASSES
    text: str
    target: int  # index into Population.parties
    relevant: frozenset[int]


@dataclass
class Population:
    parties: list[Party] = field(default_factory=list)
    distractors: int = 0


class _Words:
    """Made-up words, no two within two edits of each other (their 2-deletion neighbourhoods never meet)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.taken, self.seen = rng, set(), set()

    def _fresh(self, word: str) -> bool:
        return len(word) >= 4 and not deletions(word, 2) & self.taken

    def take(self, word: str) -> str:
        self.taken |= deletions(word, 2)
        self.seen.add(word)
        return word

    def new(self, low: int = 5, high: int = 10) -> str:
        while True:
            word = "".join(
                self.rng.choice(_ONSETS) + self.rng.choice(_VOWELS) + self.rng.choice(_CODAS)
                for _ in range(self.rng.randint(2, 3))
            )
            if low <= len(word) <= high and self._fresh(word):
                return self.take(word)

    def near(self, word: str) -> str | None:
        """A new word exactly three substitutions from `word` (a near miss, just outside the typo budget)."""
        for _ in range(200):
            letters = list(word)
            for i in self.rng.sample(range(len(letters)), 3):
                letters[i] = self.rng.choice("aeioubcdfgklmnprstvz".replace(letters[i], ""))
            candidate = "".join(letters)
            if self._fresh(candidate):
                return self.take(candidate)
        return None


def _company(words: tuple[str, ...], generic: str, legal: str, rng: random.Random) -> Party:
    parts = [w.capitalize() for w in words] + ([generic] if generic else [])
    name = " ".join(parts)
    if legal:
        name += ("," if rng.random() < 0.3 else "") + " " + legal
    if rng.random() < 0.05:
        name = "The " + name
    return Party(name=name, person=False, words=words, generic=generic, legal=legal)


def _person(first: str, surname: str) -> Party:
    return Party(name=f"{first} {surname.capitalize()}", person=True, words=(first.lower(), surname))


def population(size: int, *, seed: int = 14, distractor_share: float = 0.2) -> Population:
    """`size` parties, of which about `distractor_share` are near misses of another party."""
    rng, words = random.Random(seed), _Words(random.Random(seed + 1))
    for first in FIRST_NAMES:
        words.take(first.lower())
    for generic in GENERIC:
        words.take(generic.lower())
    pop = Population()
    while len(pop.parties) < size:
        if pop.parties and rng.random() < distractor_share:
            base = rng.choice(pop.parties)
            if base.person:
                if rng.random() < 0.5:
                    first = rng.choice([f for f in FIRST_NAMES if f[0] != base.words[0][0].upper()])
                    pop.parties.append(_person(first, base.words[1]))
                else:
                    near = words.near(base.words[1])
                    if near:
                        pop.parties.append(_person(base.words[0].capitalize(), near))
            elif rng.random() < 0.5:
                near = words.near(base.words[0])
                if near:
                    pop.parties.append(_company((near, *base.words[1:]), base.generic, base.legal, rng))
            else:
                generic = rng.choice([g for g in GENERIC if g != base.generic])
                pop.parties.append(_company(base.words, generic, rng.choice(LEGAL), rng))
            pop.distractors += 1
            continue
        if rng.random() < 0.3:
            pop.parties.append(_person(rng.choice(FIRST_NAMES), words.new(4, 9)))
        else:
            cores = tuple(words.new() for _ in range(1 if rng.random() < 0.6 else 2))
            generic = rng.choice(GENERIC) if rng.random() < 0.7 else ""
            legal = rng.choice(LEGAL) if rng.random() < 0.85 else ""
            pop.parties.append(_company(cores, generic, legal, rng))
    return pop


# --- Variants -------------------------------------------------------------------------------------


def _typo(text: str, rng: random.Random, avoid: set[int]) -> tuple[str, int]:
    """One random edit (substitute, delete, insert or swap neighbours) at a letter or space not yet edited."""
    spots = [i for i, ch in enumerate(text) if (ch.isalpha() or ch == " ") and i not in avoid]
    i = rng.choice(spots)
    op = rng.choice(("substitute", "delete", "insert", "swap"))
    letter = rng.choice("abcdefghijklmnopqrstuvwxyz")
    if op == "substitute":
        return text[:i] + letter + text[i + 1 :], i
    if op == "delete":
        return text[:i] + text[i + 1 :], i
    if op == "insert":
        return text[:i] + letter + text[i:], i
    if i + 1 < len(text) and text[i + 1] != text[i]:
        return text[:i] + text[i + 1] + text[i] + text[i + 2 :], i
    return text[:i] + letter + text[i + 1 :], i


def variant(party: Party, kind: str, rng: random.Random) -> str | None:
    """One variant of the party's name in this class (None when the class does not apply)."""
    name = party.name
    if kind == "legal form":
        if party.person:
            return None
        base = " ".join([w.capitalize() for w in party.words] + ([party.generic] if party.generic else []))
        legal = rng.choice([f for f in (*LEGAL, "") if f != party.legal])
        return f"{base} {legal}".strip()
    if kind == "punctuation":
        options = [name.replace(",", "").replace(".", ""), name.replace(" ", ", ", 1) + ".", name.replace(" ", "-", 1)]
        return rng.choice([o for o in options if o != name] or options)
    if kind == "case":
        return rng.choice((name.upper(), name.lower(), "".join(c.upper() if rng.random() < 0.5 else c for c in name)))
    if kind == "accents":
        spots = [i for i, c in enumerate(name) if c.lower() in ACCENTS]
        if not spots:
            return None
        letters = list(name)
        for i in rng.sample(spots, min(len(spots), rng.randint(1, 3))):
            accented = rng.choice(ACCENTS[letters[i].lower()])
            letters[i] = accented.upper() if letters[i].isupper() else accented
        return "".join(letters)
    if kind == "word order":
        if party.person:
            first, surname = name.split(" ", 1)
            return rng.choice((f"{surname}, {first}", f"{surname} {first}"))
        words = [w.capitalize() for w in party.words] + ([party.generic] if party.generic else [])
        if len(words) < 2:
            return None
        return " ".join(reversed(words)) + (f" {party.legal}" if party.legal else "")
    if kind == "initials":
        if not party.person:
            return None
        first, surname = name.split(" ", 1)
        return rng.choice((f"{first[0]}. {surname}", f"{first[0]} {surname}", f"{surname}, {first[0]}."))
    if kind == "short form":
        if party.person or (not party.generic and not party.legal and len(party.words) == 1):
            return None
        words = party.words[:1] if len(party.words) > 1 and rng.random() < 0.5 else party.words
        return " ".join(w.capitalize() for w in words)
    if kind in ("one typo", "two typos"):
        text, avoid = name, set()
        for _ in range(1 if kind == "one typo" else 2):
            text, spot = _typo(text, rng, avoid)
            avoid |= {spot - 1, spot, spot + 1}
        return text if party_key(text) != party_key(name) else None
    raise ValueError(kind)


def _relevant(keys: list[str], target: int, kind: str, text: str) -> frozenset[int]:
    """The target and every party whose name holds all the words of the name meant (for a short
    form: of the words asked): the same party key, or the same words and more ("Northwind Holdings"
    and "Northwind Holdings Europe")."""
    meant = set((party_key(text) if kind == "short form" else keys[target]).split())
    return frozenset({i for i, k in enumerate(keys) if meant <= set(k.split())} | {target})


def queries(pop: Population, per_class: int, *, seed: int = 41) -> list[Query]:
    """`per_class` queries in each class, each a variant of a random party (distractors included)."""
    rng = random.Random(seed)
    keys = [party_key(p.name) for p in pop.parties]
    found: list[Query] = []
    for kind in CLASSES:
        made, tries = 0, 0
        while made < per_class and tries < per_class * 50:
            tries += 1
            target = rng.randrange(len(pop.parties))
            text = variant(pop.parties[target], kind, rng)
            if text is None:
                continue
            found.append(Query(kind, text, target, _relevant(keys, target, kind, text)))
            made += 1
    return found
