"""System checks for the search relevance settings (SEARCH_EXACT_SHARE, SEARCH_MIN_SIMILARITY)."""

from __future__ import annotations

import pytest
from django.test import override_settings

from graph_memory.checks import check_search_relevance


def ids(**graph_memory: object) -> list[str]:
    with override_settings(GRAPH_MEMORY={"EMBEDDER": "none", **graph_memory}):
        return [m.id for m in check_search_relevance()]


def test_defaults_pass() -> None:
    assert ids() == []
    assert ids(EMBEDDER="local") == []  # the local model's floor is in the defaults


@pytest.mark.parametrize("share", [-0.1, 1.5, "0.1", True])
def test_a_bad_share_is_named(share: object) -> None:
    assert ids(SEARCH_EXACT_SHARE=share) == ["graph_memory.E040"]


@pytest.mark.parametrize("floors", [0.3, {"m": 1.0}, {"m": "high"}, {1: 0.3}, "not json", {"m": True}])
def test_a_bad_floor_table_is_named(floors: object) -> None:
    assert ids(SEARCH_MIN_SIMILARITY=floors) == ["graph_memory.E041"]


def test_an_embedder_without_a_floor_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ids(EMBEDDER="openai", EMBEDDING_MODEL="text-embedding-3-small") == ["graph_memory.W040"]
    assert ids(EMBEDDER="openai", SEARCH_MIN_SIMILARITY={"openai:text-embedding-3-small": 0.3}) == []
    assert ids(EMBEDDER="openai", SEARCH_MIN_SIMILARITY='{"*": 0.25}') == []  # JSON, as from the environment
