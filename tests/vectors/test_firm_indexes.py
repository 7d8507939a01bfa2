"""Each large firm's own HNSW index (graph_memory/vectors/firm_indexes.py): built, used, kept, rebuilt, dropped.

CREATE INDEX CONCURRENTLY cannot run inside a transaction, so these tests commit
(transactional_db) and drop every firm index they leave behind.
"""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from graph_memory import conf, services, tasks
from graph_memory.models import CaseSummary
from graph_memory.vectors import firm_indexes
from graph_memory.viewer import search
from practice.models import Case
from tests import search_support
from tests.factories import FirmFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

BIG, SMALL = 600, 150


@pytest.fixture
def two_firms(settings):
    """A firm above SEARCH_FIRM_INDEX_MIN (here 400 vectors) and one below it, with synthetic vectors."""
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "EMBEDDER": "none", "SEARCH_FIRM_INDEX_MIN": 400}
    big, small = FirmFactory(slug="big"), FirmFactory(slug="small")
    corpus = search_support.load_corpus(firms=[big], per_firm=BIG, with_graph=False)
    other = search_support.load_corpus(firms=[small], per_firm=SMALL, with_graph=False, seed=8)
    corpus.case_ids.update(other.case_ids)
    corpus.vectors.update(other.vectors)
    yield corpus, big, small
    with connection.cursor() as cursor:
        for firm_id in firm_indexes.existing():
            cursor.execute(f"DROP INDEX IF EXISTS {firm_indexes.index_name(firm_id)}")


def test_a_firm_above_the_threshold_gets_its_own_index_once(two_firms) -> None:
    _, big, _ = two_firms
    changes = firm_indexes.ensure_search_indexes()
    assert changes.built == [big.pk] and changes.dropped == [] and changes.failed == []
    assert firm_indexes.existing() == {big.pk: True}
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [firm_indexes.index_name(big.pk)])
        definition = cursor.fetchone()[0]
    assert "USING hnsw (embedding vector_cosine_ops)" in definition and f"WHERE (firm_id = {big.pk})" in definition
    again = firm_indexes.ensure_search_indexes()
    assert again.built == [] and again.kept == [big.pk]


def _one_statement(viewer, query) -> tuple[str, search.VectorRanking]:
    """The one statement a vector ranking runs (its parameters bound), and the ranking."""
    with CaptureQueriesContext(connection) as captured:
        ranking = search.vector_ranking(viewer=viewer, vector=query, model=search_support.MODEL, depth=10)
    assert len(captured.captured_queries) == 1
    return captured.captured_queries[0]["sql"], ranking


@pytest.mark.parametrize("own_index", [True, False])
def test_the_firm_search_walks_its_own_index_with_its_own_list(two_firms, settings, own_index) -> None:
    """With its own index, the firm's index path runs on it, with SEARCH_FIRM_EF_SEARCH; without, on the shared one."""
    corpus, big, _ = two_firms
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "SEARCH_EXACT_MAX": 1, "SEARCH_EXACT_SHARE": 0.0}
    if own_index:
        firm_indexes.ensure_search_indexes(firm_id=big.pk)
    admin = UserFactory(firm=big, username="big-admin", role=User.Role.ADMIN)
    query = corpus.queries(1, seed=3)[0]
    statement, ranking = _one_statement(admin, query)
    assert ranking.method == "hnsw"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement)  # its settings are local: they hold until this transaction ends
        cursor.execute("SELECT current_setting('hnsw.iterative_scan'), current_setting('hnsw.ef_search')")
        ef = conf.get("SEARCH_FIRM_EF_SEARCH") if own_index else conf.get("SEARCH_EF_SEARCH")
        assert cursor.fetchone() == ("strict_order", str(ef))
        cursor.execute("EXPLAIN " + statement)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    used = firm_indexes.index_name(big.pk) if own_index else "gm_summary_embedding_hnsw"
    assert f"Index Scan using {used} " in plan


@pytest.mark.parametrize("share", [0.1, 1.0])
def test_recall_on_the_firms_own_index_equals_exact_search(two_firms, settings, share) -> None:
    corpus, big, _ = two_firms
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "SEARCH_EXACT_MAX": 1, "SEARCH_EXACT_SHARE": 0.0}
    firm_indexes.ensure_search_indexes()
    if share == 1.0:
        viewer, visible = UserFactory(firm=big, username="big-admin", role=User.Role.ADMIN), corpus.case_ids[big.pk]
    else:
        viewer, visible = search_support.grant_share(corpus, big, share=share, username="big-lawyer")
    for query in corpus.queries(10, seed=21):
        ranking = search.vector_ranking(viewer=viewer, vector=query, model=search_support.MODEL, depth=10)
        assert ranking.method.startswith("hnsw")
        assert ranking.case_ids == search_support.exact_top(corpus, big, visible, query, 10)


def test_a_firm_that_shrinks_keeps_its_index_to_half_the_threshold_then_loses_it(two_firms) -> None:
    _, big, _ = two_firms
    firm_indexes.ensure_search_indexes()
    ids = list(CaseSummary.objects.filter(firm=big).order_by("pk").values_list("pk", flat=True))
    CaseSummary.objects.filter(pk__in=ids[: BIG - 250]).update(embedding=None)  # 250 left: above half of 400
    assert firm_indexes.ensure_search_indexes(firm_id=big.pk).kept == [big.pk]
    CaseSummary.objects.filter(pk__in=ids[: BIG - 150]).update(embedding=None)  # 150 left: below half
    assert firm_indexes.ensure_search_indexes(firm_id=big.pk).dropped == [big.pk]
    assert firm_indexes.existing() == {}


def test_a_firm_whose_cases_are_all_deleted_loses_its_index(two_firms) -> None:
    _, big, _ = two_firms
    firm_indexes.ensure_search_indexes()
    Case.objects.filter(firm=big).delete()  # their summaries go with them
    assert firm_indexes.ensure_search_indexes().dropped == [big.pk]
    assert firm_indexes.existing() == {}


def test_an_invalid_index_from_a_failed_build_is_built_again(two_firms) -> None:
    _, big, _ = two_firms
    firm_indexes.ensure_search_indexes()
    with connection.cursor() as cursor:  # what a CREATE INDEX CONCURRENTLY that failed leaves behind
        cursor.execute(
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass", [firm_indexes.index_name(big.pk)]
        )
    assert firm_indexes.existing() == {big.pk: False}
    assert firm_indexes.ensure_search_indexes().built == [big.pk]
    assert firm_indexes.existing() == {big.pk: True}


def test_a_failed_build_is_logged_and_the_other_firms_go_on(two_firms, settings, caplog) -> None:
    _, big, small = two_firms
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "SEARCH_FIRM_INDEX_MIN": 100}  # both firms qualify
    with connection.cursor() as cursor:  # a name taken by something else: the build of `big` fails
        cursor.execute(f"CREATE TABLE {firm_indexes.index_name(big.pk)} (x int)")
    try:
        changes = firm_indexes.ensure_search_indexes()
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE {firm_indexes.index_name(big.pk)}")
    assert changes.failed == [big.pk] and changes.built == [small.pk]
    assert "the build failed" in caplog.text


def test_ensure_refuses_to_run_inside_a_transaction(two_firms) -> None:
    with transaction.atomic(), pytest.raises(RuntimeError, match="outside a transaction"):
        firm_indexes.ensure_search_indexes()
    assert firm_indexes.existing() == {}


def test_the_command_and_the_task(two_firms) -> None:
    _, big, _ = two_firms
    out, err = io.StringIO(), io.StringIO()
    call_command("search_indexes", "--firm", "small", stdout=out, stderr=err)
    assert out.getvalue().strip() == "0 built, 0 dropped, 0 in place" and firm_indexes.existing() == {}
    call_command("search_indexes", stdout=out, stderr=err)
    assert "1 built, 0 dropped, 0 in place" in out.getvalue() and f"firm {big.pk}: {BIG:,} vectors" in err.getvalue()
    with pytest.raises(CommandError, match="unknown firm: nope"):
        call_command("search_indexes", "--firm", "nope", stdout=out, stderr=err)
    assert tasks.search_index_firm_task(big.pk) == {"built": [], "dropped": [], "kept": [big.pk], "busy": [], "failed": []}


def test_the_nightly_firm_run_sees_to_the_index_after_it_commits(two_firms, caplog) -> None:
    """refresh_firm_task queues search_index_firm_task on commit (tasks run eagerly without a broker);
    run inside a transaction, the index task leaves the work to the next run and says so."""
    _, big, _ = two_firms
    with transaction.atomic():
        assert tasks.search_index_firm_task(big.pk) == {}
    assert "left to the next run: called inside a transaction" in caplog.text and firm_indexes.existing() == {}
    tasks.refresh_firm_task(big.pk)
    assert firm_indexes.existing() == {big.pk: True}


def test_a_firm_admin_goes_straight_to_the_firms_own_index(two_firms, django_assert_num_queries) -> None:
    """The firm's 600 vectors are within SEARCH_EXACT_MAX, so a firm admin's search ranked them exactly;
    with the firm's own index it walks that instead, counting nothing, and a lawyer still scans exactly."""
    corpus, big, _ = two_firms
    admin = UserFactory(firm=big, username="big-admin", role=User.Role.ADMIN)
    lawyer, _ = search_support.grant_share(corpus, big, share=0.1, username="big-lawyer")
    query = corpus.queries(1, seed=5)[0]

    def method(viewer) -> str:
        return search.vector_ranking(viewer=viewer, vector=query, model=search_support.MODEL, depth=10).method

    assert (method(admin), method(lawyer)) == ("exact", "exact")
    firm_indexes.ensure_search_indexes()
    assert (method(admin), method(lawyer)) == ("hnsw", "exact")
    stub = search_support.FixedEmbedder(query)
    # The whole search is one statement: it finds the index, sets the walk's settings and walks it.
    with django_assert_num_queries(1):
        result = services.search_cases(viewer=admin, q="lease", limit=5, embedder=stub)
    assert result.mode == "hybrid" and {h.case_id for h in result.results} <= set(corpus.case_ids[big.pk].tolist())
    with django_assert_num_queries(1):
        again = services.search_cases(viewer=admin, q="lease", limit=5, embedder=stub)
    with django_assert_num_queries(1):
        assert services.search_cases(viewer=admin, q="lease", limit=5, embedder=stub) == again == result


def test_an_index_dropped_by_another_process_still_gives_the_exact_answer(two_firms) -> None:
    """The ranking asks the catalogue in its own statement whether the firm has its index: dropped by another
    process, the next ranking walks the shared index (with its own, longer candidate list), exact here."""
    corpus, big, _ = two_firms
    admin = UserFactory(firm=big, username="big-admin", role=User.Role.ADMIN)
    firm_indexes.ensure_search_indexes()
    query = corpus.queries(1, seed=8)[0]
    assert search.vector_ranking(viewer=admin, vector=query, model=search_support.MODEL, depth=10).method == "hnsw"
    with connection.cursor() as cursor:  # as another process would
        cursor.execute(f"DROP INDEX {firm_indexes.index_name(big.pk)}")
    statement, ranking = _one_statement(admin, query)
    assert ranking.method in ("hnsw", "hnsw+exact", "exact")
    assert ranking.case_ids == search_support.exact_top(corpus, big, corpus.case_ids[big.pk], query, 10)
    assert firm_indexes.index_name(big.pk) in statement  # asked, in the one statement


def test_each_path_can_be_forced_whatever_the_rule(two_firms) -> None:
    """`force` (the benchmark's side-by-side) takes the path named: exact for a firm admin with an own index,
    the index for a lawyer on a few cases, each with the exact answer."""
    corpus, big, _ = two_firms
    firm_indexes.ensure_search_indexes()
    admin = UserFactory(firm=big, username="big-admin", role=User.Role.ADMIN)
    lawyer, visible = search_support.grant_share(corpus, big, share=0.5, username="big-lawyer")
    query = corpus.queries(1, seed=6)[0]
    for viewer, force, shown in ((admin, "exact", corpus.case_ids[big.pk]), (lawyer, "index", visible)):
        ranking = search.vector_ranking(viewer=viewer, vector=query, model=search_support.MODEL, depth=10, force=force)
        assert ranking.method == ("exact" if force == "exact" else "hnsw")
        assert ranking.case_ids == search_support.exact_top(corpus, big, shown, query, 10)
    with pytest.raises(ValueError, match="force must be"):
        search.vector_ranking(viewer=admin, vector=query, model=search_support.MODEL, depth=10, force="fast")
