"""Planted falsehoods and true shortenings designed blind: by fourteen helpers, each working alone, that never read
the shortening, meaning or label rules (graph_memory/summaries/), this bench's own plants or their tests, only
issue 27's text and the two functions' signatures. So they test classes the rules' authors did not design
against.

`faithfulness_blind.json` holds them, each {"set", "round", "kind", "class", "sentence", "proposal" or
"label", "names" or "parties", "why"}, and "reviewed" where the plant's own helper, on review, found it true
or harmless. Set 1 (stop 50's first helper): round 1 written in full before anything ran; rounds 2 and 3
after, aimed at the kinds of deletion the refusal messages named as allowed. Sets 2 and 3 (a helper each,
each after the holes of the sets before were closed, shown none of them): round 1 blind, round 2 aimed the
same way. Set 4 (stop 51's helper, the same way, told which deletions had just been allowed: connectives of
several words, defined terms in brackets, a sentence ended at a company form) was run against the first
form of those rules; the holes it found (a defined term that says which of the things before it are meant,
'The lenders (the "Consenting Lenders")'; "In the meantime," and "Meanwhile," bounding a rule in time)
were closed after it, and it is measured here against the rules as they now stand. Set 5 (a helper after
those were closed, told only the refusal message's list of what may go): rounds 1 (blind) and 2 (aimed) as
before, then rounds 3 and 4 of its own on the holes rounds 1 and 2 showed (a mark such as "[?]" or "✗"
that went with a connective beside it; a label that is a clause, "Deposit is refundable", or a word that
says how a thing is, "Assignable", over a sentence that rejects or denies it), closed after it the same way.
Set 6 (a helper after those, told the same, asked for false labels as much as false shortenings, and fair
labels as "label-true"): rounds 1 and 2 as before; its holes (a one-word label that is an adjective the
sentence only supposes, questions or denies, "Insolvent" over "Castell may become insolvent"; a bare
abbreviation in a citing aside, "(STC, letter of 6 April 2027)", subject to contract) closed after it.
Set 7 (a helper after those, the same way): its holes ("the" dropped under a denial, permission or condition,
"did not sell the shares" -> "did not sell shares"; a unit or a year in brackets, "(£000)", "[2019]"; a
one-word label for what a thing is said to be, "Fraudster" over "Northwind's letter calls Hale a
fraudster") closed after it; four labels of an adjective and a noun the sentence itself uses in a report
("Rogue director" over "The headline spoke of the rogue director") stand, arguable on its review. Set 8 (a
helper after set 7's holes were closed, the same way, one blind round only and nothing changed after it):
what the rules as they stand do with classes nobody wrote them against. Sets 9 and 10 (stop 52: two helpers
at once, the same way, on the rules after set 8; set 9 aimed at falsehoods, rounds 1 blind, 2 aimed, 3 and 4
its own probes; set 10 played a good and a careless model, rounds 1 blind, 2 and 3 aimed): their holes (a
name between commas after "and", "Aster paid £2m and, Birch, £500,000"; an opening phrase's word that says
what the thing is or how it stands, "A voidable transfer", "A guide price"; "a" dropped inside a sentence,
"is a director" made "is director"; an as-clause whose record accuses, "as the indictment shows") closed
after them, and a "true" plant its own helper found on review to lose what a lawyer needs became "false"
(its "note" says so). Sets 11 and 12 (two more helpers at once, the same way, on the rules after sets 9 and
10 were closed; set 11 aimed at falsehoods, set 12 a good and a careless model, rounds 1 blind, 2 and 3
aimed): set 12's holes (a description or bare role that says in what capacity someone acts, "Halden, the
seller's director, signed the guarantee", "Mr Patel, a minor,"; a vouching record qualified, "as the
unaudited accounts show"; a numbered witness statement cited, "(WS1, para 12)"; a verb after "to" as a
label, "Sign") closed after it, and set 11's after it (a defined term that gives a capacity, 'Mr Roy (the
Witness) signed the will'; an opening "a/an ..." before a verb that says the thing did not come to be, "A
formal hearing was dispensed with"; a description after a description, "The company, the subsidiary,").
Sets 13 and 14 (two more helpers at once on the rules after sets 11 and 12 were closed, one blind round each,
set 13 aimed at falsehoods and set 14 a good and a careless model; nothing changed after them): what the rules
as they stand do with classes nobody wrote them against. Every proposal is the sentence with
words removed (each helper checked it). Kinds: "false" (a
shortening that states what the sentence does not), "label-false" (a label that does), "true" (a shortening
a good model would make), "label-true" (set 6: a fair topic label a good model would write).

`served()` runs a plant through what a served statement passes: `shorten.shorten` for a proposal,
`verify.label_problem` for a label, with the case's names as `verify._Names` reads them from the sentence
(its only record here) and the plant's parties. Pure functions: no database, no server.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

PLANTS_FILE = Path(__file__).with_name("faithfulness_blind.json")
KINDS = ("false", "label-false", "true", "label-true")
FALSE_KINDS = ("false", "label-false")


@cache
def plants() -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(PLANTS_FILE.read_text()))


def served(plant: dict[str, Any]) -> str | None:
    """What a lawyer would read of the plant beyond its record's sentence: the shortening or label as served,
    or None when it is refused (the whole sentence served instead, or the point without its label)."""
    from graph_memory.summaries.sentences import Sentence
    from graph_memory.summaries.shorten import shorten
    from graph_memory.summaries.verify import _Names, label_problem

    if plant["kind"] in ("false", "true"):
        result = shorten(plant["sentence"], plant["proposal"])
        return result.text if result.shortened else None
    record = SimpleNamespace(body=plant["sentence"])
    names = _Names(SimpleNamespace(context=SimpleNamespace(items=[record], party_names=plant.get("parties", []))))  # type: ignore[arg-type]
    names.words |= set(plant.get("names", []))  # set 1's helper gave the parties as words
    problem = label_problem(plant["label"], names, [Sentence("s1", "note:n1", plant["sentence"])])
    return plant["label"] if problem is None else None


def by_design(plant: dict[str, Any]) -> str:
    """Why the plant may be served ("" when it may not): a label of one word over a sentence that hedges or
    alleges names what the point is about ("Forgery" over "The claimant alleges that the defendant forged the
    signature", as "Settlement" over "The client wants to settle"); a label that is a row of its sentence's
    own words over a sentence that qualifies nothing says what the sentence says ("Insolvent" over "The
    company was insolvent when the loan was made"); and a plant its own helper, on review, found true or
    harmless says so in its "reviewed" field."""
    from graph_memory.summaries import meaning
    from graph_memory.summaries.shorten import ARTICLES, tokens

    if plant.get("reviewed"):
        return plant["reviewed"]
    if plant["kind"] != "label-false":
        return ""
    sentence = [t.key for t in tokens(plant["sentence"])]
    label = [t.key for t in tokens(plant["label"]) if t.key not in ARTICLES]
    qualified = bool(meaning.protected_positions(sentence))
    if len(label) == 1 and qualified:
        return "one word names a topic"
    rows = any(sentence[i : i + len(label)] == label for i in range(len(sentence)))
    return "a row of its sentence's words, over a sentence that qualifies nothing" if rows and not qualified else ""


def measure() -> dict[str, Any]:
    """Per kind and (set, round): plants and how many were served; every served falsehood; classes per kind."""
    counts: Counter[tuple[str, tuple[int, int]]] = Counter()
    taken: Counter[tuple[str, tuple[int, int]]] = Counter()
    leaks = []
    for plant in plants():
        key = (plant["kind"], (plant["set"], plant["round"]))
        counts[key] += 1
        text = served(plant)
        if text is not None:
            taken[key] += 1
            if plant["kind"] in FALSE_KINDS:
                leaks.append({**plant, "served": text, "by_design": by_design(plant)})
    classes = {kind: len({(p["set"], p["class"]) for p in plants() if p["kind"] == kind}) for kind in KINDS}
    return {"counts": counts, "served": taken, "leaks": leaks, "classes": classes}
