"""The openai writer over real HTTP (tests/openai_server.py): requests, refusals, bounds, retries and what is logged."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from django.core.cache import cache

from accounts.models import Firm
from graph_memory import signals
from graph_memory.models import AICall, CaseSummary, SummaryVersion
from graph_memory.summaries import rulebook
from graph_memory.summaries.base import max_output_tokens
from graph_memory.summaries.openai_writer import OpenAIWriter
from graph_memory.summaries.rewrite import SummaryFailed, summarize_case
from graph_memory.summaries.rulebook import OUTPUT_SCHEMA, PROMPT_VERSION
from practice.models import Case
from tests.openai_server import OPENAI_REFUSAL, OpenAIServer, Reply
from tests.writer_support import (
    CLOSING,
    N_RICH,
    RICH,
    answer,
    calls_logged,
    point,
    seed_previous,
    selection,
    sentence_id,
    texts,
)

pytestmark = pytest.mark.django_db

CHAT = "/v1/chat/completions"
# Text that exists only in the demo firm's other cases.
OTHER_CASES_TEXT = ("Parkside", "2,310,000", "Jordan Lee", "410,000", "Harbor Street")
PYDANTIC_REFUSAL = "body.response_format.type: Input should be 'text' or 'json_object'"


@pytest.fixture
def case(demo_firm: Firm) -> Case:
    return Case.objects.get(firm=demo_firm, key="2026-014")


@pytest.fixture
def rich(case: Case) -> dict[str, Any]:
    """RICH as the model answers it: the ids of its seven sentences."""
    return selection(case.pk, RICH)


@pytest.fixture
def fired() -> Iterator[dict[str, list[Any]]]:
    seen: dict[str, list[Any]] = {"ai_calls": [], "saved": []}

    def on_call(sender: Any, ai_call: AICall, **kwargs: Any) -> None:
        seen["ai_calls"].append(ai_call.pk)

    def on_saved(sender: Any, case_id: int, summary: CaseSummary, **kwargs: Any) -> None:
        seen["saved"].append(case_id)

    signals.ai_call_finished.connect(on_call)
    signals.summary_saved.connect(on_saved)
    yield seen
    signals.ai_call_finished.disconnect(on_call)
    signals.summary_saved.disconnect(on_saved)


def assert_untouched(previous: CaseSummary, *, reason: str) -> CaseSummary:
    now = CaseSummary.objects.get(pk=previous.pk)
    for name in ("text", "content", "writer", "model", "tokens_in", "tokens_out", "verification", "written_at"):
        assert getattr(now, name) == getattr(previous, name), name
    assert (now.stale, now.stale_since, now.generation) == (True, previous.stale_since, 5)
    assert (now.attempts, now.last_error) == (previous.attempts + 1, reason)
    assert now.last_attempt_at > previous.last_attempt_at
    assert SummaryVersion.objects.filter(case_id=previous.case_id).count() == 1
    return now


def prompt_tokens_estimate(request: dict[str, Any]) -> int:
    return math.ceil(sum(len(m["content"]) for m in request["messages"]) / 4)


def test_good_summary_is_saved_and_logged(
    openai_server: OpenAIServer, case: Case, fired, django_capture_on_commit_callbacks, rich: dict[str, Any]
) -> None:
    openai_server.add_chat(Reply.json(rich, prompt_tokens=812, completion_tokens=143))
    with django_capture_on_commit_callbacks(execute=True):
        summary = summarize_case(case_id=case.pk)
    assert (summary.writer, summary.model, summary.prompt_version) == ("openai", "gpt-4o-mini", PROMPT_VERSION)
    assert (summary.tokens_in, summary.tokens_out) == (812, 143)
    assert texts(RICH) <= texts(summary.content)
    assert summary.verification["kept"] == N_RICH and summary.verification["dropped"] == []
    assert {s for statements in RICH.values() for st in statements for s in st["sources"]} <= set(summary.source_ids)
    assert not summary.stale and summary.attempts == 0 and summary.last_error == ""
    assert summary.last_attempt["outcome"] == "saved" and summary.last_attempt["modes"] == ["json_schema"]
    assert SummaryVersion.objects.get(case=case).content == summary.content

    call = AICall.objects.get()
    assert (call.firm_id, call.case_id, call.writer, call.model) == (case.firm_id, case.pk, "openai", "gpt-4o-mini")
    assert calls_logged() == [("ok", "", 812, 143, "json_schema")]
    assert (call.tokens_estimated, call.server_error) == (False, "")
    assert call.report["counts"]["kept"] == N_RICH and "dropped" not in call.report  # counts, never case text
    assert fired == {"ai_calls": [call.pk], "saved": [case.pk]}

    (request,) = openai_server.chat_requests()
    assert request["model"] == "gpt-4o-mini" and request["temperature"] == 0
    assert request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["schema"] == OUTPUT_SCHEMA
    assert request["max_tokens"] == max_output_tokens(OUTPUT_SCHEMA)
    prompt = request["messages"][1]["content"]
    assert "[invoice:inv-57] Invoice INV-0057 issued 2026-10-01: USD 31,840.50, sent." in prompt
    # Every narrative sentence under its record, with the id the answer selects it by.
    assert (
        f"[note:n1] Working note (2026-11-02):\n  [{sentence_id(case.pk, CLOSING['text'])}] {CLOSING['text']}" in prompt
    )
    assert not [text for text in OTHER_CASES_TEXT if text in prompt]


def test_a_selected_id_the_slice_does_not_have_is_dropped_and_the_rest_saved(
    openai_server: OpenAIServer, case: Case, rich: dict[str, Any]
) -> None:
    # An id past the slice's last sentence, one shaped like a record, one selected before: dropped, the rest saved.
    header = rich["status"][0]["ids"][0]
    stray = [point("s99"), point("spa-v4#p1"), point(header)]
    openai_server.add_chat(Reply.json({**rich, "money": [*rich["money"], *stray]}))
    summary = summarize_case(case_id=case.pk)
    dropped = [(d["reason"], d["detail"]) for d in summary.verification["dropped"]]
    assert dropped == [
        ("unknown_id", "s99"),
        ("no_known_sentence", ""),
        ("unknown_id", "spa-v4#p1"),
        ("no_known_sentence", ""),
        ("repeated_id", header),
        ("no_known_sentence", ""),
    ]
    assert summary.verification["kept"] == N_RICH and "spa-v4" not in summary.text
    assert texts(RICH) <= texts(summary.content)


def test_malformed_json_keeps_the_previous_summary(openai_server: OpenAIServer, case: Case) -> None:
    previous = seed_previous(openai_server, case.pk)
    openai_server.add_chat(Reply.raw('{"status": [{"ids": ["s1"], "label": "", "short": ""}', completion_tokens=12))
    with pytest.raises(SummaryFailed, match="malformed JSON"):
        summarize_case(case_id=case.pk)
    now = assert_untouched(previous, reason="malformed JSON")
    assert calls_logged() == [("error", "malformed JSON", 420, 12, "json_schema")]
    assert (now.last_attempt["outcome"], now.last_attempt["reason"]) == ("error", "malformed JSON")


def test_http_500_is_retried_within_bounds_and_every_attempt_logged(
    openai_server: OpenAIServer, case: Case, settings, rich: dict[str, Any]
) -> None:
    previous = seed_previous(openai_server, case.pk)
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "OPENAI_MAX_RETRIES": 1}
    openai_server.add_chat(Reply.error(500, "model overloaded"), Reply.error(500, "model overloaded"), Reply.json(rich))
    with pytest.raises(SummaryFailed, match="HTTP 500"):
        summarize_case(case_id=case.pk)
    assert openai_server.calls(CHAT) == 1 + 2  # the seed, then one try and one retry
    assert_untouched(previous, reason="HTTP 500: model overloaded")
    assert calls_logged() == [("error", "HTTP 500", 0, 0, "json_schema")] * 2
    assert set(AICall.objects.values_list("server_error", flat=True)) == {"model overloaded"}


def test_a_retry_that_succeeds_is_logged_as_two_calls(
    openai_server: OpenAIServer, case: Case, settings, rich: dict[str, Any]
) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "OPENAI_MAX_RETRIES": 2}
    openai_server.add_chat(Reply.error(503, "loading model"), Reply.json(rich, prompt_tokens=700, completion_tokens=90))
    summary = summarize_case(case_id=case.pk)
    assert calls_logged() == [("error", "HTTP 503", 0, 0, "json_schema"), ("ok", "", 700, 90, "json_schema")]
    assert summary.last_attempt["calls"] == 2


def test_a_timeout_is_never_retried_and_its_tokens_are_estimated(
    openai_server: OpenAIServer, case: Case, settings, rich: dict[str, Any]
) -> None:
    previous = seed_previous(openai_server, case.pk)
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "OPENAI_TIMEOUT": 0.4, "OPENAI_MAX_RETRIES": 2}
    openai_server.add_chat(Reply.slow(5, Reply.json(rich)), Reply.json(rich), Reply.json(rich))
    started = time.monotonic()
    with pytest.raises(SummaryFailed, match="timeout"):
        summarize_case(case_id=case.pk)
    assert time.monotonic() - started < 3
    # One request only: a retry would queue a second generation behind the one still running.
    assert openai_server.calls(CHAT) == 1 + 1
    assert_untouched(previous, reason="timeout")
    call = AICall.objects.get()
    request = openai_server.chat_requests()[-1]
    assert (call.outcome, call.error, call.tokens_estimated) == ("error", "timeout", True)
    # The server keeps generating after the client leaves: counted up to max_tokens.
    assert (call.tokens_in, call.tokens_out) == (prompt_tokens_estimate(request), request["max_tokens"])
    assert 300 <= call.latency_ms < 3000


def test_an_answer_without_usage_counts_an_estimate(
    openai_server: OpenAIServer, case: Case, rich: dict[str, Any]
) -> None:
    body = Reply.json(rich, usage=False)
    openai_server.add_chat(body)
    summary = summarize_case(case_id=case.pk)
    call = AICall.objects.get()
    (request,) = openai_server.chat_requests()
    assert call.tokens_estimated and call.tokens_in == prompt_tokens_estimate(request)
    assert call.tokens_out == math.ceil(len(body.content or "") / 4)
    assert (summary.tokens_in, summary.tokens_out) == (call.tokens_in, call.tokens_out)


REFUSALS = {
    # emulated server: (modes asked in order, what the first refusal's explanation says)
    "llama.cpp": (["json_schema", "json_object+schema"], PYDANTIC_REFUSAL),
    "vllm": (["json_schema", "json_object+schema"], PYDANTIC_REFUSAL),
    "openai": (["json_schema", "json_object+schema", "json_object"], OPENAI_REFUSAL),
}


@pytest.mark.parametrize("server", list(REFUSALS))
def test_a_refused_response_format_falls_back_and_is_remembered(
    openai_server: OpenAIServer, case: Case, fired, server: str, rich: dict[str, Any]
) -> None:
    modes, explanation = REFUSALS[server]
    openai_server.emulate = server
    openai_server.add_chat(Reply.json(rich, prompt_tokens=500, completion_tokens=80))
    summary = summarize_case(case_id=case.pk)
    assert texts(RICH) <= texts(summary.content) and (summary.tokens_in, summary.tokens_out) == (500, 80)
    requests = openai_server.chat_requests()
    assert [r["response_format"]["type"] for r in requests] == [m.split("+")[0] for m in modes]
    if server == "llama.cpp":  # the schema travels with json_object, so llama.cpp constrains the output with it
        assert requests[1]["response_format"]["schema"] == OUTPUT_SCHEMA
    if server == "vllm":
        assert requests[1]["guided_json"] == OUTPUT_SCHEMA
    if server == "openai":
        assert "schema" not in requests[2]["response_format"] and "guided_json" not in requests[2]
    refused = [(mode, 0, 0) for mode in modes[:-1]]
    assert [(c[4], c[2], c[3]) for c in calls_logged()[:-1]] == refused
    assert [c[:2] for c in calls_logged()] == [("error", f"{m} refused") for m in modes[:-1]] + [("ok", "")]
    assert AICall.objects.order_by("id").first().server_error == explanation
    assert summary.last_attempt["modes"] == modes
    assert len(fired["ai_calls"]) == len(modes)

    # Remembered in the shared cache, not in this process: a brand-new writer asks the working format at once.
    openai_server.add_chat(Reply.json(rich))
    summarize_case(case_id=case.pk, writer=OpenAIWriter())
    assert [r["response_format"]["type"] for r in openai_server.chat_requests()[len(modes) :]] == [
        modes[-1].split("+")[0]
    ]
    assert cache.get(OpenAIWriter()._memory_key) == modes[-1]


def test_the_format_memory_expires(openai_server: OpenAIServer, case: Case, settings, rich: dict[str, Any]) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "OPENAI_FORMAT_MEMORY_TTL": 1}
    openai_server.emulate = "llama.cpp"
    openai_server.add_chat(Reply.json(rich), Reply.json(rich))
    summarize_case(case_id=case.pk)
    time.sleep(1.2)
    summarize_case(case_id=case.pk)
    formats = [r["response_format"]["type"] for r in openai_server.chat_requests()]
    assert formats == ["json_schema", "json_object", "json_schema", "json_object"]  # asked again once expired


def test_a_runaway_generation_is_cut_by_max_tokens(openai_server: OpenAIServer, case: Case, settings) -> None:
    previous = seed_previous(openai_server, case.pk)
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "OPENAI_TIMEOUT": 5.0}
    openai_server.add_chat(Reply.endless())
    started = time.monotonic()
    with pytest.raises(SummaryFailed) as info:
        summarize_case(case_id=case.pk)
    limit = max_output_tokens(OUTPUT_SCHEMA)
    assert info.value.reason == f"output truncated at max_tokens ({limit})"
    assert time.monotonic() - started < 3  # cut by the server at max_tokens, not by the client's timeout
    assert_untouched(previous, reason=info.value.reason)
    assert calls_logged() == [("error", info.value.reason, 420, limit, "json_schema")]


def test_llama_cpp_without_a_schema_echoes_it_until_max_tokens(
    openai_server: OpenAIServer, case: Case, settings
) -> None:
    # A server remembered as taking plain json_object only: the emulated model repeats the schema.
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "OPENAI_MAX_TOKENS": 64}
    openai_server.emulate = "llama.cpp"
    writer = OpenAIWriter()
    cache.set(writer._memory_key, "json_object")
    with pytest.raises(SummaryFailed, match=r"output truncated at max_tokens \(64\)"):
        summarize_case(case_id=case.pk, writer=writer)
    (request,) = openai_server.chat_requests()
    assert request["max_tokens"] == 64 and request["response_format"] == {"type": "json_object"}


def test_max_tokens_is_sized_from_the_schema_at_call_time(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, settings
) -> None:
    writer = OpenAIWriter()
    assert writer.max_tokens() == max_output_tokens(OUTPUT_SCHEMA)
    wider = {
        **OUTPUT_SCHEMA,
        "properties": {k: {**v, "maxItems": 2 * v["maxItems"]} for k, v in OUTPUT_SCHEMA["properties"].items()},
    }
    monkeypatch.setattr(rulebook, "OUTPUT_SCHEMA", wider)
    assert writer.max_tokens() == max_output_tokens(wider) > max_output_tokens(OUTPUT_SCHEMA)
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "OPENAI_MAX_TOKENS": 1500}
    assert writer.max_tokens() == 1500


def test_the_server_error_is_kept_bounded_and_without_case_text(openai_server: OpenAIServer, case: Case) -> None:
    sentence = CLOSING["text"]
    message = f"Could not parse message near '{sentence}' {'at offset 12 ' * 60}'input': {{'content': '{sentence}'}}"
    openai_server.add_chat(Reply.error(400, message))
    with pytest.raises(SummaryFailed, match="HTTP 400"):
        summarize_case(case_id=case.pk)
    call = AICall.objects.get()
    assert call.server_error.startswith("Could not parse message near [case text] at offset 12")
    assert len(call.server_error) <= 300
    for fragment in ("close before year end", "price adjustment", "'input'"):
        assert fragment not in call.server_error
    row = CaseSummary.objects.get(case=case)
    assert row.last_error == f"HTTP 400: {call.server_error}"


def test_json_object_answers_are_validated_against_the_same_schema(
    openai_server: OpenAIServer, case: Case, rich: dict[str, Any]
) -> None:
    previous = seed_previous(openai_server, case.pk)
    openai_server.emulate = "llama.cpp"
    openai_server.add_chat(Reply.json({**rich, "status": "The case is open (EUR 48,000,000)."}))
    with pytest.raises(SummaryFailed) as info:
        summarize_case(case_id=case.pk)
    assert info.value.reason == "output does not match the schema at status (type)"
    assert "48,000,000" not in info.value.reason  # never case text in an error
    assert_untouched(previous, reason=info.value.reason)
    assert calls_logged() == [
        ("error", "json_schema refused", 0, 0, "json_schema"),
        ("error", "output does not match the schema at status (type)", 420, 96, "json_object+schema"),
    ]


def test_missing_sections_are_a_schema_error(openai_server: OpenAIServer, case: Case, rich: dict[str, Any]) -> None:
    openai_server.add_chat(Reply.json({"status": rich["status"]}))
    with pytest.raises(SummaryFailed, match=r"output does not match the schema at top level \(required\)"):
        summarize_case(case_id=case.pk)
    assert not CaseSummary.objects.get(case=case).text


def test_an_empty_answer_is_not_reported_as_a_failed_verification(openai_server: OpenAIServer, case: Case) -> None:
    openai_server.add_chat(Reply.json(answer()), Reply.json(answer(status=[point("s40")])))
    with pytest.raises(SummaryFailed, match=r"^empty answer: no sentence selected$"):
        summarize_case(case_id=case.pk)
    with pytest.raises(SummaryFailed, match=r"^no selected sentence is in the slice$"):
        summarize_case(case_id=case.pk)
    row = CaseSummary.objects.get(case=case)
    assert row.last_attempt["verification"]["counts"]["ids"] == 1  # the failed attempt's report is kept
    assert row.last_attempt["verification"]["dropped"][0] == {
        "section": "status",
        "reason": "unknown_id",
        "detail": "s40",
    }


def test_the_test_server_serves_deterministic_embeddings(openai_server: OpenAIServer) -> None:
    client = openai.OpenAI(base_url=openai_server.base_url, api_key="test-key", max_retries=0)
    first = client.embeddings.create(model="m", input=["commercial lease dispute", "other"], dimensions=64)
    again = client.embeddings.create(
        model="m", input="commercial lease dispute", dimensions=64, encoding_format="float"
    )
    vector = first.data[0].embedding
    assert len(vector) == 64 and math.isclose(math.fsum(v * v for v in vector), 1.0, rel_tol=1e-5)
    assert vector == pytest.approx(again.data[0].embedding, abs=1e-6)
    assert vector != pytest.approx(first.data[1].embedding, abs=1e-6)
    assert first.usage.prompt_tokens == 4
    openai_server.add_embeddings(Reply.error(503, "overloaded"))
    with pytest.raises(openai.APIStatusError):
        client.embeddings.create(model="m", input="x")
    assert openai_server.calls("/v1/embeddings") == 3
