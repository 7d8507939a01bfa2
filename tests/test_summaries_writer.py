"""The openai writer over real HTTP (tests/openai_server.py): what is saved, dropped, kept and logged."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import Firm
from graph_memory import events
from graph_memory.models import AICall, CaseSummary, SummaryVersion
from graph_memory.summaries import openai_writer
from graph_memory.summaries.rulebook import OUTPUT_SCHEMA, PROMPT_VERSION, render_text
from graph_memory.summaries.service import SummaryFailed, summarize_case
from practice.models import Case
from tests.openai_server import OpenAIServer, Reply

pytestmark = pytest.mark.django_db

GOOD: dict[str, list[dict[str, Any]]] = {
    "status": [
        {
            "text": "The Northwind / Castell acquisition is open; it was opened on 2026-03-02.",
            "sources": ["case:header"],
        }
    ],
    "parties": [
        {
            "text": "Northwind Holdings, Inc. is buying all shares of Castell Components GmbH.",
            "sources": ["case:header", "client:northwind", "counterparty:castell"],
        }
    ],
    "key_dates": [
        {"text": "Target signing is due 15 December 2026.", "sources": ["deadline:signing"]},
        {
            "text": "The Buyer may terminate if antitrust clearance is not obtained by Dec. 15, 2026.",
            "sources": ["document:spa-v3#p2"],
        },
    ],
    "money": [
        {"text": "The purchase price is EUR 48,000,000.", "sources": ["document:spa-v3#p1"]},
        {
            "text": "Invoice INV-0057 for $31,840.50 was issued on 2026-10-01 and is unpaid.",
            "sources": ["invoice:inv-57"],
        },
    ],
    "recent_activity": [
        {
            "text": "The due diligence memo flags a change-of-control clause in Castell's contract with Brightline Logistics LLC.",
            "sources": ["document:dd-memo#p1"],
        }
    ],
    "open_questions": [{"text": "Price adjustment talks continue.", "sources": ["note:n1"]}],
}
N_GOOD = 8
# Text that exists only in the demo firm's other cases.
OTHER_CASES_TEXT = ("Parkside", "2,310,000", "Jordan Lee", "410,000", "Harbor Street")


def with_statement(section: str, index: int, **changes: Any) -> dict[str, Any]:
    content = copy.deepcopy(GOOD)
    content[section][index].update(changes)
    return content


@pytest.fixture(autouse=True)
def fresh_server_capabilities() -> Iterator[None]:
    # Fallbacks are remembered per server URL; a reused port must not carry one over.
    openai_writer._JSON_OBJECT_ONLY.clear()
    yield
    openai_writer._JSON_OBJECT_ONLY.clear()


@pytest.fixture
def case(demo_firm: Firm) -> Case:
    return Case.objects.get(firm=demo_firm, key="2026-014")


@pytest.fixture
def fired() -> Iterator[dict[str, list[Any]]]:
    seen: dict[str, list[Any]] = {"ai_calls": [], "saved": []}

    def on_call(sender: Any, ai_call: AICall, **kwargs: Any) -> None:
        seen["ai_calls"].append(ai_call.pk)

    def on_saved(sender: Any, case_id: int, summary: CaseSummary, **kwargs: Any) -> None:
        seen["saved"].append(case_id)

    events.ai_call_finished.connect(on_call)
    events.summary_saved.connect(on_saved)
    yield seen
    events.ai_call_finished.disconnect(on_call)
    events.summary_saved.disconnect(on_saved)


def calls_logged() -> list[tuple[str, str, int, int, str]]:
    return list(AICall.objects.order_by("id").values_list("outcome", "error", "tokens_in", "tokens_out", "purpose"))


def seed_previous(server: OpenAIServer, case: Case) -> CaseSummary:
    """A good summary first, then the case goes stale again: a failure must leave both as they are."""
    server.add_chat(Reply.json(GOOD))
    summary = summarize_case(case_id=case.pk)
    CaseSummary.objects.filter(pk=summary.pk).update(stale=True, stale_since=timezone.now(), generation=5)
    AICall.objects.all().delete()
    return CaseSummary.objects.get(pk=summary.pk)


def assert_untouched(previous: CaseSummary, *, reason: str) -> None:
    now = CaseSummary.objects.get(pk=previous.pk)
    for name in ("text", "content", "writer", "model", "tokens_in", "tokens_out", "verification", "written_at"):
        assert getattr(now, name) == getattr(previous, name), name
    assert (now.stale, now.stale_since, now.generation) == (True, previous.stale_since, 5)
    assert (now.attempts, now.last_error) == (previous.attempts + 1, reason)
    assert now.last_attempt_at > previous.last_attempt_at
    assert SummaryVersion.objects.filter(case_id=previous.case_id).count() == 1


def test_good_summary_is_saved_and_logged(
    openai_server: OpenAIServer, case: Case, fired, django_capture_on_commit_callbacks
) -> None:
    openai_server.add_chat(Reply.json(GOOD, prompt_tokens=812, completion_tokens=143))
    with django_capture_on_commit_callbacks(execute=True):
        summary = summarize_case(case_id=case.pk)
    assert (summary.writer, summary.model, summary.prompt_version) == ("openai", "gpt-4o-mini", PROMPT_VERSION)
    assert (summary.tokens_in, summary.tokens_out) == (812, 143)
    assert summary.content == GOOD
    assert summary.text == render_text(GOOD)
    assert summary.verification["kept"] == N_GOOD and summary.verification["dropped"] == []
    assert summary.source_ids == [
        "case:header", "client:northwind", "counterparty:castell", "deadline:signing", "document:spa-v3#p2",
        "document:spa-v3#p1", "invoice:inv-57", "document:dd-memo#p1", "note:n1",
    ]  # fmt: skip
    assert not summary.stale and summary.attempts == 0 and summary.last_error == ""
    assert SummaryVersion.objects.get(case=case).content == GOOD

    call = AICall.objects.get()
    assert (call.firm_id, call.case_id, call.writer, call.model) == (case.firm_id, case.pk, "openai", "gpt-4o-mini")
    assert calls_logged() == [("ok", "", 812, 143, "summary")]
    assert fired == {"ai_calls": [call.pk], "saved": [case.pk]}

    (request,) = openai_server.chat_requests()
    assert request["model"] == "gpt-4o-mini" and request["temperature"] == 0
    assert request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["schema"] == OUTPUT_SCHEMA
    prompt = request["messages"][1]["content"]
    assert "[invoice:inv-57] Invoice INV-0057 issued 2026-10-01: USD 31,840.50, sent." in prompt
    assert not [text for text in OTHER_CASES_TEXT if text in prompt]


@pytest.mark.parametrize(
    ("content", "dropped"),
    [
        pytest.param(
            with_statement("key_dates", 0, text="Target signing is due 20 December 2026."),
            {
                "section": "key_dates",
                "text": "Target signing is due 20 December 2026.",
                "reason": "unsupported_date",
                "detail": "2026-12-20",
            },
            id="invented-date",
        ),
        pytest.param(
            with_statement("money", 1, text="Invoice INV-0057 for $31,850.00 was issued on 2026-10-01."),
            {
                "section": "money",
                "text": "Invoice INV-0057 for $31,850.00 was issued on 2026-10-01.",
                "reason": "unsupported_amount",
                "detail": "USD 31850.00",
            },
            id="invented-amount",
        ),
        pytest.param(
            with_statement("money", 0, sources=["document:spa-v4#p1"]),
            {
                "section": "money",
                "text": "The purchase price is EUR 48,000,000.",
                "reason": "unknown_source",
                "detail": "document:spa-v4#p1",
            },
            id="unknown-citation",
        ),
    ],
)
def test_one_bad_statement_is_dropped_and_the_rest_saved(
    openai_server: OpenAIServer, case: Case, content: dict[str, Any], dropped: dict[str, str]
) -> None:
    openai_server.add_chat(Reply.json(content))
    summary = summarize_case(case_id=case.pk)
    assert summary.verification["dropped"] == [dropped]
    assert summary.verification["kept"] == N_GOOD - 1
    assert summary.verification["counts"][dropped["reason"]] == 1
    assert dropped["text"] not in summary.text
    kept = {s["text"] for statements in summary.content.values() for s in statements}
    assert kept == {s["text"] for statements in content.values() for s in statements} - {dropped["text"]}
    assert SummaryVersion.objects.get(case=case).verification == summary.verification
    assert calls_logged() == [("ok", "", 420, 96, "summary")]


def test_all_citations_unknown_keeps_the_previous_summary(openai_server: OpenAIServer, case: Case, fired) -> None:
    previous = seed_previous(openai_server, case)
    fired["ai_calls"].clear()
    content = {section: [{**s, "sources": ["case:other"]} for s in statements] for section, statements in GOOD.items()}
    openai_server.add_chat(Reply.json(content, prompt_tokens=700, completion_tokens=90))
    with pytest.raises(SummaryFailed) as info:
        summarize_case(case_id=case.pk)
    assert info.value.reason == "no statement survived verification"
    assert_untouched(previous, reason="no statement survived verification")
    assert calls_logged() == [("rejected", "no statement survived verification", 700, 90, "summary")]
    assert fired["ai_calls"] == [AICall.objects.get().pk]


def test_malformed_json_keeps_the_previous_summary(openai_server: OpenAIServer, case: Case) -> None:
    previous = seed_previous(openai_server, case)
    openai_server.add_chat(Reply.raw('{"status": [{"text": "Open", "sources": ["case:header"]}', completion_tokens=12))
    with pytest.raises(SummaryFailed, match="malformed JSON"):
        summarize_case(case_id=case.pk)
    assert_untouched(previous, reason="malformed JSON")
    assert calls_logged() == [("error", "malformed JSON", 420, 12, "summary")]


def test_http_500_is_retried_within_bounds_then_fails(openai_server: OpenAIServer, case: Case, settings) -> None:
    previous = seed_previous(openai_server, case)
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "OPENAI_MAX_RETRIES": 1}
    openai_server.add_chat(Reply.error(500), Reply.error(500), Reply.json(GOOD))
    with pytest.raises(SummaryFailed, match="HTTP 500"):
        summarize_case(case_id=case.pk)
    assert openai_server.calls("/v1/chat/completions") == 1 + 2  # the seed, then one try and one retry
    assert_untouched(previous, reason="HTTP 500")
    assert calls_logged() == [("error", "HTTP 500", 0, 0, "summary")]


def test_timeout_fails_fast(openai_server: OpenAIServer, case: Case, settings) -> None:
    previous = seed_previous(openai_server, case)
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "OPENAI_TIMEOUT": 0.4, "OPENAI_MAX_RETRIES": 0}
    openai_server.add_chat(Reply.slow(5, Reply.json(GOOD)))
    with pytest.raises(SummaryFailed, match="timeout"):
        summarize_case(case_id=case.pk)
    assert_untouched(previous, reason="timeout")
    assert calls_logged() == [("error", "timeout", 0, 0, "summary")]
    assert 300 <= AICall.objects.get().latency_ms < 3000


def test_json_schema_rejection_falls_back_to_json_object(openai_server: OpenAIServer, case: Case, fired) -> None:
    openai_server.reject_json_schema = True  # like llama.cpp's server
    openai_server.add_chat(Reply.json(GOOD, prompt_tokens=500, completion_tokens=80))
    summary = summarize_case(case_id=case.pk)
    assert summary.content == GOOD and (summary.tokens_in, summary.tokens_out) == (500, 80)
    formats = [r["response_format"]["type"] for r in openai_server.chat_requests()]
    assert formats == ["json_schema", "json_object"]
    # Both requests were model calls, and both are logged.
    assert calls_logged() == [("error", "json_schema rejected", 0, 0, "summary"), ("ok", "", 500, 80, "summary")]
    assert len(fired["ai_calls"]) == 2

    # The server is remembered: the next summary asks for json_object straight away.
    openai_server.add_chat(Reply.json(GOOD))
    summarize_case(case_id=case.pk)
    assert [r["response_format"]["type"] for r in openai_server.chat_requests()][2:] == ["json_object"]


def test_json_object_answers_are_validated_against_the_same_schema(openai_server: OpenAIServer, case: Case) -> None:
    previous = seed_previous(openai_server, case)
    openai_server.reject_json_schema = True
    openai_server.add_chat(Reply.json({**GOOD, "status": "The case is open (EUR 48,000,000)."}))
    with pytest.raises(SummaryFailed) as info:
        summarize_case(case_id=case.pk)
    assert info.value.reason == "output does not match the schema at status (type)"
    assert "48,000,000" not in info.value.reason  # never case text in an error
    assert_untouched(previous, reason=info.value.reason)
    assert calls_logged() == [
        ("error", "json_schema rejected", 0, 0, "summary"),
        ("error", "output does not match the schema at status (type)", 420, 96, "summary"),
    ]


def test_missing_sections_are_a_schema_error(openai_server: OpenAIServer, case: Case) -> None:
    openai_server.add_chat(Reply.json({"status": GOOD["status"]}))
    with pytest.raises(SummaryFailed, match=r"output does not match the schema at top level \(required\)"):
        summarize_case(case_id=case.pk)
    assert not CaseSummary.objects.get(case=case).text


def test_the_test_server_serves_deterministic_embeddings(openai_server: OpenAIServer) -> None:
    import math

    import openai

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
