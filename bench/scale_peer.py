"""A whole hybrid search written the plain pgvector way: the peer bench/bench_scale.py holds `search_cases` against.

Vector ranking and full-text ranking of the visible summaries, each its top DEPTH, fused by reciprocal
rank (k = 60), the page's TOP cases returned with their number and a snippet (ts_headline), in one
statement behind the same wall as the app (`access.visible_case_ids_sql`). Three ways to rank by meaning:
- "iterative, shared index": pgvector 0.8's iterative scan in relaxed order (hnsw.ef_search = 40),
  the wall as a filter while walking, re-sorted after, on the one HNSW index over every firm's
  vectors, as pgvector's README shows (bench/search_side_by_side.py's peer);
- "iterative, firm's index": the same on the app's own index of the viewer's firm;
- "exact": every visible vector ranked by cosine distance (no index: a function, not the operator).
Each also returns its vector top 10, for recall against an exact ranking. Django must be set up to search.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

DEPTH, TOP, RRF_K, EF_SEARCH = 20, 10, 60, 40
WAYS = ("iterative, shared index", "iterative, firm's index", "exact")
HEADLINE = 'MaxWords=40, MinWords=15, MaxFragments=2, FragmentDelimiter=" … ", StartSel="", StopSel=""'


def _vector_cte(way: str, vis_sql: str, summaries: str) -> str:
    S = summaries
    if way == "exact":
        return (
            f"SELECT s.case_id, cosine_distance(s.embedding, %s::vector) AS distance FROM {S} s "
            f"WHERE s.firm_id = %s AND s.embedding_model = %s AND s.case_id IN ({vis_sql}) "
            "ORDER BY distance, s.case_id LIMIT %s"
        )
    # On the shared index the firm is a one-row subquery, which the planner cannot match to a firm
    # index's predicate (`firm_id = N`); on the firm's own it is the number itself.
    firm = "%s" if way == "iterative, firm's index" else "(SELECT %s::bigint)"
    return (
        f"SELECT s.case_id, s.embedding <=> %s::vector AS distance FROM {S} s "
        f"WHERE s.firm_id = {firm} AND s.embedding_model = %s "
        f"AND (EXISTS (SELECT 1 FROM ({vis_sql}) AS v(id) WHERE v.id = s.case_id)) IS TRUE "
        "ORDER BY s.embedding <=> %s::vector LIMIT %s"
    )


def search(*, way: str, viewer: Any, q: str, vector: Sequence[float], model: str) -> tuple[list[int], list[int]]:
    """(the page's case ids, best first; the vector ranking's top 10) for `viewer`."""
    from django.db import connection, transaction
    from pgvector import Vector

    from graph_memory.adapter import case_model
    from graph_memory.models import CaseSummary
    from graph_memory.wall import access

    S = CaseSummary._meta.db_table
    vis_sql, vis_params = access.visible_case_ids_sql(viewer)
    firm_id = access.viewer_firm_id(viewer)
    query = Vector(list(vector)).to_text()
    cases = case_model()._meta.db_table
    if way == "exact":
        vec_params = [query, firm_id, model, *vis_params, DEPTH]
    else:
        vec_params = [query, firm_id, model, *vis_params, query, DEPTH]
    sql = f"""
        WITH vec AS MATERIALIZED ({_vector_cte(way, vis_sql, S)}),
        ranked AS (SELECT case_id, row_number() OVER (ORDER BY distance, case_id) AS rank FROM vec),
        kw AS MATERIALIZED (
            SELECT s.case_id, row_number() OVER (ORDER BY ts_rank_cd(s.search_vector, w.q) DESC, s.case_id) AS rank
            FROM {S} s, plainto_tsquery('english', %s) AS w(q)
            WHERE s.firm_id = %s AND s.search_vector @@ w.q AND s.case_id IN ({vis_sql})
            ORDER BY rank LIMIT %s
        ),
        fused AS (
            SELECT coalesce(r.case_id, kw.case_id) AS case_id,
                   coalesce(1.0 / ({RRF_K} + r.rank), 0) + coalesce(1.0 / ({RRF_K} + kw.rank), 0) AS rrf
            FROM ranked r FULL OUTER JOIN kw ON kw.case_id = r.case_id
            ORDER BY rrf DESC, case_id LIMIT %s
        )
        SELECT 'page', f.case_id, f.rrf, c.key, ts_headline('english', s.text, plainto_tsquery('english', %s), %s)
        FROM fused f JOIN {S} s ON s.case_id = f.case_id JOIN {cases} c ON c.id = f.case_id
        UNION ALL
        SELECT 'vector', r.case_id, -r.rank, NULL, NULL FROM ranked r WHERE r.rank <= 10
    """
    params = [*vec_params, q, firm_id, *vis_params, DEPTH, TOP, q, HEADLINE]
    with transaction.atomic(), connection.cursor() as cursor:
        if way != "exact":
            cursor.execute(f"SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = {EF_SEARCH:d}")
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    page = [r[1] for r in sorted((r for r in rows if r[0] == "page"), key=lambda r: (-r[2], r[1]))]
    ranking = [r[1] for r in sorted((r for r in rows if r[0] == "vector"), key=lambda r: -r[2])]
    return page, ranking
