"""What every summary writer shares: the interface, its result and error, and the output check.

A writer turns a context slice into content shaped like
`rulebook.OUTPUT_SCHEMA`. It never saves anything and never verifies: the
service does both. A writer that calls a model reports every call it made
(`ModelCall`), on success in `WriterResult.calls` and on failure in
`WriterError.calls`, so that each one is logged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import jsonschema

from graph_memory.summaries import rulebook
from graph_memory.summaries.context import ContextSlice


@dataclass(frozen=True)
class ModelCall:
    """One request to a model: counts only, never text."""

    model: str
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: int = 0
    error: str = ""


@dataclass(frozen=True)
class WriterResult:
    content: dict[str, Any]
    tokens_in: int = 0
    tokens_out: int = 0
    calls: tuple[ModelCall, ...] = ()


class WriterError(Exception):
    """The writer produced nothing usable. `reason` is short and holds no case text."""

    def __init__(self, reason: str, *, calls: tuple[ModelCall, ...] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.calls = calls


class Writer(Protocol):
    name: str
    model: str

    def write(self, context: ContextSlice) -> WriterResult: ...


_VALIDATOR = jsonschema.Draft202012Validator(rulebook.OUTPUT_SCHEMA)


def validate_content(content: Any) -> str | None:
    """None when `content` matches the output schema, else where it does not (never the value)."""
    error = next(iter(sorted(_VALIDATOR.iter_errors(content), key=lambda e: list(e.absolute_path))), None)
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "top level"
    return f"output does not match the schema at {where} ({error.validator})"
