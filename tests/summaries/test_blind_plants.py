"""The plants fourteen helpers designed blind (bench/faithfulness_blind.py): none of their falsehoods is served.

They never read the rules, so their classes are ones the rules were not written against: a privative
adjective, "a few" made "few", a name in a series taken for a second name, "the chairman and the chief
executive" made one person, a label that pairs words from two clauses. A falsehood here that is served is a
hole in a rule, not in this list.

What may be served by design (`by_design`: a one-word topic label over a sentence that hedges, a label that
is a row of its sentence's words over a sentence that qualifies nothing, a plant its helper found true on
review) runs as a non-strict expected failure, so the suite shows how many are served.
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.faithfulness_blind import FALSE_KINDS, by_design, plants, served
from graph_memory.summaries.shorten import tokens

FALSEHOODS = [p for p in plants() if p["kind"] in FALSE_KINDS]


def _param(n: int, plant: dict[str, Any]) -> Any:
    why = by_design(plant)
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
        assert [t.key for t in tokens(str(served(plant)))] == [t.key for t in tokens(plant["proposal"])], plant
