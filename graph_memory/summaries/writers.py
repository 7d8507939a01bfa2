"""Summary writers behind one interface: a model behind the OpenAI API, or no model at all.

A writer turns a context slice into content shaped like
`rulebook.OUTPUT_SCHEMA`. It never saves anything and never verifies: the
service does both. A writer that calls a model reports every call it made
(`ModelCall`), on success in `WriterResult.calls` and on failure in
`WriterError.calls`, so that each one is logged.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, replace
from typing import Any, Protocol

import jsonschema
import openai
from django.core.exceptions import ImproperlyConfigured

from graph_memory import conf
from graph_memory.summaries import rulebook
from graph_memory.summaries.context import ContextSlice, clip
from graph_memory.summaries.verify import extract_facts


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


def _rejects_json_schema(exc: openai.APIStatusError) -> bool:
    """A 4xx that complains about response_format / json_schema (llama.cpp's server, older vLLM...)."""
    if not 400 <= exc.status_code < 500 or exc.status_code in (401, 403, 404, 429):
        return False
    text = f"{exc.message} {exc.body}".lower()
    return "response_format" in text or "json_schema" in text


class _Failed(Exception):
    def __init__(self, reason: str, call: ModelCall, status_error: openai.APIStatusError | None = None) -> None:
        super().__init__(reason)
        self.reason, self.call, self.status_error = reason, call, status_error


# Servers known to reject json_schema, so later calls go straight to json_object.
_JSON_OBJECT_ONLY: set[tuple[str, str]] = set()


class OpenAIWriter:
    """Any OpenAI-compatible chat completions server, through the official client.

    Temperature 0, bounded timeout and retries (settings OPENAI_TIMEOUT,
    OPENAI_MAX_RETRIES). Asks for the JSON-schema response format; a server
    that rejects it gets JSON-object mode instead, and the answer is validated
    against the same schema here either way.
    """

    name = "openai"

    def __init__(self, *, model: str | None = None) -> None:
        self.model = model or conf.get("OPENAI_MODEL")
        self.base_url = conf.openai_base_url()
        api_key = conf.openai_api_key()
        if not api_key and not self.base_url:
            raise ImproperlyConfigured("the openai writer needs OPENAI_API_KEY (or OPENAI_BASE_URL)")
        self.client = openai.OpenAI(
            # Local servers (llama.cpp, vLLM) need no key, but the client insists on one.
            api_key=api_key or "not-needed",
            base_url=self.base_url,
            timeout=float(conf.get("OPENAI_TIMEOUT")),
            max_retries=int(conf.get("OPENAI_MAX_RETRIES")),
        )

    def _call(self, messages: list[dict[str, str]], response_format: dict[str, Any]) -> tuple[Any, ModelCall]:
        started = time.monotonic()
        try:
            completion = self.client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                temperature=0,
                response_format=response_format,  # type: ignore[arg-type]
            )
        except openai.APITimeoutError:
            raise _Failed("timeout", ModelCall(self.model, latency_ms=_ms(started), error="timeout")) from None
        except openai.APIConnectionError:
            error = "connection error"
            raise _Failed(error, ModelCall(self.model, latency_ms=_ms(started), error=error)) from None
        except openai.APIStatusError as exc:
            error = f"HTTP {exc.status_code}"
            raise _Failed(error, ModelCall(self.model, latency_ms=_ms(started), error=error), exc) from None
        usage = completion.usage
        call = ModelCall(
            model=self.model,
            tokens_in=(usage.prompt_tokens or 0) if usage else 0,
            tokens_out=(usage.completion_tokens or 0) if usage else 0,
            latency_ms=_ms(started),
        )
        return completion, call

    def write(self, context: ContextSlice) -> WriterResult:
        messages = rulebook.build_messages(context.text)
        schema_format = {
            "type": "json_schema",
            "json_schema": {"name": "case_summary", "strict": True, "schema": rulebook.OUTPUT_SCHEMA},
        }
        calls: list[ModelCall] = []
        server = (self.base_url or "", self.model)
        try:
            if server in _JSON_OBJECT_ONLY:
                completion, call = self._call(messages, {"type": "json_object"})
            else:
                try:
                    completion, call = self._call(messages, schema_format)
                except _Failed as failed:
                    if failed.status_error is None or not _rejects_json_schema(failed.status_error):
                        raise
                    calls.append(ModelCall(self.model, latency_ms=failed.call.latency_ms, error="json_schema rejected"))
                    _JSON_OBJECT_ONLY.add(server)
                    completion, call = self._call(messages, {"type": "json_object"})
        except _Failed as failed:
            raise WriterError(failed.reason, calls=(*calls, failed.call)) from None

        def fail(reason: str) -> WriterError:
            return WriterError(reason, calls=(*calls, replace(call, error=reason)))

        choice = completion.choices[0] if completion.choices else None
        if choice is None or not choice.message.content:
            raise fail("empty response")
        if choice.finish_reason == "length":
            raise fail("output truncated")
        try:
            content = json.loads(_strip_fence(choice.message.content))
        except json.JSONDecodeError:
            raise fail("malformed JSON") from None
        problem = validate_content(content)
        if problem:
            raise fail(problem)
        calls.append(call)
        return WriterResult(
            content=content,
            tokens_in=sum(c.tokens_in for c in calls),
            tokens_out=sum(c.tokens_out for c in calls),
            calls=tuple(calls),
        )


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _strip_fence(text: str) -> str:
    """Some local models wrap JSON-object answers in a Markdown fence."""
    match = re.fullmatch(r"\s*```(?:json)?\s*(.*?)\s*```\s*", text, re.S)
    return match.group(1) if match else text


# --- the extractive writer -------------------------------------------------------------------

# A sentence ends at . ! or ? followed by a capital, digit, quote or bracket, except after an abbreviation.
_NOT_AFTER = ("Inc.", "Corp.", "Ltd.", "Co.", "No.", "v.", "vs.", "St.", "Dr.", "Mr.", "Ms.", "Jan.", "Feb.", "Mar.",
              "Apr.", "Jun.", "Jul.", "Aug.", "Sep.", "Sept.", "Oct.", "Nov.", "Dec.")  # fmt: skip
_SENTENCE_END = re.compile(
    r"(?<=[.!?])" + "".join(rf"(?<!\b{re.escape(a)})" for a in _NOT_AFTER) + r"\s+(?=[A-Z0-9“\"(])"
)
EXTRACT_SENTENCE_MAX = 240


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]


class ExtractiveWriter:
    """No model: the summary is assembled from the slice's own fields and sentences.

    Deterministic, free, offline. Each statement is the text of the item it
    cites (or one of its sentences), so it can only repeat what the records say.
    """

    name = "extractive"
    model = ""

    def write(self, context: ContextSlice) -> WriterResult:
        content = rulebook.empty_content()

        def add(section: str, text: str, source_id: str) -> None:
            if len(content[section]) < rulebook.MAX_STATEMENTS_PER_SECTION and text:
                content[section].append({"text": clip(text, EXTRACT_SENTENCE_MAX), "sources": [source_id]})

        header = context.get("case:header")
        if header is not None:
            first = sentences(header.text)
            # "Case KEY: Title." + "Status: ..." + "Opened: ..." then the description's sentences.
            add("status", " ".join(first[:3]), header.source_id)
            for sentence in first[3:5]:
                add("status", sentence, header.source_id)
        for item in context.items:
            if item.kind in ("client", "counterparty"):
                add("parties", item.text, item.source_id)
            elif item.kind == "deadline":
                add("key_dates", item.text, item.source_id)
            elif item.kind == "invoice":
                add("money", item.text, item.source_id)
        records = [i for i in context.items if i.kind in ("note", "draft", "document")]
        used: set[str] = set()
        for item in records:
            for sentence in sentences(item.body):
                if _mentions_money(sentence):
                    add("money", sentence, item.source_id)
                    used.add(sentence)
        for item in records:
            if item.kind == "document" and not item.source_id.endswith("#p1"):
                continue
            first = sentences(item.body)
            # The record's first sentence, unless the money section already said it: then its label.
            if first and first[0] not in used:
                add("recent_activity", f"{item.label}: {first[0]}" if item.label else first[0], item.source_id)
            elif item.label:
                add("recent_activity", item.label + ".", item.source_id)
            if item.kind == "note":
                for sentence in first:
                    if sentence.endswith("?"):
                        add("open_questions", sentence, item.source_id)
        return WriterResult(content=content)


def _mentions_money(sentence: str) -> bool:
    return bool(extract_facts(sentence).money)


def get_writer() -> Writer:
    """The configured writer: WRITER "openai", "extractive", or "auto" (openai when a key is set)."""
    choice = conf.get("WRITER")
    if choice == "openai" or (choice == "auto" and conf.openai_api_key()):
        return OpenAIWriter()
    return ExtractiveWriter()
