"""Each large firm's own HNSW index over its summary vectors: a partial index, `WHERE firm_id = N`.

The one HNSW index over every firm's vectors serves a firm's search poorly
once several firms share it: a walk filtered to one firm passes over the
others' vectors, so ten exact in-firm neighbours need a long candidate list
(hnsw.ef_search = SEARCH_EF_SEARCH) and most of its work is thrown away. A
firm with its own index walks only its own vectors: recall 1.0 with a list a
third as long (SEARCH_FIRM_EF_SEARCH; docs/BENCHMARKS.md has both).

PostgreSQL picks the index itself: the search statement says `firm_id = N`
with N written inline (Django binds parameters on the client), which implies
the index's predicate, and the smaller index costs less. Nothing else names
it. A firm gets one once it holds SEARCH_FIRM_INDEX_MIN vectors, and loses it
when it falls below half of that or is deleted (so a firm at the line does not
build and drop by turns). `ensure_search_indexes` builds them CONCURRENTLY: writes go on
while it runs. It is called after each firm's nightly refresh and by
`manage.py search_indexes`. A build that fails leaves an invalid index, which
PostgreSQL never uses; the next run drops it and builds again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from django.db import DatabaseError, connection

from graph_memory import conf
from graph_memory.models import CaseSummary
from graph_memory.plumbing import locks
from graph_memory.plumbing.stmt import Stmt, sql

logger = logging.getLogger(__name__)

S = CaseSummary._meta.db_table
PREFIX = "gm_summary_hnsw_firm_"
# The graph's build settings. A denser build than the shared index's (ef_construction 64): the
# firm's search then reaches recall 1.0 with a shorter candidate list (bench/bench_search.py).
M, EF_CONSTRUCTION = 16, 200


def index_name(firm_id: int) -> str:
    return f"{PREFIX}{int(firm_id)}"


def exists_statement(firm_id: int) -> Stmt:
    """One boolean: whether firm `firm_id` has a valid index of its own."""
    return sql(
        "coalesce((SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass(%(index)s) "
        f"AND i.indrelid = '{S}'::regclass), false)",
        index=index_name(firm_id),
    )


@dataclass
class IndexChanges:
    built: list[int] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)
    busy: list[int] = field(default_factory=list)  # another process was building it
    failed: list[int] = field(default_factory=list)  # the build failed (logged); the next run tries again

    def as_dict(self) -> dict[str, list[int]]:
        return asdict(self)


class InsideTransaction(RuntimeError):
    """`ensure_search_indexes` was called inside a transaction, where it cannot build concurrently."""


def _vector_counts(firm_id: int | None) -> dict[int, int]:
    where = "" if firm_id is None else "AND firm_id = %(firm)s"
    counts = sql(
        f"SELECT firm_id, count(*) FROM {S} WHERE embedding IS NOT NULL {where} GROUP BY firm_id", firm=firm_id
    )
    return dict(counts.rows())


def existing() -> dict[int, bool]:
    """{firm id: whether its index is valid} for every firm index on the summary table."""
    found = sql(
        "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        f"WHERE i.indrelid = '{S}'::regclass AND c.relname LIKE %(pattern)s",
        pattern=PREFIX.replace("_", r"\_") + "%",
    ).rows()
    return {int(name[len(PREFIX):]): valid for name, valid in found}


def ensure_search_indexes(*, firm_id: int | None = None, progress: Callable[[str], None] | None = None) -> IndexChanges:
    """Build the index of every firm (or of `firm_id`) that should have one and lacks it, rebuild an
    invalid one, and drop those of firms below half the threshold or gone. Returns what it did.

    A firm whose build fails is logged and listed in `failed`; the others go on. Must run outside a
    transaction (CREATE INDEX CONCURRENTLY cannot run inside one): raises InsideTransaction inside `atomic()`.
    """
    if connection.in_atomic_block:
        raise InsideTransaction("ensure_search_indexes must run outside a transaction (it builds indexes concurrently)")
    minimum = int(conf.get("SEARCH_FIRM_INDEX_MIN"))
    counts = _vector_counts(firm_id)
    have = existing()
    if firm_id is not None:
        have = {f: v for f, v in have.items() if f == firm_id}
        counts.setdefault(firm_id, 0)
    changes = IndexChanges()
    for firm in sorted(set(counts) | set(have)):
        count = counts.get(firm, 0)
        wanted = count >= minimum or (firm in have and count >= minimum / 2)
        if not wanted and firm not in have:
            continue
        if firm in have and have[firm] and wanted:
            changes.kept.append(firm)
            continue
        if progress is not None:
            progress(f"firm {firm}: {count:,} vectors")
        if not locks.try_lock(locks.LockKind.FIRM_INDEX, firm, transactional=False):
            changes.busy.append(firm)
            continue
        with connection.cursor() as cursor:
            try:
                state = existing().get(firm)  # again, under the lock: another run may just have built it
                if state and wanted:
                    changes.kept.append(firm)
                    continue
                if state is not None:  # invalid (a failed build), or no longer wanted
                    cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {index_name(firm)}")
                    if not wanted:
                        changes.dropped.append(firm)
                        logger.info("search index of firm %s dropped (%d vectors)", firm, count)
                        continue
                cursor.execute(
                    f"CREATE INDEX CONCURRENTLY {index_name(firm)} ON {S} "
                    f"USING hnsw (embedding vector_cosine_ops) WITH (m = {M}, ef_construction = {EF_CONSTRUCTION}) "
                    f"WHERE firm_id = {int(firm)}"
                )
                changes.built.append(firm)
                logger.info("search index of firm %s built (%d vectors)", firm, count)
            except DatabaseError:
                # One firm's failed build (an invalid index is left, never used) does not stop the others.
                logger.exception("search index of firm %s: the build failed", firm)
                changes.failed.append(firm)
            finally:
                locks.unlock(locks.LockKind.FIRM_INDEX, firm)
    return changes
