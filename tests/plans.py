"""Plans of the statements a call sends: what the plan-shape tests and bench/bench_search_planning.py read.

`sent(call)` records every statement `call` runs (SQL and parameters, as the
driver got them); `analyzed(statement)` runs one again under `EXPLAIN (ANALYZE,
FORMAT JSON)` and returns its top plan node; `nodes(plan)` walks a plan's nodes.
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


def analyzed(statement: tuple[str, Any]) -> dict[str, Any]:
    """The top node of the statement's plan, run again under EXPLAIN (ANALYZE)."""
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + statement[0], statement[1])
        explained = cursor.fetchone()[0]
    return (json.loads(explained) if isinstance(explained, str) else explained)[0]["Plan"]


def nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The plan node and every node under it, depth first."""
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)
