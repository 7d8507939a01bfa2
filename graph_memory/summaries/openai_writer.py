"""The openai writer: any OpenAI-compatible chat completions server, through the official client.

Real servers differ in what they accept, so the response format is a ladder,
tried in order and remembered per server:

1. `json_schema` (OpenAI structured outputs, recent vLLM);
2. `json_object` with the schema attached, both as `response_format.schema`
   (llama-cpp-python turns it into a grammar) and as `guided_json` (vLLM);
3. plain `json_object` (an OpenAI model without structured outputs).

A server refuses a rung with an error that names the response format or the
schema, with whatever status it likes: llama-cpp-python answers HTTP 500
(`internal_server_error`, "Input should be 'text' or 'json_object'"), vLLM
and OpenAI HTTP 400. A refusal moves one rung down and is remembered in the
cache (shared by every process) for OPENAI_FORMAT_MEMORY_TTL seconds.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

import openai
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured

from graph_memory import conf
from graph_memory.summaries import rulebook
from graph_memory.summaries.base import (
    CHARS_PER_TOKEN,
    ModelCall,
    WriterError,
    WriterResult,
    max_output_tokens,
    validate_content,
)
from graph_memory.summaries.context import ContextSlice
from graph_memory.summaries.sentences import number

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam, completion_create_params

logger = logging.getLogger(__name__)

MODES: tuple[str, ...] = ("json_schema", "json_object+schema", "json_object")
SERVER_ERROR_MAX_CHARS = 300
# Statuses that say nothing about the response format: auth, missing model, rate limits, lock timeouts.
_NOT_A_REFUSAL = {401, 403, 404, 408, 409, 429}
_REFUSAL_WORDS = ("response_format", "json_schema", "guided_json", "schema")
_RETRY_BASE_SECONDS = 0.5
# Tokens a chat template may add around the messages (role markers, system preamble): with at most
# one token per byte of the messages, the most prompt tokens a call can honestly report.
_TEMPLATE_TOKENS = 1024
_RETRY_MAX_SECONDS = 8.0
# FastAPI / pydantic validation errors, as llama-cpp-python and vLLM print them.
_PYDANTIC_ERROR = re.compile(r"""'loc':\s*\(([^)]*)\),\s*'msg':\s*("[^"]*"|'[^']*')""")
_ECHOED_INPUT = re.compile(r"""['"]input['"]\s*:""")
_PUNCTUATION = ".,;:!?()[]{}'\"\u201c\u201d\u2018\u2019"


class _Failed(Exception):
    def __init__(self, reason: str, call: ModelCall, *, retryable: bool = False, refused: bool = False) -> None:
        super().__init__(reason)
        self.reason, self.call, self.retryable, self.refused = reason, call, retryable, refused


def refuses_format(exc: openai.APIStatusError) -> bool:
    """The server refused the response format asked for: an error naming it, at any 4xx or 5xx status."""
    if exc.status_code in _NOT_A_REFUSAL:
        return False
    text = f"{_error_text(exc)} {exc.message}".lower()
    return any(word in text for word in _REFUSAL_WORDS)


def server_explanation(exc: openai.APIStatusError, *, case_text: str = "") -> str:
    """The server's own reason for an error, bounded, with nothing copied from the case records.

    Validation errors are reduced to "where: message" pairs; anything a server
    echoes back after an `input` key (pydantic prints the offending request
    value there) is dropped; any run of four words, or any token with a digit,
    that appears in `case_text` is replaced by "[case text]".
    """
    text = _error_text(exc)
    pairs = _PYDANTIC_ERROR.findall(text)
    if pairs:
        text = "; ".join(f"{_dotted(loc)}: {msg[1:-1]}" for loc, msg in pairs)
    else:
        text = _ECHOED_INPUT.split(text, maxsplit=1)[0]
    return _scrub(" ".join(text.split()), case_text)[:SERVER_ERROR_MAX_CHARS]


class OpenAIWriter:
    """Any OpenAI-compatible chat completions server, through the official client.

    Promises: temperature 0; every request bounded by OPENAI_TIMEOUT and by
    `max_tokens` (OPENAI_MAX_TOKENS, or by default the most a valid answer to
    `rulebook.OUTPUT_SCHEMA` can need); connection errors, 429 and 5xx are
    retried up to OPENAI_MAX_RETRIES times, a timeout never (the server is
    still generating for the request we gave up on: a retry would queue a
    second generation behind it); every HTTP attempt is reported as its own
    `ModelCall`, with the server's token counts or, when it gave none, an
    estimate marked as one. The answer is validated against the schema here
    whichever response format the server accepted.
    """

    name = "openai"

    def __init__(self, *, model: str | None = None) -> None:
        self.model = model or conf.get("OPENAI_MODEL")
        self.base_url = conf.openai_base_url()
        api_key = conf.openai_api_key()
        if not api_key and not self.base_url:
            raise ImproperlyConfigured("the openai writer needs OPENAI_API_KEY (or OPENAI_BASE_URL)")
        self.max_retries = int(conf.get("OPENAI_MAX_RETRIES"))
        self.client = openai.OpenAI(
            # Local servers (llama.cpp, vLLM) need no key, but the client insists on one.
            api_key=api_key or "not-needed",
            base_url=self.base_url,
            timeout=float(conf.get("OPENAI_TIMEOUT")),
            # Retries are ours (below): the SDK's would also retry timeouts and hide attempts from the log.
            max_retries=0,
        )

    # --- the response-format memory --------------------------------------------------------

    @property
    def _memory_key(self) -> str:
        server = f"{self.client.base_url}|{self.model}"
        return "graph_memory:openai-format:" + hashlib.sha256(server.encode()).hexdigest()[:32]

    def remembered_mode(self) -> str:
        """The response format this server accepted last (within the memory's lifetime), else the first rung."""
        try:
            mode = cache.get(self._memory_key)
        except Exception:  # the memory only saves a refused request; a broken cache must not stop the write
            logger.warning("could not read the response-format memory", exc_info=True)
            return MODES[0]
        return mode if mode in MODES else MODES[0]

    def _remember(self, mode: str) -> None:
        try:
            cache.set(self._memory_key, mode, timeout=int(conf.get("OPENAI_FORMAT_MEMORY_TTL")))
        except Exception:
            logger.warning("could not write the response-format memory", exc_info=True)

    # --- one HTTP attempt ------------------------------------------------------------------

    def max_tokens(self) -> int:
        configured = conf.get("OPENAI_MAX_TOKENS")
        return int(configured) if configured not in (None, "") else max_output_tokens(rulebook.OUTPUT_SCHEMA)

    def _call(
        self,
        messages: list[dict[str, str]],
        *,
        mode: str,
        max_tokens: int,
        case_text: str,
        schema: tuple[str, dict[str, Any]] | None = None,
    ) -> tuple[_Answer, ModelCall]:
        response_format, extra_body = _request_format(mode, schema)
        prompt_tokens = math.ceil(sum(len(m["content"]) for m in messages) / CHARS_PER_TOKEN)
        started = time.monotonic()
        try:
            completion = self.client.chat.completions.create(
                model=self.model,
                # Plain dicts of the shapes openai's TypedDicts describe.
                messages=cast("list[ChatCompletionMessageParam]", messages),
                temperature=0,
                max_tokens=max_tokens,
                response_format=cast("completion_create_params.ResponseFormat", response_format),
                extra_body=extra_body,
            )
        except openai.APITimeoutError:
            # Non-streamed generations are not cancelled when the client leaves: count what
            # the server will have spent by the time it stops, at most max_tokens.
            call = ModelCall(
                self.model, prompt_tokens, max_tokens, _ms(started), error="timeout", mode=mode, estimated=True
            )
            raise _Failed("timeout", call) from None
        except openai.APIConnectionError:
            call = ModelCall(self.model, latency_ms=_ms(started), error="connection error", mode=mode)
            raise _Failed("connection error", call, retryable=True) from None
        except openai.APIStatusError as exc:
            refused = refuses_format(exc)
            error = f"{mode} refused" if refused else f"HTTP {exc.status_code}"
            explanation = server_explanation(exc, case_text=case_text)
            call = ModelCall(self.model, latency_ms=_ms(started), error=error, mode=mode, server_error=explanation)
            retryable = not refused and (exc.status_code >= 500 or exc.status_code in (408, 409, 429))
            raise _Failed(error, call, retryable=retryable, refused=refused) from None
        except Exception as exc:
            # A 2xx the client could not read (a body that is not JSON): still a call, logged like any other.
            answer: _Answer | str = (
                "response not JSON" if isinstance(exc, ValueError) else f"unreadable response ({type(exc).__name__})"
            )
        else:
            answer = _answer_of(completion)
        if isinstance(answer, str):
            # The server may have run the model: count the prompt, as an estimate.
            call = ModelCall(self.model, prompt_tokens, 0, _ms(started), error=answer, mode=mode, estimated=True)
            raise _Failed(answer, call)
        limits = (
            sum(len(m["content"].encode()) for m in messages) + _TEMPLATE_TOKENS,
            max(max_tokens, len(answer.text.encode())),
        )
        estimates = (prompt_tokens, math.ceil(len(answer.text) / CHARS_PER_TOKEN))
        tokens_in, tokens_out, estimated, note = _counts(getattr(completion, "usage", None), limits, estimates)
        call = ModelCall(
            self.model, tokens_in, tokens_out, _ms(started), mode=mode, estimated=estimated, server_error=note
        )
        return answer, call

    def _attempt(
        self,
        messages: list[dict[str, str]],
        *,
        mode: str,
        max_tokens: int,
        case_text: str,
        calls: list[ModelCall],
        schema: tuple[str, dict[str, Any]] | None = None,
    ) -> tuple[_Answer, ModelCall]:
        for attempt in range(self.max_retries + 1):
            try:
                return self._call(messages, mode=mode, max_tokens=max_tokens, case_text=case_text, schema=schema)
            except _Failed as failed:
                if not failed.retryable or attempt == self.max_retries:
                    raise
                calls.append(failed.call)
                time.sleep(min(_RETRY_BASE_SECONDS * 2**attempt, _RETRY_MAX_SECONDS))
        raise AssertionError("unreachable")

    # --- the writer ------------------------------------------------------------------------

    def write(self, context: ContextSlice) -> WriterResult:
        """The selection for the slice's numbered sentences (sentences.py), shaped like rulebook.OUTPUT_SCHEMA."""
        numbered = number(context)
        return self.complete_json(
            rulebook.build_messages(numbered.text), max_tokens=self.max_tokens(), case_text=numbered.text
        )

    def complete_json(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int,
        case_text: str,
        schema: tuple[str, dict[str, Any]] | None = None,
        validate: Callable[[Any], str | None] = validate_content,
    ) -> WriterResult:
        """One JSON answer to `messages`, down the response-format ladder, checked by `validate`.

        `schema` is (name, JSON Schema) for the structured-output rungs (default: the summary's);
        `validate` returns None for a usable answer, else a short reason (never a value).
        Raises `WriterError` with every HTTP attempt; returns them all on success.
        """
        first = self.remembered_mode()
        calls: list[ModelCall] = []
        for mode in MODES[MODES.index(first) :]:
            try:
                answer, call = self._attempt(
                    messages, mode=mode, max_tokens=max_tokens, case_text=case_text, calls=calls, schema=schema
                )
            except _Failed as failed:
                calls.append(failed.call)
                if failed.refused:
                    continue
                raise WriterError(failed.reason, calls=tuple(calls)) from None
            if mode != first:
                self._remember(mode)
            break
        else:
            raise WriterError("every response format refused", calls=tuple(calls))

        def fail(reason: str) -> WriterError:
            return WriterError(reason, calls=(*calls, replace(call, error=reason)))

        if not answer.text:
            raise fail("empty response")
        if answer.finish_reason == "length":
            raise fail(f"output truncated at max_tokens ({max_tokens})")
        try:
            content = json.loads(_strip_fence(answer.text))
        except (ValueError, RecursionError):  # JSONDecodeError, or nesting deeper than the parser goes
            raise fail("malformed JSON") from None
        try:
            problem = validate(content)
        except Exception as exc:  # a validator tripping over the answer (nesting too deep) rejects it
            problem = f"answer could not be checked ({type(exc).__name__})"
        if problem:
            raise fail(problem)
        calls.append(call)
        return WriterResult(
            content=content,
            tokens_in=sum(c.tokens_in for c in calls),
            tokens_out=sum(c.tokens_out for c in calls),
            calls=tuple(calls),
        )


@dataclass(frozen=True)
class _Answer:
    text: str
    finish_reason: Any


def _answer_of(completion: Any) -> _Answer | str:
    """The message text and finish reason of a chat completion, or why there is none (a short reason)."""
    if isinstance(completion, (str, bytes)):
        return "response not JSON"  # the client hands back the body as text when it is not JSON
    choices = getattr(completion, "choices", None)
    if choices is not None and not isinstance(choices, list):
        return "response of the wrong shape (choices)"
    choice = choices[0] if choices else None
    content = getattr(getattr(choice, "message", None), "content", None)
    if content is not None and not isinstance(content, str):
        return "response of the wrong shape (message content)"
    return _Answer(text=content or "", finish_reason=getattr(choice, "finish_reason", None))


def _count(value: Any, limit: int) -> int | None:
    """A token count as reported, if it is one: a whole number from 0 to `limit`; else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not value.is_integer():  # also NaN and infinities
        return None
    return int(value) if 0 <= value <= limit else None


def _counts(usage: Any, limits: tuple[int, int], estimates: tuple[int, int]) -> tuple[int, int, bool, str]:
    """(tokens in, tokens out, estimated, note) from a usage block the server may have filled with garbage.

    A count outside what the call can have used (below zero, more prompt
    tokens than the prompt has bytes plus a chat template, more output
    tokens than `max_tokens` and the answer's bytes allow) or not a whole
    number is replaced by the estimate, marked as one, and named in the
    note: it is a server's report, never trusted to fit a column or a budget.
    """
    reported = (getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None))
    if usage is None or not any(reported):
        return estimates[0], estimates[1], True, ""
    counts, wrong, estimated = [], [], False
    names = ("prompt_tokens", "completion_tokens")
    for name, value, limit, estimate in zip(names, reported, limits, estimates, strict=True):
        count = None if value is None else _count(value, limit)
        if count is None:
            if value is not None:
                wrong.append(f"{name}={repr(value)[:24]}")
            count, estimated = estimate, True
        counts.append(count)
    note = f"usage out of range ({', '.join(wrong)}): estimated" if wrong else ""
    return counts[0], counts[1], estimated, note[:SERVER_ERROR_MAX_CHARS]


def _request_format(
    mode: str, named_schema: tuple[str, dict[str, Any]] | None = None
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    name, schema = named_schema or ("case_summary", rulebook.OUTPUT_SCHEMA)
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}, None
    if mode == "json_object+schema":
        return {"type": "json_object", "schema": schema}, {"guided_json": schema}
    return {"type": "json_object"}, None


def _error_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        detail = body.get("message") or body.get("detail") or body.get("error")
        return detail if isinstance(detail, str) else json.dumps(detail if detail is not None else body, default=str)
    return str(body) if body is not None else ""


def _dotted(loc: str) -> str:
    """The pydantic location "('body', 'response_format', 'type')" as "body.response_format.type"."""
    return ".".join(part.strip(" '\"") for part in loc.split(",") if part.strip(" '\""))


def _scrub(text: str, case_text: str) -> str:
    if not case_text or not text:
        return text
    words = text.split(" ")
    bare = [_bare(w) for w in words]
    haystack = f" {' '.join(_bare(w) for w in case_text.split())} "
    hidden = [False] * len(words)
    for i in range(len(words) - 3):
        if all(bare[i : i + 4]) and f" {' '.join(bare[i : i + 4])} " in haystack:
            hidden[i : i + 4] = [True] * 4
    for i, word in enumerate(bare):
        if len(word) >= 5 and any(ch.isdigit() for ch in word) and f" {word} " in haystack:
            hidden[i] = True
    kept: list[str] = []
    for word, hide in zip(words, hidden, strict=True):
        if not hide:
            kept.append(word)
        elif not kept or kept[-1] != "[case text]":
            kept.append("[case text]")
    return " ".join(kept)


def _bare(word: str) -> str:
    return word.strip(_PUNCTUATION).casefold()


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _strip_fence(text: str) -> str:
    """Some local models wrap JSON-object answers in a Markdown fence."""
    match = re.fullmatch(r"\s*```(?:json)?\s*(.*?)\s*```\s*", text, re.S)
    return match.group(1) if match else text
