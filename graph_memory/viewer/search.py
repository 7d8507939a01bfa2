"""Search by meaning and by words over case summaries, for one viewer.

Visibility is a condition inside every SQL statement (the access module's
subquery), never a filter over a fetched top-k: a walled case cannot surface
however well it matches, and cannot push a visible match out of the page.

A hit must be relevant on its own merits, so an answer may be empty:
- by meaning when its summary's cosine similarity to the query reaches the
  embedder's calibrated floor (SEARCH_MIN_SIMILARITY, per embedding model;
  docs/BENCHMARKS.md shows how the local model's was measured). A model with
  no floor ranks word matches but never qualifies a hit by meaning alone;
- by words when the summary holds every word of the query (stop words
  aside) or, with no embedder to fall back on, at least half of them.
Each hit says which (`matched`) and carries a score that means the same
whatever the query: 1.0 for every word found or an identical meaning, 0.5 for
a hit just at the floor (half the words, or the similarity floor).

Vector ranking: an exact scan over just the visible vectors when the viewer
sees at most SEARCH_EXACT_MAX of them or at most SEARCH_EXACT_SHARE of the
vectors in the index (its planner estimate): that is when a filtered walk of
the shared HNSW index would have to skip most of what it meets (the scan reads
each visible summary's own row: copies of the vectors per lawyer cost more to
keep than they saved, issue 28). Otherwise the
index with pgvector's iterative scan in strict order, so the filter cannot
starve the result: the firm's own index when it holds enough vectors to have
one (`firm_indexes`; hnsw.ef_search = SEARCH_FIRM_EF_SEARCH), else the index
shared by every firm (SEARCH_EF_SEARCH). A viewer who sees the whole of a
firm with its own index (a firm admin) always gets that index, with nothing
counted first. If it still returns fewer rows than asked for, an exact scan.
`search_cases` is one statement whatever the path: it counts the visible set
(stopping past the cap) and ranks it exactly or walks the index, the walk's
settings set by the statement itself. `vector_ranking` (benchmarks, tests)
asks in separate statements (once this process has seen a firm admin's
index, none before the walk's own: firm_indexes.KNOWN_FOR). Word ranking:
PostgreSQL full text over `search_vector` (header, names and summary), by
the vector ranking's rule: a lawyer's visible summaries one by one when they
see at most the cap; past it (a partner, a practice group), and for a firm
admin, the firm's matches from the GIN index, each probed against the wall in
rank order (a viewer that large pays for the firm's matches, not for hidden
cases one by one: SECURITY.md, "Timing side channels"). The visible set is listed
at most once per statement and never rescanned for each row (the planner
cannot estimate its size: issue 28). The rankings are fused by reciprocal
rank fusion, which orders hits of equal score.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from pgvector import Vector

from graph_memory import conf
from graph_memory.adapter import case_model, get_adapter
from graph_memory.models import CaseSummary, Node
from graph_memory.summaries.instruction_like import is_instruction_like
from graph_memory.vectors import embeddings, firm_indexes
from graph_memory.viewer.selectors import NodeRef
from graph_memory.wall import access

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
    score: float  # see `search_cases`
    snippet: str
    matched: tuple[str, ...] = ()  # "meaning", "words" or both
    instruction_like: bool = False  # the snippet reads as an instruction to an AI (instruction_like.py)


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
# index, from the heap row itself (the column's storage is MAIN, migration 0011:
# a TOASTed vector cost a TOAST index probe and another page per case). The
# LATERAL subquery's OFFSET 0 keeps the planner from turning it into a hash
# join over every summary (it cannot estimate the visible set), and
# cosine_distance() rather than the <=> operator keeps it off the approximate index.
_ONE_SUMMARY = (
    f"SELECT s.case_id, s.embedding FROM {S} s "
    "WHERE s.case_id = vis.id AND s.embedding_model = %s AND s.embedding IS NOT NULL OFFSET 0"
)


def _vectors(viewer: Any, model: str, visible: tuple[str, tuple[Any, ...]]) -> tuple[str, list[Any]]:
    """Where an exact scan reads the visible vectors (rows `s` with case_id and embedding): a lawyer's
    from each visible case's summary row (one page per case; needs the CTE `vis`); a firm admin's
    from the firm's summaries, each probed against the wall (their ids are never listed)."""
    if access.sees_whole_firm(viewer):
        probe_sql, probe_params = _probed(visible)
        return (
            f"(SELECT s.case_id, s.embedding FROM {S} s WHERE s.firm_id = %s AND s.embedding_model = %s "
            f"AND s.embedding IS NOT NULL AND {probe_sql}) AS s",
            [access.viewer_firm_id(viewer), model, *probe_params],
        )
    return f"(SELECT s.case_id, s.embedding FROM vis CROSS JOIN LATERAL ({_ONE_SUMMARY}) AS s) AS s", [model]


def _walk_settings(firm_id: int | None, depth: int) -> tuple[str, list[Any]]:
    """Select-list items that set the index walk's settings for the transaction: an iterative scan in
    strict order, so the walk keeps going until `depth` rows pass the wall (or hnsw.max_scan_tuples),
    and the candidate list: shorter on the firm's own index (firm_indexes), when it has one."""
    return (
        "set_config('hnsw.iterative_scan', 'strict_order', true) AS iterative, set_config('hnsw.ef_search', "
        f"(CASE WHEN {firm_indexes.exists_sql()} THEN %s ELSE %s END)::text, true) AS ef",
        [firm_indexes.index_name(firm_id or 0), max(int(conf.get("SEARCH_FIRM_EF_SEARCH")), depth),
         max(int(conf.get("SEARCH_EF_SEARCH")), depth)],
    )  # fmt: skip


def _probed(visible: tuple[str, tuple[Any, ...]]) -> tuple[str, list[Any]]:
    """The wall as a condition on each summary `s` a walk or scan meets: IS TRUE keeps the planner from
    turning it into a join (which would rank every visible row instead of walking the index), OFFSET 0
    from hashing every visible id first (a firm admin's ten thousand, for ten candidates)."""
    vis_sql, vis_params = visible
    return f"(EXISTS (SELECT 1 FROM ({vis_sql}) AS v(id) WHERE v.id = s.case_id OFFSET 0)) IS TRUE", list(vis_params)


def _walks_own_index(viewer: Any) -> bool:
    """Whether the viewer's vector ranking goes straight to their firm's own index, with nothing
    counted first: a viewer who sees the whole firm, whose index this process saw a moment ago
    (firm_indexes.KNOWN_FOR; the statement that counts says -1 for them, and is skipped)."""
    firm_id = access.viewer_firm_id(viewer)
    return firm_id is not None and access.sees_whole_firm(viewer) and firm_indexes.known_to_have_index(firm_id)


def _exact_cap(viewer: Any, force: str | None = None) -> tuple[str, list[Any]]:
    """A CTE `cap`: the most visible vectors ranked exactly, from the settings and the index's size estimate.

    pg_class.reltuples is the planner's estimate (-1 before the first ANALYZE,
    which leaves SEARCH_EXACT_MAX alone in force): reading it costs nothing,
    where counting the index's rows would cost more than the search. A viewer
    who sees the whole of a firm that has an index of its own (a firm admin)
    gets -1: nothing is counted, and that index answers; having seen it, this
    process skips the statement for them a while (`_walks_own_index`). `force` ("exact" or
    "index", for benchmarks) sets the cap past any count, or to -1.
    """
    if force is not None:
        return f"cap AS (SELECT {2**62 if force == 'exact' else -1}::bigint AS cap)", []
    return (
        f"cap AS (SELECT CASE WHEN %s AND {firm_indexes.exists_sql()} THEN -1 "
        "ELSE greatest(%s, floor(%s * greatest(c.reltuples, 0))) END::bigint AS cap "
        f"FROM pg_class c WHERE c.oid = '{S}'::regclass)",
        [
            access.sees_whole_firm(viewer), firm_indexes.index_name(access.viewer_firm_id(viewer) or 0),
            int(conf.get("SEARCH_EXACT_MAX")), float(conf.get("SEARCH_EXACT_SHARE")),
        ],
    )  # fmt: skip


def _rows(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def vector_ranking(
    *, viewer: Any, vector: Sequence[float], model: str, depth: int, force: str | None = None
) -> VectorRanking:
    """The `depth` visible cases nearest to `vector` (cosine), among vectors of `model`, nearest first (no floor).
    `force`: "exact" or "index" takes that path whatever the rule says (to measure each)."""
    if force not in (None, "exact", "index"):
        raise ValueError(f"force must be None, 'exact' or 'index', not {force!r}")
    visible = access.visible_case_ids_sql(viewer)
    if visible is None:
        return VectorRanking([], [], "exact")
    vis_sql, vis_params = visible
    query = Vector(list(vector)).to_text()
    if force is None and _walks_own_index(viewer):
        return _index_ranking(viewer=viewer, visible=visible, vector=query, model=model, depth=depth)
    cap_sql, cap_params = _exact_cap(viewer, force)
    # One statement: count the visible cases (stopping past the cap) and,
    # when there are few enough, rank their vectors exactly.
    rows = _rows(
        f"""
        WITH {cap_sql},
             vis AS MATERIALIZED (SELECT v.id FROM ({vis_sql}) AS v(id) LIMIT (SELECT cap + 1 FROM cap)),
             n AS (SELECT count(*) AS n, (SELECT cap FROM cap) AS cap FROM vis)
        SELECT n.n <= n.cap, r.case_id, r.distance, n.cap FROM n LEFT JOIN LATERAL (
            SELECT s.case_id, cosine_distance(s.embedding, %s::vector) AS distance
            FROM vis CROSS JOIN LATERAL ({_ONE_SUMMARY}) AS s
            WHERE n.n <= n.cap
            ORDER BY distance, s.case_id
            LIMIT %s
        ) r ON true
        """,
        (*cap_params, *vis_params, query, model, depth),
    )
    if rows[0][3] == -1 and force is None:  # the firm has its own index: next time, straight to it
        firm_indexes.saw_index(access.viewer_firm_id(viewer))
    if rows[0][0]:
        ranked = [(r[1], r[2]) for r in rows if r[1] is not None]
        return VectorRanking([c for c, _ in ranked], [d for _, d in ranked], "exact")
    return _index_ranking(viewer=viewer, visible=visible, vector=query, model=model, depth=depth)


def _index_ranking(
    *, viewer: Any, visible: tuple[str, tuple[Any, ...]], vector: str, model: str, depth: int
) -> VectorRanking:
    """The HNSW index with an iterative scan; an exact scan if it still comes back short."""
    vis_sql, vis_params = visible
    firm_id = access.viewer_firm_id(viewer)
    settings_sql, settings_params = _walk_settings(firm_id, depth)
    probe_sql, probe_params = _probed(visible)
    # Both settings are local: they end with this transaction.
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {settings_sql}", settings_params)
            cursor.execute(
                f"SELECT s.case_id, s.embedding <=> %s::vector AS distance FROM {S} s "
                f"WHERE s.firm_id = %s AND s.embedding_model = %s AND {probe_sql} "
                "ORDER BY s.embedding <=> %s::vector LIMIT %s",
                (vector, firm_id, model, *probe_params, vector, depth),
            )
            ranked = cursor.fetchall()
    if len(ranked) >= depth:
        return VectorRanking([r[0] for r in ranked], [r[1] for r in ranked], "hnsw")
    ranked = _rows(
        f"SELECT s.case_id, cosine_distance(s.embedding, %s::vector) AS distance FROM {S} s "
        f"WHERE s.firm_id = %s AND s.embedding_model = %s AND s.embedding IS NOT NULL AND s.case_id IN ({vis_sql}) "
        "ORDER BY distance, s.case_id LIMIT %s",
        (vector, firm_id, model, *vis_params, depth),
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


@dataclass(frozen=True)
class _Floor:
    """What qualifies a hit: the meaning floor (None: meaning alone never does) and the share of words."""

    similarity: float | None
    all_words: bool


def _ranked_search(
    *, viewer: Any, visible: tuple[str, tuple[Any, ...]], q: str, limit: int, depth: int, floor: _Floor,
    vector: tuple[str, str] | None = None,
) -> list[tuple[Any, ...]]:  # fmt: skip
    """One statement: the vector ranking (`vector` = (query vector, model); exact over the visible
    set within the cap, else the index walk), the word ranking, the floor, the fusion and the page
    with snippets. Each ranking reads only visible cases, from the access module's statement: a
    lawyer's from their visible set, listed once (`vis`); a firm admin's by probing that statement
    for each candidate in rank order, so the firm's case ids are never listed.

    Returns the page's rows.
    """
    vis_sql, vis_params = visible
    firm_id = access.viewer_firm_id(viewer)
    sql = _Sql()
    # Unreferenced (a firm admin's words-only search), it is never computed.
    sql.add(f"WITH vis AS MATERIALIZED (SELECT v.id FROM ({vis_sql}) AS v(id)),", *vis_params)
    # The query's words as stemmed lexemes (stop words dropped): "every word" and "any word" queries,
    # and how many a summary must hold.
    sql.add(
        """words AS (
            SELECT l.lexemes, cardinality(l.lexemes) AS total,
                   (SELECT string_agg(quote_literal(x), ' & ') FROM unnest(l.lexemes) x)::tsquery AS every_word,
                   (SELECT string_agg(quote_literal(x), ' | ') FROM unnest(l.lexemes) x)::tsquery AS any_word
            FROM (SELECT tsvector_to_array(to_tsvector('english', %s)) AS lexemes) l
        ),""",
        q,
    )
    # Whether the viewer sees few enough cases to rank them one by one (`n.exact`; both rankings
    # ask it, and it is computed only if one does). Counting stops past the cap; a firm admin whose
    # firm has its own index (cap -1) counts nothing.
    cap_sql, cap_params = _exact_cap(viewer)
    sql.add(f"{cap_sql},", *cap_params)
    sql.add("n AS MATERIALIZED (SELECT (SELECT count(*) FROM (SELECT 1 FROM vis LIMIT (SELECT cap + 1 FROM cap)) AS x) "
            "<= (SELECT cap FROM cap) AS exact),")  # fmt: skip
    if vector is None:
        sql.add("vec AS (SELECT NULL::bigint AS case_id, NULL::float8 AS distance, NULL::bigint AS rank WHERE false),")
    else:
        _add_vector_ranking(sql, viewer=viewer, visible=visible, vector=vector, depth=depth)
    _add_word_ranking(sql, viewer=viewer, visible=visible, floor=floor, depth=depth)
    # Score: 0.5 at the similarity floor rising to 1.0 at identity; the share of the words found.
    meaning = "CASE WHEN 1 - vec.distance >= %s THEN 0.5 + 0.5 * (1 - vec.distance - %s) / (1 - %s) END"
    ref_sql, ref_params = _references_sql()
    # No second join to the visible set: both rankings read only visible cases, in this statement.
    # The candidates (at most 2 x depth) drive every lookup after the fusion, one probe each (LATERAL,
    # OFFSET 0): joined, the planner may scan every case node of the firm and redo the rankings for each.
    sql.add(
        f"""fused AS (
            SELECT coalesce(vec.case_id, kw.case_id) AS case_id,
                   coalesce(1.0 / ({RRF_K} + vec.rank), 0) + coalesce(1.0 / ({RRF_K} + kw.rank), 0) AS rrf,
                   {meaning} AS meaning, kw.found::float8 / nullif(words.total, 0) AS words
            FROM vec FULL OUTER JOIN kw ON kw.case_id = vec.case_id CROSS JOIN words
        ),
        top AS (
            SELECT f.case_id, greatest(f.meaning, f.words) AS score, f.rrf, f.meaning, f.words,
                   c.reference AS key, n.id AS node_id, n.label
            FROM fused f
            CROSS JOIN LATERAL (SELECT c.reference FROM ({ref_sql}) AS c(id, reference) WHERE c.id = f.case_id OFFSET 0) c
            CROSS JOIN LATERAL (
                SELECT n.id, n.label FROM {N} n WHERE n.firm_id = %s AND n.kind = %s AND n.ref_id = f.case_id OFFSET 0
            ) n
            WHERE f.meaning IS NOT NULL OR f.words IS NOT NULL
            ORDER BY score DESC, f.rrf DESC, c.reference, f.case_id
            LIMIT %s
        ),
        hits AS (
            SELECT top.*, ts_headline('english', s.text, coalesce(words.any_word, ''::tsquery), %s) AS snippet
            FROM top CROSS JOIN LATERAL (SELECT s.text FROM {S} s WHERE s.case_id = top.case_id OFFSET 0) s CROSS JOIN words
        )
        SELECT hits.case_id, hits.score, hits.key,
               hits.node_id, hits.label, hits.snippet, hits.meaning, hits.words
        FROM (SELECT 1) AS one LEFT JOIN hits ON true
        ORDER BY hits.score DESC, hits.rrf DESC, hits.key, hits.case_id""",
        floor.similarity, floor.similarity, floor.similarity,
        *ref_params, firm_id, Node.Kind.CASE.value, limit, HEADLINE_OPTIONS,
    )  # fmt: skip
    return [row for row in sql.rows() if row[0] is not None]


def _add_vector_ranking(
    sql: _Sql, *, viewer: Any, visible: tuple[str, tuple[Any, ...]], vector: tuple[str, str], depth: int
) -> None:
    """The CTEs `walk`, `ann` and `vec` (case_id, distance, rank; after `cap` and `n`): the `depth` visible
    cases nearest to the query vector, exact when the viewer sees at most `cap` vectors, else from
    the HNSW index, and exact again if the index came back short (vector_ranking's rule, in the
    statement that uses it)."""
    query, model = vector
    firm_id = access.viewer_firm_id(viewer)
    source, source_params = _vectors(viewer, model, visible)
    # The index walk's settings, set by the statement itself: the walk's query vector comes from
    # the same row, so they are in force before the walk's first step (pgvector reads them then).
    # Local: they end with the transaction (this statement, outside one).
    settings_sql, settings_params = _walk_settings(firm_id, depth)
    sql.add(f"walk AS MATERIALIZED (SELECT %s::vector AS query, {settings_sql}),", query, *settings_params)
    # The index keeps walking until `depth` candidates pass the wall, each probed on its own. Not run
    # at all when the exact scan answers.
    probe_sql, probe_params = _probed(visible)
    sql.add(
        f"""ann AS MATERIALIZED (
            SELECT s.case_id, s.embedding <=> (SELECT w.query FROM walk w) AS distance FROM {S} s
            WHERE NOT (SELECT n.exact FROM n) AND s.firm_id = %s AND s.embedding_model = %s AND {probe_sql}
            ORDER BY distance LIMIT %s
        ),""",
        firm_id, model, *probe_params, depth,
    )  # fmt: skip
    sql.add(
        f"""vec AS (
            SELECT r.case_id, r.distance, row_number() OVER (ORDER BY r.distance, r.case_id) AS rank FROM (
                SELECT ann.case_id, ann.distance FROM ann WHERE (SELECT count(*) FROM ann) >= %s
                UNION ALL (
                    SELECT s.case_id, cosine_distance(s.embedding, %s::vector) AS distance
                    FROM {source}
                    WHERE (SELECT count(*) FROM ann) < %s
                    ORDER BY distance, s.case_id LIMIT %s
                )
            ) AS r
        ),""",
        depth, query, *source_params, depth, depth,
    )  # fmt: skip


def _add_word_ranking(
    sql: _Sql, *, viewer: Any, visible: tuple[str, tuple[Any, ...]], floor: _Floor, depth: int
) -> None:
    """The CTE `kw` (case_id, found, rank): the `depth` visible summaries that hold the query's words
    best. Without an embedder the words are all there is: half of them qualify a summary (an
    assistant asks in sentences). With one, every word must be there; meaning covers the paraphrases.

    Two ways, by the same rule as the vector ranking (`n.exact`):
    - a lawyer who sees at most the cap: their summaries one by one from their visible cases, so
      that summaries hidden from them cost nothing however well they match (issue 15);
    - a firm admin, and a lawyer who sees more (a partner on 20,000 cases, whose summaries one by
      one cost hundreds of milliseconds, issue 28): every match of the firm from the GIN index,
      ranked, then probed against the wall in that order until `depth` pass (the probes of a nested
      loop under a LIMIT), so no case id is listed.
    """
    vis_sql, vis_params = visible
    firm_id = access.viewer_firm_id(viewer)
    whole_firm = access.sees_whole_firm(viewer)

    def matches(summaries: str, gate: str) -> tuple[str, list[Any]]:
        return (
            f"""SELECT s.case_id, f.found, ts_rank_cd(s.search_vector, words.any_word) AS rank_cd
                FROM {summaries} CROSS JOIN words
                CROSS JOIN LATERAL (
                    SELECT CASE WHEN %s THEN words.total ELSE (
                        SELECT count(*) FROM unnest(words.lexemes) x WHERE s.search_vector @@ quote_literal(x)::tsquery
                    ) END AS found
                ) f
                WHERE {gate} AND s.firm_id = %s
                  AND s.search_vector @@ (CASE WHEN %s THEN words.every_word ELSE words.any_word END)
                  AND f.found * 2 >= words.total""",
            [floor.all_words, firm_id, floor.all_words],
        )

    order = "m.found DESC, m.rank_cd DESC, m.case_id"
    # The firm's matches in rank order, each probed against the wall.
    probed_sql, probed_params = matches(f"{S} s", "true" if whole_firm else "NOT (SELECT n.exact FROM n)")
    probed = (
        f"""SELECT m.case_id, m.found, m.rank_cd
            FROM ({probed_sql} ORDER BY found DESC, rank_cd DESC, case_id OFFSET 0) AS m
            CROSS JOIN LATERAL (SELECT 1 FROM ({vis_sql}) AS w(id) WHERE w.id = m.case_id LIMIT 1) AS still_open
            ORDER BY {order} LIMIT %s""",
        [*probed_params, *vis_params, depth],
    )
    if whole_firm:
        ranked = probed
    else:
        # Exactly one of the two runs: each is gated on `n.exact` (a one-time filter: the other is never started).
        one_by_one_sql, one_by_one_params = matches(
            f"vis CROSS JOIN LATERAL (SELECT * FROM {S} s WHERE s.case_id = vis.id OFFSET 0) s",
            "(SELECT n.exact FROM n)",
        )
        ranked = (
            f"(SELECT m.case_id, m.found, m.rank_cd FROM ({one_by_one_sql}) AS m ORDER BY {order} LIMIT %s) "
            f"UNION ALL ({probed[0]})",
            [*one_by_one_params, depth, *probed[1]],
        )
    sql.add(
        f"kw AS (SELECT m.case_id, m.found, row_number() OVER (ORDER BY {order}) AS rank FROM ({ranked[0]}) AS m),",
        *ranked[1],
    )


def search_cases(
    *, viewer: Any, q: str, limit: int | None = None, embedder: embeddings.Embedder | None = None
) -> SearchResult:
    """The viewer's cases relevant to `q` by meaning or by words, best first, each with a snippet.

    Promises: only cases the viewer may open are ranked, scored or quoted
    (snippets come from their own summaries); a case is returned only when it
    qualifies on its own (see the module docstring), so the answer may be
    empty; `matched` says how each hit qualified. `score` is in [0.5, 1]: the
    larger of the meaning score (0.5 at the embedder's similarity floor, 1.0
    at identity) and the share of the query's words the summary holds. `mode`
    is "hybrid" when the embedder answered, "keyword" when none is configured
    or it failed. `embedder` overrides the configured one. One statement,
    whatever the path the vector ranking takes.
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
    if embedded is None:
        floor, vector = _Floor(similarity=None, all_words=False), None
    else:
        used, query = embedded
        floor = _Floor(similarity=embeddings.min_similarity(used.model), all_words=True)
        vector = (Vector(list(query)).to_text(), used.model)
    rows = _ranked_search(viewer=viewer, visible=visible, q=q, limit=limit, depth=depth, floor=floor, vector=vector)
    hits = [
        SearchHit(
            case=NodeRef(id=str(node_id), kind=Node.Kind.CASE.value, label=label),
            case_id=case_id,
            key=key,
            score=round(float(score), 4),
            snippet=" ".join(snippet.split()),
            instruction_like=is_instruction_like(snippet),
            matched=tuple(name for name, part in (("meaning", meaning), ("words", words)) if part is not None),
        )
        for case_id, score, key, node_id, label, snippet, meaning, words in rows
    ]
    return SearchResult(hits, "hybrid" if embedded is not None else "keyword", notice)
