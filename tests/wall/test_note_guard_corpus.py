"""The write-back guard measured on generated notes (issue 31): at least 99 % of crossing notes refused, at
most 1 % of clean ones. Crossing notes carry one or two facts of a case Theo may not open (names, case
numbers, identifiers, amounts, dates, verbatim runs, in several formats) among the target case's own;
clean notes quote only the target case, in the filer's own words around it."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from graph_memory.wall.writeback.guard import note_crossings
from tests.guard_world import build_generated_world, build_guard_world, corpus, generated_corpus

pytestmark = pytest.mark.django_db


def _refused(world: Any, target: Any, text: str) -> bool:
    matches, _ = note_crossings(holders=[world.lena], case_id=target.pk, firm_id=world.firm.pk, text=text)
    return bool(matches)


def test_crossing_notes_are_refused_and_clean_ones_filed() -> None:
    missed: Counter[str] = Counter()
    wrongly: list[str] = []
    crossing_total = clean_total = 0
    world = build_guard_world()
    crossing, clean = corpus(seed=31, n_crossing=210, n_clean=250)
    for kind, text in crossing:
        missed[kind] += not _refused(world, world.a, text)
    wrongly += [text for text in clean if _refused(world, world.a, text)]
    crossing_total, clean_total = len(crossing), len(clean)
    for seed in (1, 2):
        world, target, others = build_generated_world(seed)
        crossing, clean = generated_corpus(seed, target, others, n_crossing=252, n_clean=250)
        for kind, text in crossing:
            missed[kind] += not _refused(world, target.case, text)
        wrongly += [text for text in clean if _refused(world, target.case, text)]
        crossing_total, clean_total = crossing_total + len(crossing), clean_total + len(clean)
    refused_share = 1 - sum(missed.values()) / crossing_total
    false_share = len(wrongly) / clean_total
    print(f"crossing refused {refused_share:.2%} of {crossing_total}; clean refused {false_share:.2%} of {clean_total}")
    assert refused_share >= 0.99, (missed, crossing_total)
    assert false_share <= 0.01, wrongly[:5]
