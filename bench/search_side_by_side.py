"""Vector ranking for one viewer, seven ways side by side: this app's choice and its two paths, and peers.

The peers are the usual ways to filter an approximate index in pgvector:
post-filtering (the index's ef_search = 40 nearest, then the wall) and
pgvector's iterative scan in relaxed order (ef_search = 40, the wall as a
filter while walking, re-sorted after, as pgvector's README shows). Each runs
twice: on the one HNSW index over every firm's vectors (a plain pgvector
set-up; the issue's peers), and on this app's index of the viewer's firm
(graph_memory/vectors/firm_indexes.py) where the firm has one. Every way applies the
same wall (`access.visible_case_ids_sql`). Used by bench/bench_search.py;
Django must be set up.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from django.db import connection, transaction
from django.test import override_settings
from pgvector import Vector

from bench.scratch import percentile
from graph_memory.models import CaseSummary
from graph_memory.viewer import search
from graph_memory.wall import access

S = CaseSummary._meta.db_table
PEER_EF_SEARCH = 40
APPROACHES = (
    "this app (chosen by share)",
    "exact scan",
    "HNSW, iterative strict (this app's index path)",
    "HNSW, post-filtered",
    "HNSW, iterative relaxed",
    "HNSW, post-filtered, on the firm's own index",
    "HNSW, iterative relaxed, on the firm's own index",
)
SHARED_PEERS, OWN_INDEX_PEERS = APPROACHES[3:5], APPROACHES[5:]


def _peer(viewer: Any, vector: Sequence[float], model: str, depth: int, *, iterative: str, own_index: bool) -> list[int]:
    vis_sql, vis_params = access.visible_case_ids_sql(viewer)
    query = Vector(list(vector)).to_text()
    # On the shared index: the firm as a one-row subquery, which the planner cannot match to a firm
    # index's predicate (`firm_id = N`) but evaluates once, as cheap as the number written inline.
    firm = "%s" if own_index else "(SELECT %s::bigint)"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL hnsw.iterative_scan = {iterative}; SET LOCAL hnsw.ef_search = {PEER_EF_SEARCH:d}")
        cursor.execute(
            f"""WITH r AS MATERIALIZED (
                SELECT s.case_id, s.embedding <=> %s::vector AS distance FROM {S} s
                WHERE s.firm_id = {firm} AND s.embedding_model = %s
                  AND (EXISTS (SELECT 1 FROM ({vis_sql}) AS v(id) WHERE v.id = s.case_id)) IS TRUE
                ORDER BY s.embedding <=> %s::vector LIMIT %s
            ) SELECT case_id FROM r ORDER BY distance""",
            (query, access.viewer_firm_id(viewer), model, *vis_params, query, depth),
        )
        return [r[0] for r in cursor.fetchall()]


def rankers(model: str, settings_base: dict[str, Any]) -> dict[str, Callable[[Any, Sequence[float]], tuple[list[int], str]]]:
    def app(force: str | None) -> Callable[[Any, Sequence[float]], tuple[list[int], str]]:
        def rank(viewer: Any, vector: Sequence[float]) -> tuple[list[int], str]:
            with override_settings(GRAPH_MEMORY=settings_base):
                found = search.vector_ranking(viewer=viewer, vector=vector, model=model, depth=10, force=force)
            return found.case_ids, found.method

        return rank

    return {
        APPROACHES[0]: app(None),
        APPROACHES[1]: app("exact"),
        APPROACHES[2]: app("index"),
        APPROACHES[3]: lambda v, q: (_peer(v, q, model, 10, iterative="off", own_index=False), ""),
        APPROACHES[4]: lambda v, q: (_peer(v, q, model, 10, iterative="relaxed_order", own_index=False), ""),
        APPROACHES[5]: lambda v, q: (_peer(v, q, model, 10, iterative="off", own_index=True), ""),
        APPROACHES[6]: lambda v, q: (_peer(v, q, model, 10, iterative="relaxed_order", own_index=True), ""),
    }


def measure(
    *, viewers: dict[float, list[tuple[Any, np.ndarray]]], queries: np.ndarray, model: str,
    exact_top: Callable[[np.ndarray, np.ndarray], list[int]], settings_base: dict[str, Any], warmup: int,
) -> list[tuple]:
    """Rows (share, visible, approach, method, recall min, recall mean, p50 ms, p95 ms), every approach
    run on the same query in turn, in a random order each time (so neither machine load nor warm
    caches favour any)."""
    ways = rankers(model, settings_base)
    order = random.Random(7)
    rows = []
    for share, group in viewers.items():
        stats = {name: ([], [], set()) for name in ways}
        for i, query in enumerate(queries):
            viewer, visible = group[i % len(group)]
            expected = set(exact_top(visible, query))
            # A fresh order for every query: no way always follows the one that just swept the caches.
            for name in order.sample(list(ways), len(ways)):
                rank = ways[name]
                t0 = time.perf_counter()
                found, method = rank(viewer, query)
                elapsed = (time.perf_counter() - t0) * 1000
                assert set(found) <= set(visible.tolist())  # the wall, whatever the way
                if i >= warmup:
                    stats[name][0].append(len(set(found) & expected) / max(1, len(expected)))
                    stats[name][1].append(elapsed)
                    if method:
                        stats[name][2].add(method)
        for name, (recalls, ms, methods) in stats.items():
            rows.append((share, len(group[0][1]), name, "/".join(sorted(methods)), min(recalls),
                         statistics.mean(recalls), percentile(ms, 50), percentile(ms, 95)))  # fmt: skip
    return rows


def table(rows: list[tuple]) -> str:
    lines = [
        "| share of firm | visible cases | approach | recall@10 min / mean | ms p50 / p95 |",
        "| ---: | ---: | --- | ---: | ---: |",
    ]
    for share, visible, name, method, rmin, rmean, p50, p95 in rows:
        label = f"{name} → {method}" if method and name == APPROACHES[0] else name
        lines.append(f"| {share:.1%} | {visible:,} | {label} | {rmin:.2f} / {rmean:.3f} | {p50:.1f} / {p95:.1f} |")
    return "\n".join(lines)


def verdict(rows: list[tuple], peers_among: Sequence[str] = SHARED_PEERS) -> str:
    """Per share: this app's p50 and recall against the fastest of these peers'."""
    out = []
    for share in dict.fromkeys(r[0] for r in rows):
        mine = next(r for r in rows if r[0] == share and r[2] == APPROACHES[0])
        peers = [r for r in rows if r[0] == share and r[2] in peers_among]
        fastest = min(peers, key=lambda r: r[6])
        out.append(
            f"{share:.1%}: {mine[6]:.1f} ms vs the fastest peer's {fastest[6]:.1f} ms ({fastest[2]}, recall "
            f"{fastest[5]:.2f}); recall {mine[5]:.2f}: "
            + ("met" if mine[6] <= fastest[6] and mine[4] == 1.0 else "not met")
        )
    return "; ".join(out)
