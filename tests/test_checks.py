"""System checks on the GRAPH_MEMORY settings name the bad key."""

from __future__ import annotations

import pytest
from django.test import override_settings

from graph_memory.checks import check_settings


def error_ids(**graph_memory: object) -> list[tuple[str, str]]:
    with override_settings(GRAPH_MEMORY=graph_memory):
        return [(e.id, e.msg) for e in check_settings()]


def test_defaults_pass() -> None:
    assert error_ids() == []


@pytest.mark.parametrize(
    ("key", "value", "check_id"),
    [
        ("PAGE_MAX", 0, "graph_memory.E002"),
        ("CONTEXT_MAX_COUNTERPARTIES", -1, "graph_memory.E002"),
        ("QUERY_MAX_CHARS", "long", "graph_memory.E002"),
        ("WRITER", "gpt", "graph_memory.E004"),
        ("EMBEDDER", "cloud", "graph_memory.E005"),
    ],
)
def test_a_bad_value_is_reported_with_its_key(key: str, value: object, check_id: str) -> None:
    errors = error_ids(**{key: value})
    assert any(i == check_id and key in msg for i, msg in errors)


def test_page_default_above_max_is_reported() -> None:
    assert [e[0] for e in error_ids(PAGE_DEFAULT=50, PAGE_MAX=40)] == ["graph_memory.E003"]
