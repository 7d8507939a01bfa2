"""What every summary writer shares: the interface, its result and error, and the output check.

A writer turns a context slice into content shaped like
`rulebook.OUTPUT_SCHEMA`. It never saves anything and never verifies: the
service does both. A writer that calls a model reports every HTTP attempt it
made (`ModelCall`), on success in `WriterResult.calls` and on failure in
`WriterError.calls`, so that each one is logged and paid for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

import jsonschema

from graph_memory.summaries import rulebook
from graph_memory.summaries.context import ContextSlice

# Rough sizes for budgeting output tokens: English prose runs about four
# characters a token; a source id ("document:spa-v3#p2") about ten tokens.
CHARS_PER_TOKEN = 4
ID_TOKENS = 10
# Keys, quotes, commas and brackets around each value.
PUNCTUATION_TOKENS = 4


@dataclass(frozen=True)
class ModelCall:
    """One HTTP request to a model: counts and short reasons only, never case text.

    `mode` is the response format asked for ("json_schema", "json_object+schema"
    or "json_object"); `server_error` is the server's own explanation of a
    failure, bounded and scrubbed of anything from the prompt; `estimated`
    marks token counts the writer estimated because the server reported none
    (a timeout, an answer without usage).
    """

    model: str
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: int = 0
    error: str = ""
    mode: str = ""
    server_error: str = ""
    estimated: bool = False


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

    @property
    def server_error(self) -> str:
        """The server's explanation of the call that failed the write (not of a refusal before it), if any."""
        return self.calls[-1].server_error if self.calls else ""


class Writer(Protocol):
    name: str
    model: str

    def write(self, context: ContextSlice) -> WriterResult: ...


def validate_content(content: Any) -> str | None:
    """None when `content` matches the output schema, else where it does not (never the value)."""
    # Built on each call from the schema as it is now (it is small, and the rulebook may change it).
    validator = jsonschema.Draft202012Validator(rulebook.OUTPUT_SCHEMA)
    error = next(iter(sorted(validator.iter_errors(content), key=lambda e: list(e.absolute_path))), None)
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "top level"
    return f"output does not match the schema at {where} ({error.validator})"


def max_output_tokens(schema: dict[str, Any] | None = None) -> int:
    """The most tokens a complete answer shaped like `schema` (default `rulebook.OUTPUT_SCHEMA`) can need.

    Every array full to its `maxItems`, every string at its `maxLength` or,
    without one, the length `rulebook.STRING_CHARS` gives its key (else a
    statement-length string, `rulebook.MAX_STATEMENT_CHARS`) under a key and an
    id-length one as an array item. An answer longer than
    this cannot be valid, so it is where a runaway generation is cut.
    """
    return max(1, math.ceil(_tokens(rulebook.OUTPUT_SCHEMA if schema is None else schema, key=None)))


def _tokens(node: dict[str, Any], *, key: str | None) -> float:
    kind = node.get("type")
    if kind == "object":
        properties = node.get("properties") or {}
        return PUNCTUATION_TOKENS + sum(
            len(name) / CHARS_PER_TOKEN + PUNCTUATION_TOKENS + _tokens(value, key=name)
            for name, value in properties.items()
        )
    if kind == "array":
        items = node.get("items") or {}
        count = int(node.get("maxItems", rulebook.MAX_POINTS_PER_SECTION))
        return PUNCTUATION_TOKENS + count * (PUNCTUATION_TOKENS + _tokens(items, key=None))
    if kind == "string":
        if "maxLength" in node:
            return int(node["maxLength"]) / CHARS_PER_TOKEN
        if key is None:
            return ID_TOKENS
        return rulebook.STRING_CHARS.get(key, rulebook.MAX_STATEMENT_CHARS) / CHARS_PER_TOKEN
    return PUNCTUATION_TOKENS
