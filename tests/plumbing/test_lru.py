"""The bounded map a process keeps between requests (graph_memory/plumbing/lru.py)."""

from __future__ import annotations

from graph_memory.plumbing.lru import Lru


def test_what_the_process_remembers_is_bounded() -> None:
    hints = Lru[tuple, None](3)
    for viewer in range(5):
        hints.put([(("search", 1, viewer), None)])
    assert [("search", 1, v) in hints for v in range(5)] == [False, False, True, True, True]
    hints.discard([("search", 1, 3)])
    assert ("search", 1, 3) not in hints


def test_the_least_recently_used_goes_first() -> None:
    nodes = Lru[str, int](2)
    nodes.put([("a", 1), ("b", 2)])
    assert nodes.found(["a", "z"]) == {"a": 1}  # "a" is now the most recently used
    nodes.put([("c", 3)])
    assert nodes.found(["a", "b", "c"]) == {"a": 1, "c": 3}
