"""One PostgreSQL advisory lock per case: whoever holds it is writing that case's summary.

The nightly refresh and on-demand generation both take it, so a case is
never written by two processes at once and two concurrent "write it now"
requests cost one model call.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import DatabaseError, connection

# Advisory locks are one key space per database; a fixed first half ("GMS1")
# keeps ours apart from anyone else's.
_NAMESPACE = 0x474D5331
_POLL_SECONDS = 0.05


def _key(case_id: int) -> tuple[int, int]:
    # The two-int form takes int4s. Case ids past 2**32 wrap around; a
    # collision only makes two cases wait for each other, never mixes them.
    return _NAMESPACE, (int(case_id) % 2**32) - 2**31


def _try(case_id: int, *, transactional: bool) -> bool:
    function = "pg_try_advisory_xact_lock" if transactional else "pg_try_advisory_lock"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {function}(%s, %s)", _key(case_id))
        return bool(cursor.fetchone()[0])


def _release(case_id: int) -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", _key(case_id))
    except DatabaseError:
        # The connection is broken; the server drops its session locks with it.
        pass


@contextmanager
def case_lock(case_id: int, *, wait: float = 0.0) -> Iterator[bool]:
    """Hold the case's lock for the block, polling up to `wait` seconds; yields whether it was got.

    Inside a transaction the lock is transaction-scoped: it is released at
    commit, exactly when what was written under it becomes visible to the
    next holder. Outside one it is session-scoped and released on exit.
    """
    transactional = connection.in_atomic_block
    deadline = time.monotonic() + max(wait, 0.0)
    acquired = _try(case_id, transactional=transactional)
    while not acquired and time.monotonic() < deadline:
        time.sleep(min(_POLL_SECONDS, max(deadline - time.monotonic(), 0.0)))
        acquired = _try(case_id, transactional=transactional)
    try:
        yield acquired
    finally:
        if acquired and not transactional:
            _release(case_id)


# The served ledger's sealer, per firm ("GMSL"): one sealer writes a firm's chain at a time.
_LEDGER_NAMESPACE = 0x474D534C


def try_firm_ledger_lock(firm_id: int) -> bool:
    """Take the firm's served-ledger lock for the current transaction (released at commit); False if held.

    Only the sealer takes it: readers append unsealed rows and never wait on it.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", (_LEDGER_NAMESPACE, (int(firm_id) % 2**32) - 2**31))
        return bool(cursor.fetchone()[0])
