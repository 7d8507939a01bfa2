"""Reading an import document's JSON safely: what the field rules in importer.py must never meet.

A field given twice in one object (json keeps the last silently), text that
PostgreSQL or UTF-8 cannot hold (NUL, unpaired surrogates), and nesting past
MAX_DEPTH are each reported with their JSON path, without recursion, and with
any odd text quoted escaped, so every message can be printed.
"""

from __future__ import annotations

import json
import re
from typing import Any

# The format nests six levels deep (document, cases, case, documents, document, pages); far
# deeper is never a firm's records, and past ~1000 the JSON parser itself gives up.
MAX_DEPTH = 32
SURROGATE_RE = re.compile("[\ud800-\udfff]")
PLAIN_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Fields(dict):  # type: ignore[type-arg]
    """A JSON object as parsed, remembering the names it gave more than once (json keeps the last silently)."""

    duplicates: list[str]


def json_object(pairs: list[tuple[str, Any]]) -> Fields:
    fields = Fields(pairs)
    seen: set[str] = set()
    fields.duplicates = [name for name, _ in pairs if name in seen or seen.add(name)]  # type: ignore[func-returns-value]
    return fields


def child_path(path: str, name: str) -> str:
    """The JSON path of field `name` under `path`: `a.b`, or `a["odd name"]` for a name that is no plain word."""
    if PLAIN_NAME_RE.match(name):
        return f"{path}.{name}" if path else name
    return f"{path}[{json.dumps(name)}]"


def bad_text(value: str) -> str | None:
    """Why a string cannot be stored as text (PostgreSQL refuses NUL; a lone surrogate is no Unicode), or None."""
    if "\x00" in value:
        return "holds a NUL character (\\u0000)"
    if SURROGATE_RE.search(value):
        return "holds an unpaired UTF-16 surrogate (\\ud800-\\udfff), which is not text"
    return None


def shape_errors(data: Any) -> list[str]:
    """Problems of the document's shape that no field rule may meet first: repeated names, text that is no
    text, nesting past MAX_DEPTH. Iterative, so no depth makes it recurse; messages quote odd text escaped."""
    errors: list[str] = []
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        here = path or "(document)"
        if isinstance(value, (dict, list)) and depth >= MAX_DEPTH:
            errors.append(f"{here}: nested deeper than {MAX_DEPTH} levels")
            continue
        if isinstance(value, dict):
            for name in getattr(value, "duplicates", ()):
                errors.append(f"{child_path(path, name)}: field {json.dumps(name)} given more than once")
            for name, item in value.items():
                problem = bad_text(name)
                if problem:
                    errors.append(f"{here}: field name {json.dumps(name)} {problem}")
                else:
                    stack.append((item, child_path(path, name), depth + 1))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value))
        elif isinstance(value, str):
            problem = bad_text(value)
            if problem:
                errors.append(f"{here}: {problem}")
    return sorted(errors)


_TOKEN_RE = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},:]')


def deep_path(text: str) -> str:
    """The JSON path where `text` first nests past MAX_DEPTH, found without parsing it (the parser recursed too far)."""
    stack: list[list[Any]] = []  # per open container: [is_object, key or index, expecting a key]
    for match in _TOKEN_RE.finditer(text):
        token = match.group()
        if token in ("{", "["):
            if len(stack) >= MAX_DEPTH:
                break
            stack.append([token == "{", None if token == "{" else 0, token == "{"])
        elif token in ("}", "]"):
            if stack:
                stack.pop()
        elif not stack:
            continue
        elif token == ",":
            top = stack[-1]
            if top[0]:
                top[2] = True
            else:
                top[1] += 1
        elif token == ":":
            stack[-1][2] = False
        elif stack[-1][0] and stack[-1][2]:
            try:
                stack[-1][1] = json.loads(token)
            except ValueError:
                stack[-1][1] = "?"
    path = ""
    for is_object, where, _ in stack:
        if is_object:
            path = child_path(path, where if isinstance(where, str) and not bad_text(where) else "?")
        else:
            path += f"[{where}]"
    return path or "(document)"
