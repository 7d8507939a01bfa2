"""Search by meaning and by words over case summaries, for one viewer.

Visibility is a condition inside every SQL statement (the access module's
subquery), never a filter over a fetched top-k: a walled case cannot surface
however well it matches, and cannot push a visible match out of the page.

Vector ranking, whatever share of the firm the viewer sees:
- up to SEARCH_EXACT_MAX visible cases: an exact scan over just their vectors
  (the statement counts them first, stopping past that number);
- beyond: the HNSW index (hnsw.ef_search = SEARCH_EF_SEARCH) with pgvector's
  iterative scan in strict order, so the filter cannot starve the result; if
  it still returns fewer rows than asked for, an exact scan. Only this path is
  approximate: docs/BENCHMARKS.md gives its measured recall.
Word ranking: PostgreSQL full text over the GIN-indexed `search_vector`
(header, names and summary): every word must match when meaning is ranked
alongside (precise, and cheap however common the words), any word when words
are all there is. The two rankings are fused by reciprocal rank fusion;
without a working embedder the answer is words only and says so. Each path is
a fixed number of statements, whatever the data size.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from pgvector import Vector

from graph_memory import access, conf, embeddings
from graph_memory.adapter import case_model, get_adapter
from graph_memory.models import CaseSummary, Node
from graph_memory.selectors import NodeRef

logger = logging.getLogger(__name__)

RRF_K = 60
HEADLINE_OPTIONS = 'MaxWords=40, MinWords=15, MaxFragments=2, FragmentDelimiter=" … ", StartSel="", StopSel=""'

S, N = CaseSummary._meta.db_table, Node._meta.db_table


def _references_sql() -> tuple[str, tuple[Any, ...]]:
    """Every case's id and reference (the adapter's expression) as SQL: the planner folds it into the join."""
    cases = case_model().objects.order_by().annotate(_reference=get_adapter().case_reference())
    sql, params = cases.values("pk", "_reference").query.sql_with_params()
    return sql, tuple(params)


@dataclass(frozen=True)
class SearchHit:
    case: NodeRef
    case_id: int
    key: str
    score: float  # 1.0 = first in every ranking used; see `search_cases`
    snippet: str


@dataclass(frozen=True)
class SearchResult:
    results: list[SearchHit]
    mode: str  # "hybrid" or "keyword"
    notice: str


@dataclass(frozen=True)
class VectorRanking:
    case_ids: list[int]
    distances: list[float]
    method: str  # "exact", "hnsw" or "hnsw+exact"


# The exact scan reads each visible case's vector through the unique case_id
# index: the LATERAL subquery's OFFSET 0 keeps the planner from turning it into
# a hash join over every summary (it cannot estimate the visible set), and
# cosine_distance() rather than the <=> operator keeps it off the approximate index.
_ONE_SUMMARY = (
    f"SELECT s.case_id, s.embedding FROM {S} s "
    "WHERE s.case_id = vis.id AND s.embedding_model = %s AND s.embedding IS NOT NULL OFFSET 0"
)


def _words_query(q: str) -> str:
    """`q` as "any of these words" in websearch syntax (punctuation and operators dropped)."""
    return " or ".join(re.findall(r"\w+", q))


def _rows(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def vector_ranking(*, viewer: Any, vector: Sequence[float], model: str, depth: int) -> VectorRanking:
    """The `depth` visible cases nearest to `vector` (cosine), among vectors of `model`, nearest first."""
    visible = access.visible_case_ids_sql(viewer)
    if visible is None:
        return VectorRanking([], [], "exact")
    vis_sql, vis_params = visible
    query = Vector(list(vector)).to_text()
    exact_max = int(conf.get("SEARCH_EXACT_MAX"))
    # One statement: count the visible cases (stopping past the threshold) and,
    # when there are few enough, rank their vectors exactly.
    rows = _rows(
        f"""
        WITH vis AS MATERIALIZED (SELECT v.id FROM ({vis_sql}) AS v(id) LIMIT %s),
             n AS (SELECT count(*) AS n FROM vis)
        SELECT n.n, r.case_id, r.distance FROM n LEFT JOIN LATERAL (
            SELECT s.case_id, cosine_distance(s.embedding, %s::vector) AS distance
            FROM vis CROSS JOIN LATERAL ({_ONE_SUMMARY}) AS s
            WHERE n.n <= %s
            ORDER BY distance, s.case_id
            LIMIT %s
        ) r ON true
        """,
        (*vis_params, exact_max + 1, query, model, exact_max, depth),
    )
    if rows[0][0] <= exact_max:
        ranked = [(r[1], r[2]) for r in rows if r[1] is not None]
        return VectorRanking([c for c, _ in ranked], [d for _, d in ranked], "exact")
    return _index_ranking(viewer=viewer, visible=visible, vector=query, model=model, depth=depth)


def _index_ranking(
    *, viewer: Any, visible: tuple[str, tuple[Any, ...]], vector: str, model: str, depth: int
) -> VectorRanking:
    """The HNSW index with an iterative scan; an exact scan if it still comes back short."""
    vis_sql, vis_params = visible
    with transaction.atomic():
        with connection.cursor() as cursor:
            # Iterative scan: the index keeps walking until `depth` rows pass the
            # visibility filter (or hnsw.max_scan_tuples is reached), in exact
            # distance order. SET LOCAL ends with this transaction.
            ef_search = max(int(conf.get("SEARCH_EF_SEARCH")), depth)
            cursor.execute(f"SET LOCAL hnsw.iterative_scan = strict_order; SET LOCAL hnsw.ef_search = {ef_search:d}")
            # Visibility as a per-row condition (IS TRUE keeps the planner from
            # turning it into a join, which would rank every visible row instead
            # of walking the index): checked for each candidate the index yields.
            cursor.execute(
                f"SELECT s.case_id, s.embedding <=> %s::vector AS distance FROM {S} s "
                f"WHERE s.firm_id = %s AND s.embedding_model = %s "
                f"AND (EXISTS (SELECT 1 FROM ({vis_sql}) AS v(id) WHERE v.id = s.case_id)) IS TRUE "
                "ORDER BY s.embedding <=> %s::vector LIMIT %s",
                (vector, access.viewer_firm_id(viewer), model, *vis_params, vector, depth),
            )
            ranked = cursor.fetchall()
    if len(ranked) >= depth:
        return VectorRanking([r[0] for r in ranked], [r[1] for r in ranked], "hnsw")
    ranked = _rows(
        f"SELECT s.case_id, cosine_distance(s.embedding, %s::vector) AS distance FROM {S} s "
        f"WHERE s.firm_id = %s AND s.embedding_model = %s AND s.embedding IS NOT NULL AND s.case_id IN ({vis_sql}) "
        "ORDER BY distance, s.case_id LIMIT %s",
        (vector, access.viewer_firm_id(viewer), model, *vis_params, depth),
    )
    return VectorRanking([r[0] for r in ranked], [r[1] for r in ranked], "hnsw+exact")


def _query_vector(
    embedder: embeddings.Embedder | None, q: str, *, firm_id: int
) -> tuple[embeddings.Embedder, list[float]] | None:
    try:
        embedder = embedder or embeddings.get_embedder()
    except ImproperlyConfigured as exc:
        logger.warning("search falls back to keywords: %s", exc)
        return None
    if embedder is None:
        return None
    try:
        return embedder, embeddings.embed_texts(embedder, [q], firm_id=firm_id).vectors[0]
    except embeddings.EmbeddingError as exc:
        logger.warning("search falls back to keywords: %s", exc)
        return None


class _Sql:
    """SQL text and its positional parameters, appended in step so they cannot drift apart."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.params: list[Any] = []

    def add(self, text: str, *params: Any) -> _Sql:
        self.parts.append(text)
        self.params.extend(params)
        return self

    def rows(self) -> list[tuple[Any, ...]]:
        return _rows("\n".join(self.parts), self.params)


def _ranked_search(
    *, viewer: Any, visible: tuple[str, tuple[Any, ...]], words: str, limit: int, depth: int,
    exact: tuple[str, str] | None = None, vector_ids: Sequence[int] = (),
) -> tuple[int, list[tuple[Any, ...]]]:
    """One statement: the visible set (computed once), the vector ranking (exact over the visible
    set when `exact` = (vector, model) is given and it holds at most SEARCH_EXACT_MAX cases, else
    `vector_ids` as ranked), the word ranking, their fusion and the page with snippets.

    Returns (visible cases counted up to SEARCH_EXACT_MAX + 1, rows).
    """
    vis_sql, vis_params = visible
    exact_max = int(conf.get("SEARCH_EXACT_MAX"))
    sql = _Sql().add(f"WITH vis AS MATERIALIZED (SELECT v.id FROM ({vis_sql}) AS v(id)),", *vis_params)
    if exact is not None:
        sql.add("n AS (SELECT count(*) AS n FROM (SELECT 1 FROM vis LIMIT %s) AS x),", exact_max + 1)
    else:
        sql.add("n AS (SELECT 0 AS n),")  # nothing to decide: no count
    sql.add("query AS (SELECT websearch_to_tsquery('english', %s) AS q),", words)
    if exact is not None:
        sql.add(
            f"""vec AS (
                SELECT e.case_id, row_number() OVER (ORDER BY e.distance, e.case_id) AS rank FROM (
                    SELECT s.case_id, cosine_distance(s.embedding, %s::vector) AS distance
                    FROM n, vis CROSS JOIN LATERAL ({_ONE_SUMMARY}) AS s
                    WHERE n.n <= %s
                    ORDER BY distance, s.case_id LIMIT %s
                ) AS e
            ),""",
            exact[0], exact[1], exact_max, depth,
        )  # fmt: skip
    else:
        sql.add(
            "vec AS (SELECT v.case_id, v.rank FROM unnest(%s::bigint[]) WITH ORDINALITY AS v(case_id, rank)),",
            list(vector_ids),
        )
    sql.add(
        f"""kw AS (
            SELECT s.case_id, row_number() OVER (ORDER BY ts_rank_cd(s.search_vector, query.q) DESC, s.case_id) AS rank
            FROM {S} s CROSS JOIN query
            WHERE s.firm_id = %s AND s.search_vector @@ query.q AND s.case_id IN (SELECT id FROM vis)
            ORDER BY rank LIMIT %s
        ),
        fused AS (
            SELECT coalesce(vec.case_id, kw.case_id) AS case_id,
                   coalesce(1.0 / ({RRF_K} + vec.rank), 0) + coalesce(1.0 / ({RRF_K} + kw.rank), 0) AS rrf
            FROM vec FULL OUTER JOIN kw ON kw.case_id = vec.case_id
            -- Too many visible cases for the exact scan: the caller asks the
            -- index and comes back, so rank nothing now.
            WHERE %s OR (SELECT n.n FROM n) <= %s
        ),""",
        access.viewer_firm_id(viewer), depth, exact is None, exact_max,
    )  # fmt: skip
    ref_sql, ref_params = _references_sql()
    sql.add(
        f"""top AS (
            -- Joined to the visible set again: given vector ids were read by an
            -- earlier statement, and access may have changed since.
            SELECT f.case_id, f.rrf, c.reference AS key, n.id AS node_id, n.label
            FROM fused f
            JOIN vis ON vis.id = f.case_id
            JOIN ({ref_sql}) AS c(id, reference) ON c.id = f.case_id
            JOIN {N} n ON n.firm_id = %s AND n.kind = %s AND n.ref_id = c.id
            ORDER BY f.rrf DESC, c.reference, c.id
            LIMIT %s
        ),
        hits AS (
            SELECT top.*, ts_headline('english', s.text, query.q, %s) AS snippet
            FROM top JOIN {S} s ON s.case_id = top.case_id CROSS JOIN query
        )
        SELECT n.n, hits.case_id, hits.rrf, hits.key, hits.node_id, hits.label, hits.snippet
        FROM n LEFT JOIN hits ON true
        ORDER BY hits.rrf DESC, hits.key, hits.case_id""",
        *ref_params, access.viewer_firm_id(viewer), Node.Kind.CASE.value, limit, HEADLINE_OPTIONS,
    )  # fmt: skip
    rows = sql.rows()
    return rows[0][0], [row[1:] for row in rows if row[1] is not None]


def search_cases(
    *, viewer: Any, q: str, limit: int | None = None, embedder: embeddings.Embedder | None = None
) -> SearchResult:
    """The viewer's cases best matching `q` by meaning and by words, best first, each with a snippet.

    Promises: only cases the viewer may open are ranked, scored or quoted
    (snippets come from their own summaries); `mode` is "hybrid" when the
    embedder answered, "keyword" when none is configured or it failed.
    `score` is the reciprocal-rank-fusion score scaled to (0, 1]: 1.0 means
    first in every ranking used. `embedder` overrides the configured one.
    One statement, or six when the visible set is large enough for the index.
    Raises ValueError for an empty or over-long `q` or a bad `limit`.
    """
    limit = conf.page_size(limit)
    q = (q or "").strip()
    if not q or len(q) > int(conf.get("QUERY_MAX_CHARS")):
        raise ValueError(f"q must be 1 to {conf.get('QUERY_MAX_CHARS')} characters")
    notice = conf.get("NOTICE")
    visible = access.visible_case_ids_sql(viewer)
    if visible is None:
        return SearchResult([], "keyword", notice)
    # Each ranking contributes its top `depth` to the fusion: twice the page, at least 20.
    depth = min(max(2 * limit, 20), 2 * int(conf.get("PAGE_MAX")))
    embedded = _query_vector(embedder, q, firm_id=access.viewer_firm_id(viewer))
    search = partial(_ranked_search, viewer=viewer, visible=visible, limit=limit, depth=depth)
    if embedded is None:
        # Words only: any word may match (ranked by how many and how close), as
        # an assistant asks in sentences. With meaning alongside, the words must
        # all match (websearch syntax), which keeps that ranking precise and cheap.
        _, rows = search(words=_words_query(q))
    else:
        used, vector = embedded
        exact = (Vector(list(vector)).to_text(), used.model)
        counted, rows = search(words=q, exact=exact)
        if counted > int(conf.get("SEARCH_EXACT_MAX")):
            ranking = _index_ranking(viewer=viewer, visible=visible, vector=exact[0], model=used.model, depth=depth)
            _, rows = search(words=q, vector_ids=ranking.case_ids)
    best = (2 if embedded is not None else 1) / (RRF_K + 1)
    hits = [
        SearchHit(
            case=NodeRef(id=str(node_id), kind=Node.Kind.CASE.value, label=label),
            case_id=case_id,
            key=key,
            score=round(min(float(rrf) / best, 1.0), 4),
            snippet=" ".join(snippet.split()),
        )
        for case_id, rrf, key, node_id, label, snippet in rows
    ]
    return SearchResult(hits, "hybrid" if embedded is not None else "keyword", notice)
