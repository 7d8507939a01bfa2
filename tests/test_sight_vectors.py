"""A lawyer's copies of their cases' summary vectors (graph_memory.models.sight.SightVector).

- A rebuild copies the vector of every case they may open, and nothing else.
- While their sight is current, the exact scan ranks the copies, and ranks them
  as the summaries themselves would be ranked; one statement either way.
- A summary's vector written, changed or deleted makes the sight of everyone
  granted its case stale (a case hidden from them leaves theirs current), and
  a deleted summary, case or user takes its copies with it.
- A copy that should not be there (planted by hand) is still held back by the wall.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from django.conf import settings
from django.db import connection
from django.test import override_settings

from accounts.models import User
from graph_memory import search, services, sight
from graph_memory.models import CaseSummary, SightVector
from practice.models import Case
from tests import search_support
from tests.factories import FirmFactory

pytestmark = pytest.mark.django_db

MODEL = search_support.MODEL


@pytest.fixture
def world() -> dict[str, Any]:
    """A firm of 200 embedded cases; a lawyer who may open 30 of them, with a current sight."""
    firm = FirmFactory(slug="vectors")
    corpus = search_support.load_corpus(firms=[firm], per_firm=200)
    lawyer, visible = search_support.grant_share(corpus, firm, share=0.15, username="vectors-lawyer")
    assert sight.rebuild(lawyer) and sight.current(lawyer)
    hidden = np.setdiff1d(corpus.case_ids[firm.pk], visible)
    return {"firm": firm, "corpus": corpus, "lawyer": lawyer, "visible": visible, "hidden": hidden}


def _ranking(world: dict[str, Any], query: np.ndarray) -> list[int]:
    return search.vector_ranking(viewer=world["lawyer"], vector=query, model=MODEL, depth=10).case_ids


def _outside_the_top(world: dict[str, Any], query: np.ndarray) -> int:
    """A case they may open that is not among the ten nearest to `query`."""
    top = _ranking(world, query)
    return next(int(c) for c in world["visible"] if int(c) not in top)


def test_a_rebuild_copies_the_vector_of_every_case_they_may_open(world: dict[str, Any]) -> None:
    copies = {c.case_id: c for c in SightVector.objects.filter(viewer=world["lawyer"])}
    assert sorted(copies) == sorted(world["visible"].tolist())
    for summary in CaseSummary.objects.filter(case_id__in=list(copies)):
        assert copies[summary.case_id].embedding_model == summary.embedding_model == MODEL
        assert np.array_equal(copies[summary.case_id].embedding, summary.embedding)


def test_the_copies_rank_as_the_summaries_do_in_one_statement(world: dict[str, Any], django_assert_num_queries) -> None:
    for query in world["corpus"].queries(8, seed=3):
        with django_assert_num_queries(1):
            ranking = search.vector_ranking(viewer=world["lawyer"], vector=query, model=MODEL, depth=10)
        assert ranking.method == "exact"
        assert ranking.case_ids == search_support.exact_top(world["corpus"], world["firm"], world["visible"], query, 10)
        with override_settings(GRAPH_MEMORY={**settings.GRAPH_MEMORY, "LAWYER_SIGHT": False}):
            assert _ranking(world, query) == ranking.case_ids


def test_a_whole_search_from_the_copies_answers_as_from_the_summaries(
    world: dict[str, Any], django_assert_num_queries, settings
) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "SEARCH_MIN_SIMILARITY": {MODEL: 0.0}}  # every vector qualifies
    for i, query in enumerate(world["corpus"].queries(4, seed=6)):
        stub = search_support.FixedEmbedder(query)
        with django_assert_num_queries(1):
            found = services.search_cases(viewer=world["lawyer"], q=search_support.query_words(i), limit=10, embedder=stub)
        assert sight.current(world["lawyer"]) and found.mode == "hybrid" and len(found.results) == 10
        assert {h.case_id for h in found.results} <= set(world["visible"].tolist())
        with override_settings(GRAPH_MEMORY={**settings.GRAPH_MEMORY, "LAWYER_SIGHT": False}):
            assert services.search_cases(viewer=world["lawyer"], q=search_support.query_words(i), limit=10, embedder=stub) == found


def test_while_current_the_ranking_reads_the_copies(world: dict[str, Any]) -> None:
    """A copy changed by hand (no trigger sees it) moves its case: the copies are what was ranked."""
    lawyer, query = world["lawyer"], world["corpus"].queries(1, seed=4)[0]
    case_id = _outside_the_top(world, query)
    SightVector.objects.filter(viewer=lawyer, case_id=case_id).update(embedding=query.tolist())
    assert sight.current(lawyer)
    assert _ranking(world, query)[0] == case_id


def test_a_stale_sight_costs_one_statement_more_and_is_rebuilt_after(
    world: dict[str, Any], django_assert_num_queries, django_capture_on_commit_callbacks
) -> None:
    lawyer, query = world["lawyer"], world["corpus"].queries(1, seed=2)[0]
    CaseSummary.objects.filter(case_id=int(world["visible"][0])).update(embedding=query.tolist())
    assert not sight.current(lawyer)
    with django_capture_on_commit_callbacks(execute=True) as callbacks, django_assert_num_queries(2):
        ranking = search.vector_ranking(viewer=lawyer, vector=query, model=MODEL, depth=10)
    assert ranking.case_ids[0] == int(world["visible"][0]) and len(callbacks) == 1
    assert sight.current(lawyer)


def test_a_new_vector_makes_the_sight_stale_and_the_stale_ranking_reads_the_summaries(world: dict[str, Any]) -> None:
    lawyer, query = world["lawyer"], world["corpus"].queries(1, seed=5)[0]
    case_id = _outside_the_top(world, query)
    CaseSummary.objects.filter(case_id=case_id).update(embedding=query.tolist())  # now the nearest of all
    assert not sight.current(lawyer)
    assert _ranking(world, query)[0] == case_id  # from the summaries: the copy is out of date
    assert sight.rebuild(lawyer) and sight.current(lawyer)
    assert _ranking(world, query)[0] == case_id  # and from the copies again
    assert np.allclose(SightVector.objects.get(viewer=lawyer, case_id=case_id).embedding, query, atol=1e-6)


def test_a_change_to_a_summary_that_leaves_the_vector_as_it_was_keeps_the_sight_current(world: dict[str, Any]) -> None:
    CaseSummary.objects.filter(case_id__in=world["visible"].tolist()).update(stale=True)
    assert sight.current(world["lawyer"])


def test_a_hidden_cases_new_vector_leaves_their_sight_current(world: dict[str, Any]) -> None:
    hidden = int(world["hidden"][0])
    CaseSummary.objects.filter(case_id=hidden).update(embedding=world["corpus"].queries(1, seed=9)[0].tolist())
    CaseSummary.objects.filter(case_id=int(world["hidden"][1])).delete()
    assert sight.current(world["lawyer"])


@pytest.mark.parametrize("what", ["summary", "case", "user"])
def test_deleting_a_summary_case_or_user_takes_its_copies_with_it(world: dict[str, Any], what: str) -> None:
    lawyer, case_id = world["lawyer"], int(world["visible"][0])
    assert SightVector.objects.filter(case_id=case_id).exists()
    if what == "summary":
        CaseSummary.objects.filter(case_id=case_id).delete()
        assert not SightVector.objects.filter(case_id=case_id).exists()
        assert not sight.current(lawyer)
    elif what == "case":
        Case.objects.filter(pk=case_id).delete()
        assert not SightVector.objects.filter(case_id=case_id).exists()
    else:
        User.objects.filter(pk=lawyer.pk).delete()
        assert not SightVector.objects.filter(viewer_id=lawyer.pk).exists()


def test_a_planted_copy_of_a_hidden_case_is_still_held_back_by_the_wall(world: dict[str, Any]) -> None:
    lawyer, hidden = world["lawyer"], int(world["hidden"][0])
    query = world["corpus"].queries(1, seed=7)[0]
    SightVector.objects.create(viewer=lawyer, case_id=hidden, embedding_model=MODEL, embedding=query.tolist())
    assert sight.current(lawyer)  # planted without a trigger noticing: the copies have none
    ranking = search.vector_ranking(viewer=lawyer, vector=query, model=MODEL, depth=10)
    assert hidden not in ranking.case_ids
    assert ranking.case_ids == search_support.exact_top(world["corpus"], world["firm"], world["visible"], query, 10)


def test_one_viewers_copies_fill_pages_of_their_own(world: dict[str, Any]) -> None:
    """What the copies are for: a lawyer's exact scan reads a few pages, not one page per case."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(DISTINCT (ctid::text::point)[0]) FROM {SightVector._meta.db_table} WHERE viewer_id = %s",
            [world["lawyer"].pk],
        )
        pages = cursor.fetchone()[0]
    assert pages <= len(world["visible"]) // 4 + 1
