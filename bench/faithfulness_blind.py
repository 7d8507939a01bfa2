"""Planted falsehoods and true shortenings designed blind: by a helper that never read the shortening, meaning
or label rules (graph_memory/summaries/), this bench's own plants or their tests, only issue 27's text and the
two functions' signatures. So they test classes the rules' authors did not design against.

`faithfulness_blind.json` holds them, each {"round", "kind", "class", "sentence", "proposal" or "label",
"names", "why"}. Round 1 (48 classes of false shortening, 19 of false label, 11 of true shortening) was written
in full before anything ran. Rounds 2 and 3 were written after round 1 had run, aimed at the kinds of deletion
the refusal messages named as allowed. Every proposal is the sentence with words removed (the helper checked
it). Kinds: "false" (a shortening that states what the sentence does not), "label-false" (a label that does),
"true" (a shortening a good model would make).

`measure()` runs them through what a served statement passes: `shorten.shorten` for a proposal and
`verify.label_problem` for a label, with the case's names as `verify._Names` reads them from the sentence
(its only record here) plus the plant's own "names". Pure functions: no database, no server.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

PLANTS_FILE = Path(__file__).with_name("faithfulness_blind.json")


def plants() -> list[dict[str, Any]]:
    return json.loads(PLANTS_FILE.read_text())


def served(plant: dict[str, Any]) -> str | None:
    """What a lawyer would read of the plant beyond its record's sentence: the shortening or label as served,
    or None when it is refused (the whole sentence served instead, or the point without its label)."""
    from graph_memory.summaries.sentences import Sentence
    from graph_memory.summaries.shorten import shorten
    from graph_memory.summaries.verify import _Names, label_problem

    if plant["kind"] in ("false", "true"):
        result = shorten(plant["sentence"], plant["proposal"])
        return result.text if result.shortened else None
    context = SimpleNamespace(items=[SimpleNamespace(body=plant["sentence"])], party_names=[])
    names = _Names(SimpleNamespace(context=context))  # type: ignore[arg-type]
    names.words |= set(plant["names"])  # the case's parties, as the helper gave them
    problem = label_problem(plant["label"], names, [Sentence("s1", "note:n1", plant["sentence"])])
    return plant["label"] if problem is None else None


def measure() -> dict[str, Any]:
    """Per kind and round: plants, how many were served, and every served falsehood."""
    counts: Counter[tuple[str, int]] = Counter()
    taken: Counter[tuple[str, int]] = Counter()
    leaks = []
    for plant in plants():
        key = (plant["kind"], plant["round"])
        counts[key] += 1
        text = served(plant)
        if text is not None:
            taken[key] += 1
            if plant["kind"] != "true":
                leaks.append({**plant, "served": text})
    classes = {kind: len({p["class"] for p in plants() if p["kind"] == kind}) for kind in ("false", "label-false", "true")}
    return {"counts": counts, "served": taken, "leaks": leaks, "classes": classes}
