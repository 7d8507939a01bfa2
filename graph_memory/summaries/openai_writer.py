"""The openai writer: any OpenAI-compatible chat completions server, through the official client."""

from __future__ import annotations

import json
import re
import time
from dataclasses import replace
from typing import Any

import openai
from django.core.exceptions import ImproperlyConfigured

from graph_memory import conf
from graph_memory.summaries import rulebook
from graph_memory.summaries.base import ModelCall, WriterError, WriterResult, validate_content
from graph_memory.summaries.context import ContextSlice


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
