"""The plants a helper designed blind (bench/faithfulness_blind.py): none of its falsehoods is served.

It never read the rules, so its classes are ones the rules were not written against: a privative adjective,
"a few" made "few", a name in a series taken for a second name, a label that pairs a subject with what its
sentence only alleges. A falsehood here that is served is a hole in a rule, not in this list.
"""

from __future__ import annotations

import pytest

from bench.faithfulness_blind import plants, served

FALSEHOODS = [p for p in plants() if p["kind"] != "true"]
# Served, and why that stands: a label of its sentence's own words that holds a name the case's records only
# write where it opens a sentence ("Tesco holds the lease of unit 4."). proper_terms cannot tell it from a
# noun that opens a note ("Escrow of EUR 4,800,000 held ..."), and a label may use that noun; the label
# says nothing the sentence does not, and a name the sentence lacks is refused as a stranger.
NAME_OPENING_ITS_SENTENCE = {("Tesco lease", "Tesco holds the lease of unit 4.")}


def _marks(plant: dict) -> list[pytest.MarkDecorator]:
    if (plant.get("label"), plant["sentence"]) in NAME_OPENING_ITS_SENTENCE:
        return [pytest.mark.xfail(strict=True, reason="a name that only opens its sentence reads as a noun")]
    return []


def test_the_plants_are_many_classes_of_falsehood() -> None:
    classes = {p["class"] for p in FALSEHOODS}
    assert len(FALSEHOODS) >= 600 and len(classes) >= 90


@pytest.mark.parametrize(
    "plant", [pytest.param(p, id=f"{p['class']}-{n}", marks=_marks(p)) for n, p in enumerate(FALSEHOODS)]
)
def test_no_blind_falsehood_is_served(plant: dict) -> None:
    assert served(plant) is None, plant


def test_true_shortenings_are_served_as_proposed_or_whole() -> None:
    """A refused true shortening is served as its whole sentence: weaker, never false; a kept one is the
    proposal itself."""
    kept = [p for p in plants() if p["kind"] == "true" and served(p) is not None]
    assert kept, "some true shortenings (a connective, a citation, a name between commas) are kept"
    for plant in kept:
        assert served(plant).casefold().split() == plant["proposal"].casefold().split(), plant
