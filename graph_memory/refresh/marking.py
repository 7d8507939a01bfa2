"""Noticing a change: flip a case's stale flag with one SQL statement.

This runs inside the transaction that changed the host record (signal
receivers call it directly), so the flag commits or rolls back with the
change itself. It never calls a model and never reads before it writes.
The same statement moves each flagged case's last activity
(summaries/activity.py), which the stale flag's time is one of the clocks of.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from django.db import connection
from django.db.models import NOT_PROVIDED, QuerySet

from graph_memory.adapter import case_firm_column, case_model, queryset_sql
from graph_memory.consent.exclusions import excluded_sql
from graph_memory.models import CaseSummary
from graph_memory.plumbing.stmt import Stmt, sql
from graph_memory.summaries import activity


@functools.cache
def _insert_columns() -> tuple[list[str], list[str], dict[str, Any]]:
    """Column names, SELECT expressions and their named values (sql()) for a brand-new summary row.

    Built once from the model so that a field added later gets its Python
    default (Django defaults are not database defaults).
    """
    case_table = case_model()._meta
    computed = {
        "case": f"c.{case_table.pk.column}",
        "firm": f"c.{case_firm_column()}",
        "stale": "TRUE",
        "stale_since": "now()",
        "generation": "1",
    }
    columns: list[str] = []
    expressions: list[str] = []
    defaults: dict[str, Any] = {}
    for field in CaseSummary._meta.concrete_fields:
        if field.primary_key:
            continue
        if field.name in computed:
            expression = computed[field.name]
        elif field.null and field.default is NOT_PROVIDED:
            continue  # left NULL
        else:
            name = f"default_{field.column}"
            expression = f"%({name})s"
            defaults[name] = field.get_db_prep_save(field.get_default(), connection)
        columns.append(connection.ops.quote_name(field.column))
        expressions.append(expression)
    return columns, expressions, defaults


def mark_stale(*, case_ids: Iterable[int] | QuerySet[Any]) -> int:
    """Flag every given case's summary as out of date. One SQL statement, any number of cases.

    `case_ids` is an iterable of case primary keys, or a QuerySet of cases
    (or of their pks) that is inlined as a subquery. Each flagged summary's
    `generation` goes up by one; `stale_since` keeps the time of the oldest
    unrewritten change. A case without a summary row gets one (empty text,
    firm taken from the case). Ids of cases that do not exist are ignored, and so are
    cases excluded from the memory (consent): they get no summary row at all.
    Each flagged case's last activity is recomputed in the same statement.
    Returns the number of summary rows inserted or updated.
    """
    case_meta = case_model()._meta
    pk_column = f"c.{case_meta.pk.column}"
    if isinstance(case_ids, QuerySet):
        where = f"{pk_column} IN ({{cases}})"
        named: dict[str, Any] = {"cases": Stmt(*queryset_sql(case_ids.values("pk")))}
    else:
        ids = sorted({int(pk) for pk in case_ids})
        if not ids:
            return 0
        where = f"{pk_column} = ANY(%(ids)s::bigint[])"
        named = {"ids": ids}
    columns, expressions, defaults = _insert_columns()
    table = connection.ops.quote_name(CaseSummary._meta.db_table)
    case_column = connection.ops.quote_name(CaseSummary._meta.get_field("case").column)
    # ON CONFLICT makes insert-or-update one atomic statement: two concurrent
    # marks of one case both land (generation +2) without a read-then-write
    # race. ORDER BY takes row locks in one order, so two transactions marking
    # overlapping sets cannot deadlock. On the right of SET, bare column names
    # are the existing row's values. The activity's rows are written after the
    # summaries', in the same order, as every other writer of both does.
    q = connection.ops.quote_name
    written, since = (q(CaseSummary._meta.get_field(f).column) for f in ("written_at", "stale_since"))
    statement = sql(
        f"WITH marked AS (INSERT INTO {table} ({', '.join(columns)}) "
        f"SELECT {', '.join(expressions)} FROM {q(case_meta.db_table)} c "
        f"WHERE {where} AND NOT {excluded_sql('c')} ORDER BY {pk_column} "
        f"ON CONFLICT ({case_column}) DO UPDATE SET "
        f"stale = TRUE, "
        f"generation = {table}.generation + 1, "
        f"stale_since = CASE WHEN {table}.stale THEN COALESCE({table}.stale_since, now()) ELSE now() END "
        f"RETURNING {case_column} AS case_id, {written} AS written_at, {since} AS stale_since), "
        f"touched AS ({activity.MARKED}) "
        "SELECT count(*) FROM marked",
        hosts=activity.host_clocks(), **defaults, **named,
    )  # fmt: skip
    with connection.cursor() as cursor:
        return int(statement.execute(cursor).fetchone()[0])
