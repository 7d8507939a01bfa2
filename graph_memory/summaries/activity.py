"""When each case was last active (`CaseActivity`), kept current by the writes that move its clocks.

A case's last activity is the latest of three clocks: the host's (the adapter's `case_activity`, when
its header last changed), its summary's `written_at`, and its `stale_since` (a record changed since the
summary). The memory index lists a viewer's cases in that order (briefs order cases by the same three).
Kept in one indexed column, each row recomputed from all three clocks whenever one of them moves, in the
statement or the transaction that moves it:

- a case flagged stale: `refresh.marking.mark_stale`, inside its one statement (`MARKED`);
- a summary saved: `summaries.rewrite`, in the save's transaction (`activity_touch`);
- a case excluded from the memory: `consent.service` (its summary goes; the host's clock is left);
- a case saved: the receivers call `activity_touch` on every save of the case model, which is when
  an `auto_now` clock moves (`receivers.py`; a failure is recorded and redone by the nightly run),
  unless the save flagged the case's summary stale, whose statement moved it already.

What the receivers never hear (cases bulk-created, a clock moved by `QuerySet.update` or raw SQL) is
caught up by `activity_rebuild`, which each firm's nightly run calls before it claims a case, as the
migration that made the table did for every firm. Until then such a case is counted by the index but may be missing
from, or out of place in, the order of a viewer past VISIBLE_FIRST_MAX cases (a smaller viewer's cases
are sorted by their clocks themselves).

Not a trigger on the host's table: the host's clock is an expression the adapter gives over the case
model (a column, or more than one, or a subquery), which Django compiles into a statement but a
trigger would need as PL/pgSQL per host, with one more object on a host table to install, remove and
keep in step (the lifecycle wall/triggers.py gives the sight's). Every save of a case through Django
reaches the receivers; the paths past them (`bulk_create`, `QuerySet.update`, raw SQL) are the ones the
nightly run is for, as they are for the stale flags and the map.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from django.db import connection
from django.db.models import FilteredRelation, Q, QuerySet
from django.db.models.functions import Greatest

from graph_memory.adapter import MemoryAdapter, case_firm_attname, case_model, firm_cases, get_adapter, queryset_sql
from graph_memory.models import CaseActivity
from graph_memory.plumbing.stmt import Stmt, sql

A = CaseActivity._meta.db_table

# Rows `k(id, firm, active)` into the table: a row per case, rewritten only where the firm or the time moved
# (in case id order, so two statements touching overlapping cases lock their rows in one order).
_UPSERT = f"""
INSERT INTO {A} AS a (case_id, firm_id, active_at)
SELECT k.id, k.firm, k.active FROM ({{clocks}}) AS k(id, firm, active) ORDER BY k.id
ON CONFLICT (case_id) DO UPDATE SET firm_id = EXCLUDED.firm_id, active_at = EXCLUDED.active_at
WHERE (a.firm_id, a.active_at) IS DISTINCT FROM (EXCLUDED.firm_id, EXCLUDED.active_at)
"""

# For `mark_stale`'s statement: the cases it flagged, from its CTE `marked` (case_id, written_at, stale_since:
# the summary rows as it left them, which another part of the same statement cannot read from the table), with
# the host's clock read per flagged case (LATERAL, OFFSET 0: one probe of the case by its key each, never a scan
# of the host's cases). Names: `hosts` (`host_clocks()`).
MARKED = _UPSERT.replace(
    "{clocks}",
    "SELECT m.case_id, h.firm, GREATEST(h.active, m.written_at, m.stale_since) FROM marked m "
    "CROSS JOIN LATERAL (SELECT h.firm, h.active FROM ({hosts}) AS h(id, firm, active) WHERE h.id = m.case_id OFFSET 0) h",
)


def clocks(cases: QuerySet[Any], *, firm_id: int | None = None) -> Stmt:
    """(id, firm id, last activity) of each case of `cases` (a QuerySet of the case model), from its three clocks.

    With `firm_id`, the summaries are joined among that firm's only (a scan of a firm's cases then reads its
    summaries, not every firm's)."""
    summary = Q(memory_summary__firm_id=firm_id) if firm_id is not None else Q()
    rows = (
        cases.order_by()
        .annotate(gm_summary=FilteredRelation("memory_summary", condition=summary))
        .annotate(gm_active=Greatest(get_adapter().case_activity(), "gm_summary__written_at", "gm_summary__stale_since"))
    )
    return Stmt(*queryset_sql(rows.values_list("pk", case_firm_attname(), "gm_active")))


# Every case's clocks as statements to probe by id, compiled once per adapter (one per process and setting):
# compiling them from the ORM cost more than the probes of a small viewer's index, or of one marked case.


@functools.cache
def _every_clock(adapter: MemoryAdapter) -> Stmt:
    return clocks(case_model().objects.all())


@functools.cache
def _host_clocks(adapter: MemoryAdapter) -> Stmt:
    rows = case_model().objects.order_by().annotate(gm_host=adapter.case_activity())
    return Stmt(*queryset_sql(rows.values_list("pk", case_firm_attname(), "gm_host")))


def every_clock() -> Stmt:
    """Every case's (id, firm id, last activity) from its three clocks, to probe by id (the memory index)."""
    return _every_clock(get_adapter())


def host_clocks() -> Stmt:
    """Every case's (id, firm id, the host's clock), to probe by id (`MARKED`)."""
    return _host_clocks(get_adapter())


def _write(statement: Stmt) -> int:
    with connection.cursor() as cursor:
        return statement.execute(cursor).rowcount


def activity_touch(*, case_ids: Iterable[int] | QuerySet[Any]) -> int:
    """Recompute these cases' last activity from their clocks, making a row for a case that has none.

    `case_ids`: case primary keys, or a QuerySet of cases (inlined). Ids of cases that do not exist are
    ignored. One statement; returns the rows written (a row whose time did not move is not)."""
    model = case_model()
    if isinstance(case_ids, QuerySet):
        cases = model.objects.filter(pk__in=case_ids.values("pk"))
    else:
        ids = sorted({int(pk) for pk in case_ids})
        if not ids:
            return 0
        cases = model.objects.filter(pk__in=ids)
    return _write(sql(_UPSERT, clocks=clocks(cases)))


def activity_rebuild(*, firm_id: int) -> int:
    """Every case of the firm's last activity, recomputed from its clocks: what the receivers did not hear
    (cases bulk-created, clocks moved past Django's saves) caught up. One statement, filtered on the firm;
    returns the rows written."""
    return _write(sql(_UPSERT, clocks=clocks(firm_cases(firm_id), firm_id=firm_id)))

