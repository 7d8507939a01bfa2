"""The plants two helpers designed blind (bench/faithfulness_blind.py): none of their falsehoods is served.

They never read the rules, so their classes are ones the rules were not written against: a privative
adjective, "a few" made "few", a name in a series taken for a second name, "the chairman and the chief
executive" made one person, a label that pairs words from two clauses. A falsehood here that is served is a
hole in a rule, not in this list.

Three kinds may be served by design, and run as non-strict expected failures, so the suite shows how many
are served:
- a label of one word over a sentence that hedges or alleges ("Forgery" over "The claimant alleges that the
  defendant forged the signature"): one word names what the point is about, as "Settlement" does over "The
  client wants to settle"; the sentence beside it says how far it holds;
- a label that is a row of its sentence's own words, over a sentence that qualifies nothing ("Insolvent" over
  "The company was insolvent when the loan was made"): it says what the sentence says;
- a plant its own helper, on review, found true or harmless (its "reviewed" field says why).
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.faithfulness_blind import plants, served
from graph_memory.summaries import meaning
from graph_memory.summaries.shorten import ARTICLES, tokens

FALSEHOODS = [p for p in plants() if p["kind"] != "true"]


def _served_by_design(plant: dict[str, Any]) -> str:
    """Why the plant may be served ("" when it may not)."""
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


def _param(n: int, plant: dict[str, Any]) -> Any:
    why = _served_by_design(plant)
    marks = [pytest.mark.xfail(strict=False, reason=why)] if why else []
    return pytest.param(plant, id=f"{plant['set']}-{plant['class']}-{n}", marks=marks)


def test_the_plants_are_many_classes_of_falsehood() -> None:
    classes = {(p["set"], p["class"]) for p in FALSEHOODS}
    assert len(FALSEHOODS) >= 1400 and len(classes) >= 280


@pytest.mark.parametrize("plant", [_param(n, p) for n, p in enumerate(FALSEHOODS)])
def test_no_blind_falsehood_is_served(plant: dict[str, Any]) -> None:
    assert served(plant) is None, plant


def test_true_shortenings_are_served_as_proposed_or_whole() -> None:
    """A refused true shortening is served as its whole sentence: weaker, never false; a kept one is the
    proposal itself."""
    kept = [p for p in plants() if p["kind"] == "true" and served(p) is not None]
    assert kept, "some true shortenings (a connective, a citation, a name between commas) are kept"
    for plant in kept:
        assert str(served(plant)).casefold().split() == plant["proposal"].casefold().split(), plant
