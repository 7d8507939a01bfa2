"""The consent rule: is a case kept out of the memory? One SQL condition, evaluated when asked.

A case is excluded when a `MemoryExclusion` of its firm names it, or names its
client (through the adapter's `case_client_field`). Evaluated against the
case's row each time rather than copied per case, so a case opened later for
an excluded client, or moved to one, is excluded from its first statement on.
Every writer of derived memory puts the condition in its own statement
(`refresh.marking.mark_stale`, `documents.index.mark_documents_stale`), and
the writers that start from a case id ask `case_excluded` first.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection

from graph_memory.adapter import case_firm_column, case_model, get_adapter
from graph_memory.models import MemoryExclusion
from graph_memory.plumbing.stmt import sql


class MemoryExcluded(Exception):
    """The case (or its client) is excluded from the memory: nothing of it is derived or filed."""

    def __init__(
        self, message: str = "This case is excluded from the memory: nothing is filed or derived from it."
    ) -> None:
        super().__init__(message)


def excluded_sql(alias: str) -> str:
    """An SQL condition, true when the case row `alias` (the case table) is excluded. No parameters.

    Probes the exclusion table's unique index by (firm, kind, ref): one or two index lookups a case.
    """
    q = connection.ops.quote_name
    meta = case_model()._meta
    adapter = get_adapter()
    firm = f"{alias}.{q(case_firm_column())}"
    table = q(MemoryExclusion._meta.db_table)
    refs = [f"('case', {alias}.{q(meta.pk.column)})"]
    if adapter.case_client_field:
        refs.append(f"('client', {alias}.{q(meta.get_field(adapter.case_client_field).column)})")
    return f"EXISTS (SELECT 1 FROM {table} e WHERE e.firm_id = {firm} AND (e.kind, e.ref_id) IN ({', '.join(refs)}))"


def case_excluded(*, case_id: int) -> bool:
    """Whether case `case_id` is excluded from the memory (False for a case that does not exist). One query."""
    meta = case_model()._meta
    statement = sql(
        f"SELECT {excluded_sql('c')} FROM {connection.ops.quote_name(meta.db_table)} c "
        f"WHERE c.{connection.ops.quote_name(meta.pk.column)} = %(case)s",
        case=int(case_id),
    )
    with connection.cursor() as cursor:
        row = statement.execute(cursor).fetchone()
    return bool(row and row[0])


def excluded_case_ids(*, firm_id: int, case_ids: Iterable[int] | None = None) -> set[int]:
    """The firm's excluded cases (among `case_ids` if given). One query, filtered on the firm."""
    q = connection.ops.quote_name
    meta = case_model()._meta
    firm_column = q(case_firm_column())
    pk = f"c.{q(meta.pk.column)}"
    among = "" if case_ids is None else f" AND {pk} = ANY(%(cases)s::bigint[])"
    statement = sql(
        f"SELECT {pk} FROM {q(meta.db_table)} c WHERE c.{firm_column} = %(firm)s AND {excluded_sql('c')}{among}",
        firm=int(firm_id), cases=None if case_ids is None else sorted({int(c) for c in case_ids}),
    )
    return {int(row[0]) for row in statement.rows()}
