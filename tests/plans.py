"""Plans of the statements a call sends: what the plan-shape tests and bench/bench_search_planning.py read.

`sent(call)` records every statement `call` runs (SQL and parameters, as the
driver got them); `explained(sql, params)` is PostgreSQL's answer to `EXPLAIN (ANALYZE,
FORMAT JSON)` of one (other options on request); `analyzed(statement)` its top plan
node; `nodes(plan)` walks a plan's nodes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from django.db import connection


def sent(call: Callable[[], Any]) -> list[tuple[str, Any]]:
    """The SQL and parameters of every statement `call` runs."""
    seen: list[tuple[str, Any]] = []

    def record(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        seen.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        call()
    return seen


def explained(sql: str, params: Any = None, *, options: str = "ANALYZE", cursor: Any = None) -> dict[str, Any]:
    """PostgreSQL's whole answer to `EXPLAIN (<options>, FORMAT JSON)` of one statement: its "Plan" (the top
    node), "Planning Time" and "Execution Time" (with ANALYZE). On `cursor` when given (inside the caller's
    transaction, after its SET LOCALs), else on a cursor of its own."""
    if cursor is None:
        with connection.cursor() as own:
            return explained(sql, params, options=options, cursor=own)
    cursor.execute(f"EXPLAIN ({options}, FORMAT JSON) " + sql, params)
    found = cursor.fetchone()[0]
    return (json.loads(found) if isinstance(found, str) else found)[0]


def analyzed(statement: tuple[str, Any]) -> dict[str, Any]:
    """The top node of the statement's plan, run again under EXPLAIN (ANALYZE)."""
    return explained(*statement)["Plan"]


def nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The plan node and every node under it, depth first."""
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)
