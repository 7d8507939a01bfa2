"""The conflict matcher on a labelled population of name variants (tests/name_variants.py), in Python.

The same population at 10,000 parties per firm, through the SQL and the wall,
is bench/bench_conflicts.py; this is its quick version, scoring every party
for every query (no index), so it also shows the index drops nothing.
"""

from __future__ import annotations

import pytest

from graph_memory.map import names
from tests import name_variants

PARTIES, PER_CLASS = 1500, 60


@pytest.fixture(scope="module")
def scored() -> dict[str, tuple[float, float]]:
    pop = name_variants.population(PARTIES)
    keys = [names.party_key(p.name) for p in pop.parties]
    lookups = [names.lookup_key(p.name) for p in pop.parties]
    variants = [names.party_variants(1, k, lk) for k, lk in zip(keys, lookups, strict=True)]
    by_class: dict[str, list[tuple[bool, int, int]]] = {}
    for query in name_variants.queries(pop, PER_CLASS):
        prepared = names.conflict_query(query.text)
        groups = prepared.index_groups(1)
        hits = set()
        for i, key in enumerate(keys):
            if names.conflict_match(prepared, key, lookups[i]) is not None:
                hits.add(i)
                # What the SQL index would hand over: every accepted match is a candidate.
                assert key == prepared.key or any(all(set(g) & variants[i] for g in lists) for lists in groups)
        by_class.setdefault(query.kind, []).append((query.target in hits, len(hits & query.relevant), len(hits)))
    return {
        kind: (sum(r[0] for r in rows) / len(rows), sum(r[1] for r in rows) / max(1, sum(r[2] for r in rows)))
        for kind, rows in by_class.items()
    }


@pytest.mark.parametrize("kind", name_variants.CLASSES)
def test_recall_and_precision_per_variant_class(scored, kind: str) -> None:
    recall, precision = scored[kind]
    assert recall >= 0.99 and precision >= 0.95, (kind, recall, precision)
