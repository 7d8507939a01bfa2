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
settings set by the statement itself. A lawyer last found within the cap gets
that statement without the paths past it (`SEARCH.few`, `Read.few`): a third
less to parse and plan (bench_search_planning), the same rows, each visible
summary read once for both rankings; past the cap it answers nothing and the
whole one runs. `vector_ranking` (benchmarks, tests)
runs the same ranking (`VECTOR_RANKING`) as a statement of its own, so what
they measure is what the API runs. Word ranking:
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

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from graph_memory import conf
from graph_memory.adapter import MemoryAdapter, Viewer, case_model, get_adapter
from graph_memory.models import CaseSummary, Node
from graph_memory.plumbing.stmt import Stmt
from graph_memory.summaries.instruction_like import is_instruction_like
from graph_memory.vectors import embeddings, firm_indexes
from graph_memory.viewer.selectors import NodeRef
from graph_memory.wall.scope import VISIBLE_ONCE, Read, Scope, may_open, rows, scope_of

logger = logging.getLogger(__name__)

RRF_K = 60
HEADLINE_OPTIONS = 'MaxWords=40, MinWords=15, MaxFragments=2, FragmentDelimiter=" … ", StartSel="", StopSel=""'

S, N = CaseSummary._meta.db_table, Node._meta.db_table


def _references() -> Stmt:
    """Every case's id and reference (the adapter's expression) as SQL: the planner folds it into the join."""
    return _compiled_references(get_adapter())


@functools.cache
def _compiled_references(adapter: MemoryAdapter) -> Stmt:
    # Compiled once per adapter (one per process and setting): compiling it from the ORM on every search
    # cost more than a small viewer's ranking.
    cases = case_model().objects.order_by().annotate(_reference=adapter.case_reference())
    return Stmt(*cases.values("pk", "_reference").query.sql_with_params())


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
    "WHERE s.case_id = vis.id AND s.embedding_model = %(model)s AND s.embedding IS NOT NULL OFFSET 0"
)

# The wall as a condition on each summary `s` a walk or scan meets, where the word ranking's probe is a
# join (`may_open`): IS TRUE keeps the planner from turning it into a join (which would rank every visible
# row instead of walking the index), OFFSET 0 from hashing every visible id first (a firm admin's ten
# thousand, for ten candidates).
_PROBED = "(EXISTS (SELECT 1 FROM ({visible}) AS v(id) WHERE v.id = s.case_id OFFSET 0)) IS TRUE"

# Where an exact scan reads the visible vectors (rows `s` with case_id and embedding): a lawyer's from each
# visible case's summary row (one page per case; needs the CTE `vis`); a firm admin's from the firm's
# summaries, each probed against the wall (their ids are never listed).
_LAWYERS_VECTORS = f"(SELECT s.case_id, s.embedding FROM vis CROSS JOIN LATERAL ({_ONE_SUMMARY}) AS s) AS s"
_FIRMS_VECTORS = (
    f"(SELECT s.case_id, s.embedding FROM {S} s WHERE s.firm_id = %(firm)s AND s.embedding_model = %(model)s "
    f"AND s.embedding IS NOT NULL AND {_PROBED}) AS s"
)

# A CTE `cap`: the most visible vectors ranked exactly, from the settings and the index's size estimate.
# pg_class.reltuples is the planner's estimate (-1 before the first ANALYZE, which leaves SEARCH_EXACT_MAX
# alone in force): reading it costs nothing, where counting the index's rows would cost more than the
# search. A viewer who sees the whole of a firm that has an index of its own (a firm admin) gets -1:
# nothing is counted, and that index answers. `{own_index}`: firm_indexes.exists_statement for the viewer's firm.
_CAP = (
    "cap AS (SELECT CASE WHEN {own_index} THEN -1 "
    "ELSE greatest(%(exact_max)s, floor(%(exact_share)s * greatest(c.reltuples, 0))) END::bigint AS cap "
    f"FROM pg_class c WHERE c.oid = '{S}'::regclass)"
)
# Anyone else's: no index is asked after (the statement is sent on every search: shorter is cheaper, _compact).
_WALLED_CAP = (
    "cap AS (SELECT greatest(%(exact_max)s, floor(%(exact_share)s * greatest(c.reltuples, 0)))::bigint AS cap "
    f"FROM pg_class c WHERE c.oid = '{S}'::regclass)"
)
# The names whose values set the cap (`Read.few_by`).
_CAP_NAMES = ("cap", "forced_cap", "exact_max", "exact_share")
# The same, set past any count or to -1 (`force`, for benchmarks).
_FORCED_CAP = "cap AS (SELECT %(forced_cap)s::bigint AS cap)"
# Whether the viewer sees few enough cases to rank them one by one (`n.exact`; both rankings ask it,
# and it is computed only if one does). Counting stops past the cap.
_N = (
    "n AS MATERIALIZED (SELECT (SELECT count(*) FROM (SELECT 1 FROM vis LIMIT (SELECT cap + 1 FROM cap)) AS x) "
    "<= (SELECT cap FROM cap) AS exact)"
)
# The same in the statements a lawyer gets until they are known to see few cases, past the cap first asked of
# one source of their grants (`{grants_past}`, with `than` the cap: _ranking_names): a partner's 20,000 cases
# are then never listed to be counted (bench/bench_scale.py: a partner's search statement 29-30 ms with the
# count, 21-22 ms with it answered so). Only if that source does not settle it are they counted.
_N_PAST = (
    "n AS MATERIALIZED (SELECT CASE WHEN {grants_past} THEN false ELSE (SELECT count(*) FROM (SELECT 1 FROM vis "
    "LIMIT (SELECT cap + 1 FROM cap)) AS x) <= (SELECT cap FROM cap) END AS exact)"
)

# The CTEs `query`, `walk`, `ann` and `vec` (case_id, distance, rank; after `cap` and `n`): the `depth` visible
# cases nearest to the query vector, exact when the viewer sees at most `cap` vectors, else from the HNSW
# index, and exact again if the index came back short. `walk` sets the index walk's settings from the
# statement itself: the walk's query vector comes from the same row, so they are in force before the walk's
# first step (pgvector reads them then); local, they end with the transaction (this statement, outside
# one). An iterative scan in strict order keeps walking until `depth` rows pass the wall (or
# hnsw.max_scan_tuples); the candidate list is shorter on the firm's own index (firm_indexes), when it has
# one. `ann` is not run at all when the exact scan answers, nor `walk`. The query vector is written once
# (`query`), for the walk and the exact scan: written twice, its text was half the statement's.
# `{vectors}`: _LAWYERS_VECTORS or _FIRMS_VECTORS.
_QUERY = "query AS MATERIALIZED (SELECT %(query)s::vector AS vector)"


def _exact_scan(vectors: str, gate: str) -> str:
    """The `depth` vectors of `vectors` (rows `s`) nearest to the query, exactly, run only where `gate` holds."""
    return f"""SELECT s.case_id, cosine_distance(s.embedding, (SELECT query.vector FROM query)) AS distance
            FROM {vectors}
            WHERE {gate}
            ORDER BY distance, s.case_id LIMIT %(depth)s"""


def _ranked(nearest: str) -> str:
    """The CTE `vec`: the rows of `nearest` (case_id, distance) with their rank."""
    return f"""vec AS MATERIALIZED (
    SELECT r.case_id, r.distance, row_number() OVER (ORDER BY r.distance, r.case_id) AS rank FROM (
        {nearest}
    ) AS r
)"""


_VECTOR_RANKING = f"""
{_QUERY},
walk AS MATERIALIZED (
    SELECT (SELECT query.vector FROM query) AS query, set_config('hnsw.iterative_scan', 'strict_order', true) AS iterative,
           set_config('hnsw.ef_search', (CASE WHEN {{own_index}} THEN %(firm_ef)s ELSE %(shared_ef)s END)::text, true) AS ef
),
ann AS MATERIALIZED (
    SELECT s.case_id, s.embedding <=> (SELECT w.query FROM walk w) AS distance FROM {S} s
    WHERE NOT (SELECT n.exact FROM n) AND s.firm_id = %(firm)s AND s.embedding_model = %(model)s AND {_PROBED}
    ORDER BY distance LIMIT %(depth)s
),
{_ranked(
    "SELECT ann.case_id, ann.distance FROM ann WHERE (SELECT count(*) FROM ann) >= %(depth)s "
    f"UNION ALL ({_exact_scan('{vectors}', '(SELECT count(*) FROM ann) < %(depth)s')})"
)}"""
_NO_VECTOR_RANKING = "vec AS (SELECT NULL::bigint AS case_id, NULL::float8 AS distance, NULL::bigint AS rank WHERE false)"
# A firm admin's and anyone else's: where the exact scan reads the visible vectors is what differs.
_FIRMS_VECTOR_RANKING = _VECTOR_RANKING.replace("{vectors}", _FIRMS_VECTORS)
_WALLED_VECTOR_RANKING = _VECTOR_RANKING.replace("{vectors}", _LAWYERS_VECTORS)
_RANKING = (
    "SELECT (SELECT n.exact FROM n), (SELECT count(*) FROM ann) >= %(depth)s, vec.case_id, vec.distance "
    "FROM (SELECT 1) AS one LEFT JOIN vec ON true ORDER BY vec.rank"
)
# The `depth` visible cases nearest to a vector: (exact or not, the walk found `depth`, case id, distance).
# Names: query, model, depth, cap, and those of _ranking_names.
VECTOR_RANKING = Read(
    name="vector_ranking",
    columns=4,
    whole_firm=f"WITH {VISIBLE_ONCE}, {{cap}}, {_N_PAST}, {_FIRMS_VECTOR_RANKING} {_RANKING}",
    walled=f"WITH {VISIBLE_ONCE}, {{cap}}, {_N_PAST}, {_WALLED_VECTOR_RANKING} {_RANKING}",
    unsighted="copies of the vectors per lawyer cost more to keep than they saved (issue 28): a lawyer's exact "
    "scan reads each visible summary's own row, a big viewer walks the firm's index probing the wall",
)


def _ranking_names(scope: Scope, *, model: str | None, depth: int, force: str | None = None) -> dict[str, Any]:
    """The names the statements above use, for this scope (sql() fills them in)."""
    return {
        "model": model, "depth": depth, "cap": _FORCED_CAP if force else _CAP if scope.whole_firm else _WALLED_CAP,
        "forced_cap": 2**62 if force == "exact" else -1,
        "than": "(SELECT cap FROM cap)", **scope.grants_past(),
        "own_index": firm_indexes.exists_statement(scope.firm_id or 0),
        "exact_max": int(conf.get("SEARCH_EXACT_MAX")), "exact_share": float(conf.get("SEARCH_EXACT_SHARE")),
        "firm_ef": max(int(conf.get("SEARCH_FIRM_EF_SEARCH")), depth),
        "shared_ef": max(int(conf.get("SEARCH_EF_SEARCH")), depth),
    }  # fmt: skip


def vector_ranking(
    *, viewer: Viewer, vector: Sequence[float], model: str, depth: int, force: str | None = None
) -> VectorRanking:
    """The `depth` visible cases nearest to `vector` (cosine), among vectors of `model`, nearest first (no floor).

    The ranking `search_cases` runs, as a statement of its own (`VECTOR_RANKING`, one statement): exact
    over the visible set within the cap, else the index walk, exact again if the walk came back short.
    `force`: "exact" or "index" takes that path whatever the rule says (to measure each)."""
    if force not in (None, "exact", "index"):
        raise ValueError(f"force must be None, 'exact' or 'index', not {force!r}")
    scope = scope_of(viewer)
    if scope.empty:
        return VectorRanking([], [], "exact")
    found = rows(
        scope, VECTOR_RANKING,
        query=embeddings.vector_text(vector), **_ranking_names(scope, model=model, depth=depth, force=force),
    )  # fmt: skip
    exact, walked = found[0][0], found[0][1]
    ranked = [(r[2], r[3]) for r in found if r[2] is not None]
    method = "exact" if exact else "hnsw" if walked else "hnsw+exact"
    return VectorRanking([c for c, _ in ranked], [d for _, d in ranked], method)


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


@dataclass(frozen=True)
class _Floor:
    """What qualifies a hit: the meaning floor (None: meaning alone never does) and the share of words."""

    similarity: float | None
    all_words: bool


# The query's words as stemmed lexemes (stop words dropped): "every word" and "any word" queries, and how
# many a summary must hold.
_WORDS = """words AS (
    SELECT l.lexemes, cardinality(l.lexemes) AS total,
           (SELECT string_agg(quote_literal(x), ' & ') FROM unnest(l.lexemes) x)::tsquery AS every_word,
           (SELECT string_agg(quote_literal(x), ' | ') FROM unnest(l.lexemes) x)::tsquery AS any_word
    FROM (SELECT tsvector_to_array(to_tsvector('english', %(q)s)) AS lexemes) l
)"""


# How many of the query's words a summary `s` holds (`found`: all of them with an embedder to fall back on,
# `all_words`, else counted), and whether it qualifies: every word, else at least half of them.
_FOUND = """SELECT CASE WHEN %(all_words)s THEN words.total ELSE (
        SELECT count(*) FROM unnest(words.lexemes) x WHERE s.search_vector @@ quote_literal(x)::tsquery
    ) END AS found"""
_HOLDS = """s.firm_id = %(firm)s
    AND s.search_vector @@ (CASE WHEN %(all_words)s THEN words.every_word ELSE words.any_word END)
    AND f.found * 2 >= words.total"""


def _matches(summaries: str, gate: str) -> str:
    """The summaries (`summaries`, rows `s`) that hold the query's words (`_HOLDS`), where `gate` holds."""
    return f"""SELECT s.case_id, f.found, ts_rank_cd(s.search_vector, words.any_word) AS rank_cd
        FROM {summaries} CROSS JOIN words CROSS JOIN LATERAL ({_FOUND}) f
        WHERE {gate} AND {_HOLDS}"""


_WORD_ORDER = "m.found DESC, m.rank_cd DESC, m.case_id"
# The firm's matches in rank order, each probed against the wall: a firm admin's, and a lawyer's past the cap.
_PROBED_MATCHES = f"""SELECT m.case_id, m.found, m.rank_cd
    FROM ({{matches}} ORDER BY found DESC, rank_cd DESC, case_id OFFSET 0) AS m
    {may_open("m.case_id")}
    ORDER BY {_WORD_ORDER} LIMIT %(depth)s"""
# The CTE `kw` (case_id, found, rank): the `depth` visible summaries that hold the query's words best.
# `{ranked}`: the matches, by the vector ranking's rule (`n.exact`):
# - a lawyer who sees at most the cap: their summaries one by one from their visible cases, so that
#   summaries hidden from them cost nothing however well they match (issue 15);
# - a firm admin, and a lawyer who sees more (a partner on 20,000 cases, whose summaries one by one cost
#   hundreds of milliseconds, issue 28): every match of the firm from the GIN index, ranked, then probed
#   against the wall in that order until `depth` pass (the probes of a nested loop under a LIMIT), so no
#   case id is listed.
_WORD_RANKING = f"kw AS MATERIALIZED (SELECT m.case_id, m.found, row_number() OVER (ORDER BY {_WORD_ORDER}) AS rank FROM ({{ranked}}) AS m)"
_FIRMS_WORDS = _PROBED_MATCHES.replace("{matches}", _matches(f"{S} s", "true"))
# Exactly one of the two runs: each is gated on `n.exact` (a one-time filter: the other is never started).
_FEW_WORDS = (
    f"SELECT m.case_id, m.found, m.rank_cd FROM ("
    f"{_matches(f'vis CROSS JOIN LATERAL (SELECT s.case_id, s.firm_id, s.search_vector FROM {S} s WHERE s.case_id = vis.id OFFSET 0) s', '(SELECT n.exact FROM n)')}"
    f") AS m ORDER BY {_WORD_ORDER} LIMIT %(depth)s"
)
_LAWYERS_WORDS = (
    f"({_FEW_WORDS}) UNION ALL ({_PROBED_MATCHES.replace('{matches}', _matches(f'{S} s', 'NOT (SELECT n.exact FROM n)'))})"
)


# Search's statement for few cases (`SEARCH.few`) reads each visible summary once for both rankings (`mine`,
# after `vis`, `words` and `n`): its distance to the query (`{distance}`: NULL when it has no vector of the
# model, or with no query vector at all) and, when it holds the query's words, how many and their rank. The
# vector ranking is then its `depth` nearest, the word ranking its `depth` best matches: the rows and the
# order of the walled statement's exact scan and word ranking, which each probe every visible case's summary
# on their own (bench/scale_measure.py's associate: 175 probes fewer of 2.1 ms' execution). Only the numbers
# are kept, never a vector.
_MINE = f"""mine AS MATERIALIZED (
    SELECT s.case_id, {{distance}} AS distance, m.found, m.rank_cd
    FROM vis CROSS JOIN LATERAL (
        SELECT s.case_id, s.firm_id, s.embedding_model, s.embedding, s.search_vector FROM {S} s
        WHERE s.case_id = vis.id OFFSET 0
    ) s CROSS JOIN words LEFT JOIN LATERAL (
        SELECT f.found, ts_rank_cd(s.search_vector, words.any_word) AS rank_cd FROM ({_FOUND}) f WHERE {_HOLDS} OFFSET 0
    ) m ON true
    WHERE (SELECT n.exact FROM n)
)"""
_FEW_VECTOR_RANKING = f"""{_QUERY},
{_MINE.replace("{distance}", "CASE WHEN s.embedding_model = %(model)s AND s.embedding IS NOT NULL "
               "THEN cosine_distance(s.embedding, (SELECT query.vector FROM query)) END")},
{_ranked("SELECT m.case_id, m.distance FROM mine m WHERE m.distance IS NOT NULL ORDER BY m.distance, m.case_id LIMIT %(depth)s")}"""
_FEW_NO_VECTOR_RANKING = f"{_MINE.replace('{distance}', 'NULL::float8')},\n{_NO_VECTOR_RANKING}"
_FEW_MATCHES = f"SELECT m.case_id, m.found, m.rank_cd FROM mine m WHERE m.found IS NOT NULL ORDER BY {_WORD_ORDER} LIMIT %(depth)s"

# Score: 0.5 at the similarity floor rising to 1.0 at identity; the share of the words found.
_MEANING = (
    "CASE WHEN 1 - vec.distance >= %(similarity)s "
    "THEN 0.5 + 0.5 * (1 - vec.distance - %(similarity)s) / (1 - %(similarity)s) END"
)
# The fusion and the page. No second join to the visible set: both rankings read only visible cases, in
# this statement. The candidates (at most 2 x depth) drive every lookup after the fusion, one probe each
# (LATERAL, OFFSET 0): joined, the planner may scan every case node of the firm and redo the rankings for
# each. Only the page's candidates are looked up: the first `fetch` by score and fusion, with their ties
# (every case the page can hold: fewer than `fetch` rank ahead of each), whose references break the ties;
# then the page's hits in the map and their snippets. `{references}`: every case's id and reference.
# Every CTE is MATERIALIZED, those read once too (vec, kw, fused, top, hits; none holds more than 2 x depth
# rows): PostgreSQL copies a CTE it inlines into the query that reads it, walking the whole statement to find
# it, once per CTE, where a materialised one is planned once, on its own. Inlined, planning this statement
# took longer than running it for a lawyer on a few hundred cases (issue 28; bench/bench_search_planning.py).
_SEARCH = f"""WITH {VISIBLE_ONCE}, {_WORDS}, {{cap}}, {{n}}, {{vector_ranking}}, {_WORD_RANKING},
fused AS MATERIALIZED (
    SELECT coalesce(vec.case_id, kw.case_id) AS case_id,
           coalesce(1.0 / ({RRF_K} + vec.rank), 0) + coalesce(1.0 / ({RRF_K} + kw.rank), 0) AS rrf,
           {_MEANING} AS meaning, kw.found::float8 / nullif(words.total, 0) AS words
    FROM vec FULL OUTER JOIN kw ON kw.case_id = vec.case_id CROSS JOIN words
),
top AS MATERIALIZED (
    SELECT t.*, c.reference AS key FROM (
        SELECT f.case_id, greatest(f.meaning, f.words) AS score, f.rrf, f.meaning, f.words FROM fused f
        WHERE f.meaning IS NOT NULL OR f.words IS NOT NULL
        ORDER BY score DESC, f.rrf DESC FETCH FIRST (%(fetch)s) ROWS WITH TIES
    ) AS t
    CROSS JOIN LATERAL (SELECT c.reference FROM ({{references}}) AS c(id, reference) WHERE c.id = t.case_id OFFSET 0) c
    ORDER BY t.score DESC, t.rrf DESC, c.reference, t.case_id
    LIMIT %(fetch)s
),
hits AS MATERIALIZED (
    SELECT top.*, n.id AS node_id, n.label,
           ts_headline('english', s.text, coalesce(words.any_word, ''::tsquery), %(headline)s) AS snippet
    FROM top CROSS JOIN LATERAL (SELECT s.text FROM {S} s WHERE s.case_id = top.case_id OFFSET 0) s
    CROSS JOIN LATERAL (
        SELECT n.id, n.label FROM {N} n WHERE n.firm_id = %(firm)s AND n.kind = %(case_kind)s AND n.ref_id = top.case_id
        OFFSET 0
    ) n
    CROSS JOIN words
)
SELECT (SELECT n.exact FROM n), hits.case_id, hits.score, hits.key, hits.node_id, hits.label, hits.snippet,
       hits.meaning, hits.words
FROM (SELECT 1) AS one LEFT JOIN hits ON true
ORDER BY hits.score DESC, hits.rrf DESC, hits.key, hits.case_id"""
# The page of a search: (within the cap, case id, score, key, node id, label, snippet, meaning, words).
# `{firms_vectors}`, `{walled_vectors}` and `{few_vectors}`: the vector ranking of each, or none (no
# embedder answered); `{few_vectors}` with `mine`, which the word ranking for few cases reads too.
SEARCH = Read(
    name="search",
    columns=9,
    whole_firm=_SEARCH.replace("{ranked}", _FIRMS_WORDS).replace("{vector_ranking}", "{firms_vectors}").replace("{n}", _N_PAST),
    walled=_SEARCH.replace("{ranked}", _LAWYERS_WORDS).replace("{vector_ranking}", "{walled_vectors}").replace("{n}", _N_PAST),
    unsighted="as the vector ranking's; the words are ranked from the summaries themselves",
    few=_SEARCH.replace("{ranked}", _FEW_MATCHES).replace("{vector_ranking}", "{few_vectors}").replace("{n}", _N),
    few_by=_CAP_NAMES,
)


def _ranked_search(
    scope: Scope, *, q: str, limit: int, depth: int, floor: _Floor, vector: tuple[str, str] | None = None
) -> list[tuple[Any, ...]]:
    """One statement: the vector ranking (`vector` = (query vector, model); the one `vector_ranking` runs),
    the word ranking, the floor, the fusion and the page with snippets. Each ranking reads only visible
    cases, from the access module's statement: a lawyer's from their visible set, listed once (`vis`); a
    firm admin's by probing that statement for each candidate in rank order, so the firm's case ids are
    never listed. Returns the page's rows."""
    query, model = vector if vector is not None else (None, None)
    found = rows(
        scope, SEARCH,
        **_ranking_names(scope, model=model, depth=depth), query=query,
        firms_vectors=_NO_VECTOR_RANKING if vector is None else _FIRMS_VECTOR_RANKING,
        walled_vectors=_NO_VECTOR_RANKING if vector is None else _WALLED_VECTOR_RANKING,
        few_vectors=_FEW_NO_VECTOR_RANKING if vector is None else _FEW_VECTOR_RANKING,
        q=q, all_words=floor.all_words, similarity=floor.similarity, references=_references(),
        case_kind=Node.Kind.CASE.value, fetch=limit, headline=HEADLINE_OPTIONS,
    )  # fmt: skip
    return [row[1:] for row in found if row[1] is not None]


def search_cases(
    *, viewer: Viewer, q: str, limit: int | None = None, embedder: embeddings.Embedder | None = None
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
    scope = scope_of(viewer)
    if scope.empty or scope.firm_id is None:
        return SearchResult([], "keyword", notice)
    # Each ranking contributes its top `depth` to the fusion: twice the page, at least 20.
    depth = min(max(2 * limit, 20), 2 * int(conf.get("PAGE_MAX")))
    embedded = _query_vector(embedder, q, firm_id=scope.firm_id)
    if embedded is None:
        floor, vector = _Floor(similarity=None, all_words=False), None
    else:
        used, query = embedded
        floor = _Floor(similarity=embeddings.min_similarity(used.model), all_words=True)
        vector = (embeddings.vector_text(query), used.model)
    rows = _ranked_search(scope, q=q, limit=limit, depth=depth, floor=floor, vector=vector)
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
