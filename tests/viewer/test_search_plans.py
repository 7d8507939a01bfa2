"""The plans of a whole search (`search_cases`), read from EXPLAIN (ANALYZE, FORMAT JSON), not timed (issue 28).

- A lawyer who may open thousands of cases: their visible set (the CTE `vis`) is
  listed once (whole when their summaries are ranked one by one, only counted up
  to the cap when both rankings probe the wall per candidate) and never rescanned for each row (a semi-join over it, estimated at
  a few rows, once rescanned all of it for every visible case: quadratic), and
  their grants are only ever probed one case at a time; whichever path the
  vector ranking takes (the index walk, the exact scan of their summaries or of
  their sight's copies) and without an embedder.
- A firm admin: one statement, and the firm's case ids are never listed: every
  read of the case table is a probe of one case.
- The index walk's settings, set by the statement itself, are in force for the walk.
- A lawyer within the cap gets, from their second search on, the statement for few cases (`Read.few`):
  the same page, their visible set listed once, each of their summaries read once for both rankings and
  no index walk; past the cap, the walled statement, at once when they grow past it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from django.db import connection, transaction
from psycopg import _queries as psycopg_queries

from accounts.models import User
from graph_memory import services
from graph_memory.plumbing.lru import Lru
from graph_memory.vectors import firm_indexes
from graph_memory.viewer import search
from graph_memory.wall import scope
from practice.models import Case, CaseUserObjectPermission
from tests import plans, search_support
from tests.factories import FirmFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_configured_embedder(settings) -> None:
    """Words only means words only: a search given no embedder does not fall back to a configured one."""
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "EMBEDDER": "none"}


CASES, VISIBLE, FEW = 4_000, 3_200, 200
DEPTH = 20  # search_cases' depth for a page of 10


@pytest.fixture(scope="module")
def big_firm(django_db_setup, django_db_blocker):  # -> Iterator[dict[str, Any]]
    """A firm of 4,000 embedded cases with its map and its own index; a lawyer on 3,200 of them, one
    on 200, and the firm's admin. Loaded once, in a transaction rolled back at the end."""
    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        try:
            firm = FirmFactory(slug="plans")
            corpus = search_support.load_corpus(firms=[firm], per_firm=CASES)
            with connection.cursor() as cursor:
                # As firm_indexes.ensure_search_indexes builds it, but inside this transaction (so not CONCURRENTLY).
                cursor.execute(
                    f"CREATE INDEX {firm_indexes.index_name(firm.pk)} ON {search.S} "
                    f"USING hnsw (embedding vector_cosine_ops) WHERE firm_id = {firm.pk}"
                )
                cursor.execute(f"ANALYZE {search.S}")
            lawyer, visible = search_support.grant_share(corpus, firm, share=VISIBLE / CASES, username="plans-lawyer")
            few, few_visible = search_support.grant_share(corpus, firm, share=FEW / CASES, username="plans-few")
            admin = UserFactory(firm=firm, username="plans-admin", role=User.Role.ADMIN)
            yield {"corpus": corpus, "firm": firm, "lawyer": (lawyer, visible), "few": (few, few_visible), "admin": admin}
        finally:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


def _search_plan(viewer: User, query: np.ndarray | None, q: str = "lease") -> dict[str, Any]:
    """The plan of the one statement of the viewer's whole search (hybrid with `query`, else words only)."""
    embedder = None if query is None else search_support.FixedEmbedder(query)
    services.search_cases(viewer=viewer, q=q, limit=10, embedder=embedder)  # the permission's id, read once
    statements = plans.sent(lambda: services.search_cases(viewer=viewer, q=q, limit=10, embedder=embedder))
    assert len(statements) == 1
    return plans.analyzed(statements[0])


def _rescans_of_the_visible_set(plan: dict[str, Any]) -> list[str]:
    """Nodes that read the visible set more than once (`vis` rescanned, or a grant range re-read for
    each row, as a semi-join or the inner side of a nested loop does), or more than one grant per probe."""
    grants = CaseUserObjectPermission._meta.db_table
    found = []
    for node in plans.nodes(plan):
        loops, rows = node.get("Actual Loops", 0), node.get("Actual Rows", 0)
        if node.get("CTE Name") == "vis" and loops > 1:
            found.append(f"{node['Node Type']} on vis, {loops} loops")
        if node.get("Relation Name") == grants and loops > 1 and rows > 1:
            found.append(f"{node['Node Type']} on {grants}, {loops} loops of {rows} rows")
    return found


def _query(big_firm: dict[str, Any], seed: int = 3) -> np.ndarray:
    return big_firm["corpus"].queries(1, seed=seed)[0]


@pytest.mark.parametrize("path", ["index walk", "exact scan of the summaries", "words only"])
def test_a_lawyers_search_never_rescans_their_visible_set(big_firm, settings, path) -> None:
    lawyer, visible = big_firm["lawyer"]
    assert len(visible) > search_support.exact_cap()  # the walk by default
    if path.startswith("exact"):
        settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "SEARCH_EXACT_MAX": 10 * CASES}
    plan = _search_plan(lawyer, None if path == "words only" else _query(big_firm))
    assert _rescans_of_the_visible_set(plan) == []
    listed = [n for n in plans.nodes(plan) if n.get("CTE Name") == "vis" and n.get("Actual Loops")]
    if path.startswith("exact"):
        # Listed once, whole: their summaries are ranked one by one.
        assert listed and max(n["Actual Rows"] for n in listed) == len(visible)
    else:
        # Never listed: their own grants (one source) are read up to the cap + 1, which settles that they see
        # more; both rankings then probe the wall for each candidate.
        assert listed == []
        grants = [n for n in plans.nodes(plan) if n.get("Actual Loops")
                  and n.get("Relation Name") == CaseUserObjectPermission._meta.db_table]  # fmt: skip
        assert [n["Actual Rows"] for n in grants if n["Actual Loops"] == 1] == [search_support.exact_cap() + 1]
        assert all(n["Actual Rows"] <= 1 for n in grants if n["Actual Loops"] > 1)  # the wall's probes, a row each
    walked = [n for n in plans.nodes(plan) if n.get("Index Name") == firm_indexes.index_name(big_firm["firm"].pk)]
    assert bool(walked and walked[0]["Actual Loops"]) == (path == "index walk")


def test_a_lawyers_search_answers_from_their_cases_only(big_firm) -> None:
    lawyer, visible = big_firm["lawyer"]
    for seed in range(3):
        result = services.search_cases(
            viewer=lawyer, q="lease", limit=10, embedder=search_support.FixedEmbedder(_query(big_firm, seed))
        )
        assert result.mode == "hybrid" and result.results
        assert {h.case_id for h in result.results} <= set(visible.tolist())


@pytest.mark.parametrize("embedded", [False, True])
def test_both_ways_of_ranking_a_lawyers_words_give_the_same_page(big_firm, settings, embedded) -> None:
    """Past the cap the firm's matches are probed against the wall in rank order; within it the
    lawyer's summaries are ranked one by one: the same hits, scores and order either way."""
    lawyer, visible = big_firm["lawyer"]
    assert len(visible) > search_support.exact_cap()
    # The exact vector scan either way, so only the word ranking's way differs.
    embedder = search_support.FixedEmbedder(_query(big_firm), model="other:model") if embedded else None
    pages = []
    for cap in (1, 10 * CASES):
        settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "SEARCH_EXACT_MAX": cap}
        for q in ("lease", "lease notice tenant", "court"):
            result = services.search_cases(viewer=lawyer, q=q, limit=10, embedder=embedder)
            pages.append([(h.case_id, h.score, h.matched) for h in result.results])
    assert pages[:3] == pages[3:]
    assert any(pages[:3]) and {c for page in pages for c, _, _ in page} <= set(visible.tolist())


@pytest.mark.parametrize("path", ["index walk", "walk short, then exact", "words only"])
def test_a_firm_admins_search_is_one_statement_that_lists_no_case_ids(
    big_firm, path, django_assert_num_queries
) -> None:
    """Also when the walk comes back short (here: no vector of the query's model) and the exact scan
    reads the firm's summaries: each is probed against the wall, none listed from it."""
    admin, firm = big_firm["admin"], big_firm["firm"]
    query = None if path == "words only" else _query(big_firm)
    model = "other:model" if path.startswith("walk short") else search_support.MODEL
    embedder = None if query is None else search_support.FixedEmbedder(query, model=model)
    with django_assert_num_queries(1):
        result = services.search_cases(viewer=admin, q="lease", limit=10, embedder=embedder)
    assert result.results and {h.case_id for h in result.results} <= set(big_firm["corpus"].case_ids[firm.pk].tolist())
    (statement,) = plans.sent(lambda: services.search_cases(viewer=admin, q="lease", limit=10, embedder=embedder))
    plan = plans.analyzed(statement)
    cases = Case._meta.db_table
    reads = [n for n in plans.nodes(plan) if n.get("Relation Name") == cases and n.get("Actual Loops")]
    assert reads and all(n["Actual Rows"] <= 1 for n in reads)  # one case per probe, never a list
    assert sum(n["Actual Loops"] for n in reads) <= 4 * DEPTH  # the candidates' probes, not the firm's 4,000
    assert not [n for n in plans.nodes(plan) if n.get("CTE Name") == "vis" and n.get("Actual Loops")]
    walked = [n for n in plans.nodes(plan) if n.get("Index Name") == firm_indexes.index_name(firm.pk)]
    assert bool(walked and walked[0]["Actual Loops"]) == (path == "index walk")


def test_the_walks_settings_are_in_force_for_the_walk(big_firm, settings) -> None:
    """A lawyer on 5% of the firm, sent to the index with a candidate list of the depth alone: only the
    iterative scan, set by the statement itself, fills the page from the walk (pgvector's defaults,
    no iterative scan and 40 candidates, would yield about two of theirs and fall back to the exact scan)."""
    settings.GRAPH_MEMORY = {
        **settings.GRAPH_MEMORY, "SEARCH_EXACT_MAX": 1, "SEARCH_EXACT_SHARE": 0.0,
        "SEARCH_EF_SEARCH": 1, "SEARCH_FIRM_EF_SEARCH": 1, "LAWYER_SIGHT": False,
    }  # fmt: skip
    few, visible = big_firm["few"]
    plan = _search_plan(few, _query(big_firm, seed=11))
    (walk,) = [n for n in plans.nodes(plan) if n.get("Subplan Name") == "CTE ann"]
    assert walk["Actual Rows"] == DEPTH  # a full page of candidates: the exact scan is not needed
    assert len(visible) == FEW


# In the walled statement only: the word ranking past the cap probes the firm's matches against the wall.
WALLED = ") may_open"


@pytest.fixture
def _fresh_hints(monkeypatch) -> Lru:
    """What the process has learned of who is within the cap, from nothing (as in a new process)."""
    fresh = Lru[tuple, None](scope.few_viewers.size)
    monkeypatch.setattr(scope, "few_viewers", fresh)
    return fresh


@pytest.mark.parametrize("embedded", [False, True])
def test_a_lawyer_within_the_cap_gets_the_statement_for_few_cases_from_their_second_search(
    big_firm, _fresh_hints, embedded
) -> None:
    """The first search runs the walled statement, which says they are within the cap; the next ones the
    statement for few cases (no index walk, no probed word ranking to plan): the same page, one statement."""
    few, visible = big_firm["few"]
    assert len(visible) <= search_support.exact_cap()
    embedder = search_support.FixedEmbedder(_query(big_firm, seed=5)) if embedded else None
    statements, pages = [], []
    for _ in range(3):
        (statement,) = plans.sent(lambda: pages.append(services.search_cases(viewer=few, q="lease", limit=10, embedder=embedder)))
        statements.append(statement)
    ran = [sql for sql, _ in statements]
    assert WALLED in ran[0] and all(WALLED not in sql for sql in ran[1:])
    assert len(ran[1]) < len(ran[0]) and ran[1] == ran[2]
    assert pages[0] == pages[1] == pages[2] and pages[0].results
    # Short enough for psycopg to split once and keep (plumbing/stmt.py, `_compact`), not on every search.
    assert len(ran[2].encode()) <= psycopg_queries.MAX_CACHED_STATEMENT_LENGTH
    assert len(statements[2][1]) <= psycopg_queries.MAX_CACHED_STATEMENT_PARAMS
    plan = plans.analyzed(statements[2])
    assert _rescans_of_the_visible_set(plan) == []
    listed = [n for n in plans.nodes(plan) if n.get("CTE Name") == "vis" and n.get("Actual Loops")]
    assert listed and max(n["Actual Rows"] for n in listed) == FEW  # listed once, whole
    assert not [n for n in plans.nodes(plan) if "hnsw" in n.get("Index Name", "")]
    # Each visible summary read once, for both rankings (then the page's own, for their snippets).
    reads = [n for n in plans.nodes(plan) if n.get("Relation Name") == search.S and n.get("Actual Loops")]
    assert sorted(n["Actual Loops"] for n in reads) == [len(pages[2].results), FEW]


def test_a_lawyer_past_the_cap_always_gets_the_walled_statement(big_firm, _fresh_hints) -> None:
    lawyer, visible = big_firm["lawyer"]
    assert len(visible) > search_support.exact_cap()
    embedder = search_support.FixedEmbedder(_query(big_firm))
    for _ in range(3):
        (statement,) = plans.sent(lambda: services.search_cases(viewer=lawyer, q="lease", limit=10, embedder=embedder))
        assert WALLED in statement[0]


def test_a_lawyer_who_grows_past_the_cap_is_answered_by_the_walled_statement_at_once(big_firm, _fresh_hints) -> None:
    """The statement for few cases counts the visible set itself: past the cap it answers nothing and the
    walled statement answers, in the same call; from then on the walled statement alone."""
    few, visible = big_firm["few"]
    embedder = search_support.FixedEmbedder(_query(big_firm, seed=7))
    services.search_cases(viewer=few, q="lease", limit=10, embedder=embedder)
    assert len(plans.sent(lambda: services.search_cases(viewer=few, q="lease", limit=10, embedder=embedder))) == 1
    firm = big_firm["firm"]
    seen = set(visible.tolist())
    more = [int(c) for c in big_firm["corpus"].case_ids[firm.pk] if c not in seen][: 2 * search_support.exact_cap()]
    permission = CaseUserObjectPermission.objects.filter(user=few).first().permission
    CaseUserObjectPermission.objects.bulk_create(
        CaseUserObjectPermission(permission=permission, user=few, content_object_id=c) for c in more
    )
    now_visible = seen | set(more)
    grown = plans.sent(lambda: services.search_cases(viewer=few, q="lease", limit=10, embedder=embedder))
    assert len(grown) == 2 and WALLED not in grown[0][0] and WALLED in grown[1][0]
    result = services.search_cases(viewer=few, q="lease", limit=10, embedder=embedder)
    assert result.results and {h.case_id for h in result.results} <= now_visible
    assert {h.case_id for h in result.results} - seen  # the new cases are ranked too
    (again,) = plans.sent(lambda: services.search_cases(viewer=few, q="lease", limit=10, embedder=embedder))
    assert WALLED in again[0]
