"""SQL text and its parameters, kept together (`Stmt`), and built from named templates (`sql`).

`sql()` builds a statement from a template where `%(name)s` marks a value and
`{name}` a statement spliced in with its own parameters, all in the order the
text names them (the contract of Django's `as_sql`): no parameter list is put
in order by hand, and a statement is never separated from its parameters.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import connection

_TOKEN = re.compile(r"%\((?P<value>[a-z_][a-z0-9_]*)\)s|\{(?P<part>[a-z_][a-z0-9_]*)\}|%%|%s")
# What a template's text is made of, for `_compact`: a quoted literal, identifier or dollar-quoted body (kept as
# written), else a run of white space and comments.
_LEXEME = re.compile(
    r"""('(?:[^']|'')*'|"(?:[^"]|"")*"|\$(?P<tag>(?:[A-Za-z_]\w*)?)\$.*?\$(?P=tag)\$)|(?:\s+|--[^\n]*|/\*.*?\*/)+""",
    re.S,
)


def _compact(template: str) -> str:
    """`template` with each run of white space and comments outside quotes made one space.

    A statement is sent as text, every time: our templates are indented for people, and that indentation was
    a tenth of a search's statement. Shorter, it is split by psycopg once and for all (its cache keeps only
    statements of at most 4,096 bytes; a lawyer's search was 4,545, split again on every call)."""
    return _LEXEME.sub(lambda m: m.group(1) or " ", template)


@dataclass(frozen=True)
class Stmt:
    """SQL with `%s` placeholders and the parameters that fill them, in order."""

    sql: str
    params: tuple[Any, ...] = ()

    def rows(self) -> list[tuple[Any, ...]]:
        """Its rows, on a cursor of its own."""
        with connection.cursor() as cursor:
            return self.execute(cursor).fetchall()

    def execute(self, cursor: Any) -> Any:
        """Run it on `cursor` (and return the cursor, to fetch from or read `rowcount`)."""
        cursor.execute(self.sql, self.params)
        return cursor


def sql(template: str, /, **names: Any) -> Stmt:
    """The statement `template` says, with `names` filled in.

    `%(name)s` is a parameter: `names[name]`, bound by the driver. `{name}` is a
    statement spliced into the text: `names[name]` is a `Stmt` (its text and its
    parameters), or a template of its own, built with the same names. A bare
    `%s` is refused: a parameter is always named, so none can be given in the
    wrong place. `%%` stays a literal percent sign.
    """
    return _build(template, names, ())


@functools.lru_cache(maxsize=512)
def _parsed(template: str) -> tuple[tuple[str, str, str], ...]:
    """`template` as (text before, kind, name) steps, kind "value" or "part" ("" after the last): parsed once,
    compacted (`_compact`)."""
    template = _compact(template)
    steps: list[tuple[str, str, str]] = []
    last, before = 0, ""
    for token in _TOKEN.finditer(template):
        before += template[last : token.start()]
        last = token.end()
        if token.group() == "%%":
            before += "%%"
        elif token.group() == "%s":
            raise ValueError(f"an unnamed parameter at {template[max(0, token.start() - 40) : token.end()]!r}")
        else:
            kind = "value" if token["value"] is not None else "part"
            steps.append((before, kind, token[kind]))
            before = ""
    steps.append((before + template[last:], "", ""))
    return tuple(steps)


def _build(template: str, names: Mapping[str, Any], within: tuple[str, ...]) -> Stmt:
    text: list[str] = []
    params: list[Any] = []
    for before, kind, name in _parsed(template):
        text.append(before)
        if kind == "value":
            if name not in names:
                raise KeyError(f"no value for %({name})s")
            text.append("%s")
            params.append(names[name])
        elif kind == "part":
            if name not in names:
                raise KeyError(f"no statement for {{{name}}}")
            part = names[name]
            if isinstance(part, str):
                if name in within:
                    raise ValueError(f"{{{name}}} contains itself")
                part = _build(part, names, (*within, name))
            if not isinstance(part, Stmt):
                raise TypeError(f"{{{name}}} must be a Stmt or a template, not {type(part).__name__}")
            text.append(part.sql)
            params.extend(part.params)
    return Stmt("".join(text), tuple(params))
