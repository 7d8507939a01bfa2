"""Every PostgreSQL advisory lock the memory takes, by kind: one registry, one way to fold an id into a key.

Advisory locks share one key space per database with everything else that uses them, so each key's first
half names the memory's kind of lock (`LockKind`) and its second half the id (a case, a firm) folded into
an int4. Ids past 2**32 wrap around; a collision only makes two ids wait for each other, never mixes them.
"""

from __future__ import annotations

import enum

from django.db import DatabaseError, connection

from graph_memory.plumbing.stmt import Stmt, sql


class LockKind(enum.IntEnum):
    # Whoever holds it writes that case's summary (graph_memory.refresh.locks: nightly and on demand).
    CASE_SUMMARY = 0x474D5331  # "GMS1"
    # Graph writes of one firm, so an orphan sweep never races an insert that needs the node (graph.py).
    GRAPH_FIRM = 0x474D  # "GM"
    # One build of a firm's own HNSW index at a time (firm_indexes.py).
    FIRM_INDEX = 7_140_002
    # Writers of the sight's rows of holders in one bucket (sight.py: a row holds a node for several cases,
    # so writers of different cases meet on it; taken in bucket order, they never wait on each other in a circle).
    SIGHT_HOLDERS = 0x474D5348  # "GMSH"
    # One sealer of a firm's served-ledger chain at a time (served_chain.py); readers never take it.
    SERVED_LEDGER = 0x474D534C  # "GMSL"


def key(kind: LockKind, object_id: int) -> tuple[int, int]:
    """The two int4 halves of the lock's key."""
    return int(kind), (int(object_id) % 2**32) - 2**31


def _call(function: str, kind: LockKind, object_id: int) -> Stmt:
    """`SELECT function(key)`, for one of PostgreSQL's advisory lock functions."""
    first, second = key(kind, object_id)
    return sql(f"SELECT {function}(%(kind)s, %(object)s)", kind=first, object=second)


def try_lock(kind: LockKind, object_id: int, *, transactional: bool) -> bool:
    """Take the lock if it is free: until the transaction ends (`transactional`), else until `unlock`."""
    function = "pg_try_advisory_xact_lock" if transactional else "pg_try_advisory_lock"
    with connection.cursor() as cursor:
        return bool(_call(function, kind, object_id).execute(cursor).fetchone()[0])


def lock_for_transaction(kind: LockKind, object_id: int) -> None:
    """Wait for the lock and hold it until the transaction ends."""
    with connection.cursor() as cursor:
        _call("pg_advisory_xact_lock", kind, object_id).execute(cursor)


def unlock(kind: LockKind, object_id: int) -> None:
    """Release a session lock `try_lock` took; a broken connection has dropped it already."""
    try:
        with connection.cursor() as cursor:
            _call("pg_advisory_unlock", kind, object_id).execute(cursor)
    except DatabaseError:
        pass  # the server drops a session's locks with its connection
