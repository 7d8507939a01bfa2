"""The three model calls of long documents: index a batch of pages, route a question, answer from pages.

Each is one structured-output request through the summary writer's client
(`OpenAIWriter.complete_json`: the same response-format ladder, remembered per
server, the same bounded retries, temperature 0, every HTTP attempt reported
so it is logged as an AICall). Nothing here trusts what comes back: the
shapes are validated here, terms and quotes are checked literally by the
callers, section ids against the index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jsonschema

from graph_memory import conf
from graph_memory.summaries.base import WriterResult, max_output_tokens

INDEX_PROMPT = (
    "You build a routing catalogue of a long legal document, never a summary. For the pages given, list the "
    "sections they contain (a heading, a numbered clause or article, a schedule), each with its first and last "
    "page, the terms that literally appear in those pages (defined terms, names, clause headings, distinctive "
    "phrases, copied exactly as written), and one short `covers` line saying which topics it discusses. Make no "
    "claims and draw no conclusions. Use only the page numbers shown. Answer with JSON only."
)
ROUTER_PROMPT = (
    "You route a lawyer's question to the sections of the case's documents that can answer it. Below is the "
    "catalogue of those documents: for each section its id in square brackets, title, pages, terms and what it "
    "covers. Return the ids of the one to three sections most likely to hold the answer, best first, exactly as "
    "written in the brackets. Answer with JSON only."
)
ANSWER_PROMPT = (
    "Answer the lawyer's question only with direct quotes from the pages below, copied verbatim (no paraphrase, "
    "no ellipsis, no words of your own), each with the document key and page number shown in its page header. "
    "Quote the clause itself. If the pages do not answer the question, return no quotes. Answer with JSON only."
)
TERM_MAX = 80
COVERS_MAX = 240

INDEX_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sections": {
            "type": "array",
            "maxItems": 30,
            "items": {
                "type": "object",
                "properties": {
                    "title": {"type": "string", "maxLength": 120},
                    "first_page": {"type": "integer"},
                    "last_page": {"type": "integer"},
                    "terms": {"type": "array", "maxItems": 40, "items": {"type": "string", "maxLength": TERM_MAX}},
                    "covers": {"type": "string", "maxLength": COVERS_MAX},
                },
                "required": ["title", "first_page", "last_page", "terms", "covers"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["sections"],
    "additionalProperties": False,
}
ROUTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"sections": {"type": "array", "maxItems": 3, "items": {"type": "string", "maxLength": 120}}},
    "required": ["sections"],
    "additionalProperties": False,
}


def answer_schema(max_quotes: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "quotes": {
                "type": "array",
                "maxItems": max_quotes,
                "items": {
                    "type": "object",
                    "properties": {
                        "document": {"type": "string", "maxLength": 200},
                        "page": {"type": "integer"},
                        "text": {"type": "string", "maxLength": 1200},
                    },
                    "required": ["document", "page", "text"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["quotes"],
        "additionalProperties": False,
    }


def _validator(schema: dict[str, Any]) -> Any:
    validator = jsonschema.Draft202012Validator(schema)

    def validate(content: Any) -> str | None:
        error = next(iter(sorted(validator.iter_errors(content), key=lambda e: list(e.absolute_path))), None)
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path) or "top level"
        return f"output does not match the schema at {where} ({error.validator})"

    return validate


def _messages(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _pages_text(pages: Sequence[tuple[str, int, str]]) -> str:
    return "\n\n".join(f"=== document {key}, page {number} ===\n{text}" for key, number, text in pages)


def _max_tokens(schema: dict[str, Any]) -> int:
    configured = conf.get("OPENAI_MAX_TOKENS")
    return int(configured) if configured not in (None, "") else max_output_tokens(schema)


def index_batch(writer: Any, *, key: str, pages: Sequence[tuple[int, str]]) -> WriterResult:
    """Sections the model proposes for these (page number, text) pairs, each page cut to DOCUMENT_PAGE_MAX_CHARS."""
    cut = int(conf.get("DOCUMENT_PAGE_MAX_CHARS"))
    text = _pages_text([(key, number, page[:cut]) for number, page in pages])
    return writer.complete_json(
        _messages(INDEX_PROMPT, text), max_tokens=_max_tokens(INDEX_SCHEMA), case_text=text,
        schema=("document_index", INDEX_SCHEMA), validate=_validator(INDEX_SCHEMA),
    )  # fmt: skip


def route(writer: Any, *, catalogue: str, question: str) -> WriterResult:
    user = f"Catalogue:\n{catalogue}\n\nQuestion: {question}"
    return writer.complete_json(
        _messages(ROUTER_PROMPT, user), max_tokens=_max_tokens(ROUTER_SCHEMA), case_text=catalogue,
        schema=("document_route", ROUTER_SCHEMA), validate=_validator(ROUTER_SCHEMA),
    )  # fmt: skip


def answer(writer: Any, *, pages: Sequence[tuple[str, int, str]], question: str, max_quotes: int) -> WriterResult:
    text = _pages_text(pages)
    schema = answer_schema(max_quotes)
    user = f"{text}\n\nQuestion: {question}"
    return writer.complete_json(
        _messages(ANSWER_PROMPT, user), max_tokens=_max_tokens(schema), case_text=text,
        schema=("document_answer", schema), validate=_validator(schema),
    )  # fmt: skip


