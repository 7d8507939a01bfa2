"""One PostgreSQL advisory lock per case: whoever holds it is writing that case's summary.

The nightly refresh and on-demand generation both take it, so a case is
never written by two processes at once and two concurrent "write it now"
requests cost one model call.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

from graph_memory.plumbing.locks import LockKind, try_lock, unlock

_POLL_SECONDS = 0.05


@contextmanager
def case_lock(case_id: int, *, wait: float = 0.0) -> Iterator[bool]:
    """Hold the case's lock for the block, polling up to `wait` seconds; yields whether it was got.

    Inside a transaction the lock is transaction-scoped: it is released at
    commit, exactly when what was written under it becomes visible to the
    next holder. Outside one it is session-scoped and released on exit.
    """
    transactional = connection.in_atomic_block
    deadline = time.monotonic() + max(wait, 0.0)
    acquired = try_lock(LockKind.CASE_SUMMARY, case_id, transactional=transactional)
    while not acquired and time.monotonic() < deadline:
        time.sleep(min(_POLL_SECONDS, max(deadline - time.monotonic(), 0.0)))
        acquired = try_lock(LockKind.CASE_SUMMARY, case_id, transactional=transactional)
    try:
        yield acquired
    finally:
        if acquired and not transactional:
            unlock(LockKind.CASE_SUMMARY, case_id)
