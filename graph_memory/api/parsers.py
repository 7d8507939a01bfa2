"""The one JSON parser of the write endpoints: strict, bounded, and every refusal in the API's error shape.

DRF's JSONParser takes the last of two equal keys (`{"text": "a", "text":
"b"}` files "b"; the importer refuses such a document), and a body nested
100,000 levels deep makes `json.loads` raise RecursionError, a 500. Here a
repeated key is `invalid` naming it, nesting deeper than BODY_MAX_DEPTH is
`invalid`, and a body over Django's DATA_UPLOAD_MAX_MEMORY_SIZE is a 413
(`RequestDataTooBig`, which errors.py answers; DRF hands this parser the raw
stream, so the limit is read here, never more than it plus one byte). All before the case in the path is looked up, so these answers are
the same for a hidden case and one that does not exist.
"""

from __future__ import annotations

import codecs
import json
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from rest_framework import exceptions, renderers
from rest_framework.parsers import BaseParser

# The deepest body an endpoint takes is a note's origin's message ids: 3 levels. Far below what
# json.loads itself can descend, so the limit is ours, not Python's stack.
BODY_MAX_DEPTH = 8


class DuplicateKey(exceptions.ValidationError):
    def __init__(self, key: str) -> None:
        super().__init__({key: ["This key appears twice in the JSON body; send it once."]})


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for key, value in pairs:
        if key in body:
            raise DuplicateKey(key)
        body[key] = value
    return body


def _refuse_constant(name: str) -> None:
    raise exceptions.ParseError(f"JSON parse error - {name} is not a JSON value.")


def _depth(value: Any) -> int:
    """How deeply `value` nests lists and objects, without recursion (a scalar is 0)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, level + 1)
            stack.extend((child, level + 1) for child in item)
    return deepest


def too_deep() -> exceptions.ValidationError:
    return exceptions.ValidationError(f"The JSON body nests deeper than {BODY_MAX_DEPTH} levels.")


class StrictJSONParser(BaseParser):
    """application/json, refusing repeated keys, NaN and Infinity, and nesting deeper than BODY_MAX_DEPTH."""

    media_type = "application/json"
    renderer_class = renderers.JSONRenderer

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict[str, Any] | None = None) -> Any:
        encoding = (parser_context or {}).get("encoding", "utf-8")
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raw = stream.read() if limit is None else stream.read(limit + 1)
        if limit is not None and len(raw) > limit:
            raise RequestDataTooBig("Request body exceeded settings.DATA_UPLOAD_MAX_MEMORY_SIZE.")
        try:
            text = codecs.decode(raw, encoding)
        except (UnicodeDecodeError, LookupError) as exc:
            raise exceptions.ParseError(f"JSON parse error - the body is not {encoding} text.") from exc
        try:
            data = json.loads(text, object_pairs_hook=_refuse_duplicates, parse_constant=_refuse_constant)
        except RecursionError:
            # json.loads descends one C stack frame per level: far past BODY_MAX_DEPTH, it gives up here.
            raise too_deep() from None
        except ValueError as exc:
            raise exceptions.ParseError(f"JSON parse error - {exc}") from exc
        if _depth(data) > BODY_MAX_DEPTH:
            raise too_deep()
        return data
