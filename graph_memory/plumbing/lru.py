"""A bounded map kept per process: the least recently used entries go first, and every call holds one lock.

For what a process may remember between requests because it never goes stale or is checked where it is
used: the served ledger's case nodes (a node id's meaning never changes) and which lawyers a read's
statement for few cases suits (the statement counts again itself).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Lru(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __contains__(self, key: K) -> bool:
        """Whether `key` is kept (it is then the most recently used)."""
        return bool(self.found([key]))

    def found(self, keys: Iterable[K]) -> dict[K, V]:
        """The entries of `keys` that are kept, each now among the most recently used."""
        got: dict[K, V] = {}
        with self._lock:
            for key in keys:
                if key in self._entries:
                    self._entries.move_to_end(key)
                    got[key] = self._entries[key]
        return got

    def put(self, items: Iterable[tuple[K, V]]) -> None:
        """Keep these entries as the most recently used, forgetting the least recently used past `size`."""
        with self._lock:
            for key, value in items:
                self._entries[key] = value
                self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def discard(self, keys: Iterable[K]) -> None:
        """Forget these keys (those not kept are ignored)."""
        with self._lock:
            for key in keys:
                self._entries.pop(key, None)
