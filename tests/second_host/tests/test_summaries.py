"""Summaries of the second host's matters: the slice read through its adapter, both writers, the selection's verification."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from graph_memory.models import AICall, CaseSummary
from graph_memory.summaries.context import build_context
from graph_memory.summaries.openai_writer import OpenAIWriter
from graph_memory.summaries.rewrite import SummaryFailed, summarize_case
from graph_memory.summaries.writers import ExtractiveWriter
from tests.openai_server import OpenAIServer, Reply
from tests.second_host.factories import FilingFactory, MatterFactory, MemoFactory
from tests.second_host.matters.models import Bill, DueDate, Engagement, Filing, Memo
from tests.second_host.world import ACQ, LEASE, SUED, TERM, TERMINATION_FACTS, Office, build_office
from tests.writer_support import answer, point, sentence_id

pytestmark = pytest.mark.django_db

CONTEXT_QUERIES = 7  # as in the reference host (tests/summaries/test_context.py)


@pytest.fixture
def world(settings: Any) -> Office:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "extractive", "EMBEDDER": "none"}
    return build_office()


def test_the_slice_of_a_matter(world: Office, django_assert_num_queries) -> None:
    acq = world.matters[ACQ]
    engagement = {e.role: e.party_id for e in Engagement.objects.filter(matter=acq)}
    signing, kickoff = (DueDate.objects.get(matter=acq, label=label).pk for label in ("Target signing", "Kick-off call"))
    note, draft = (Memo.objects.get(matter=acq, kind=kind).pk for kind in (Memo.Kind.FILE_NOTE, Memo.Kind.DRAFT))
    spa = Filing.objects.get(matter=acq, state=Filing.State.PROCESSED).pk
    with django_assert_num_queries(CONTEXT_QUERIES):
        context = build_context(case_id=acq.pk)
    assert context.source_ids == (
        "case:header", f"client:{engagement['client']}", f"counterparty:{engagement['adverse']}",
        f"deadline:{signing}", f"deadline:{kickoff}", f"invoice:{Bill.objects.get(matter=acq).pk}",
        f"note:{note}", f"draft:{draft}", f"document:{spa}#p1", f"document:{spa}#p2",
    )  # fmt: skip
    lines = context.text.splitlines()
    assert lines[0] == (
        "[case:header] Case 2026/014: Nordwind / Castell acquisition. Status: Active. Opened: 2026-03-02. "
        "Nordwind Holdings AG is buying all shares of Castell Components GmbH."
    )
    assert f"[deadline:{signing}] Deadline “Target signing”: due 2026-12-15, open." in lines
    assert f"[deadline:{kickoff}] Deadline “Kick-off call”: due 2026-03-10, done." in lines
    # The bill's amount is the sum of its time entries: 10.5 h x 300 + 2 h x 250.
    assert f"[invoice:{Bill.objects.get(matter=acq).pk}] Invoice RE-0057 issued 2026-10-01: EUR 3,650.00, issued." in lines
    assert "zqscanvx" not in context.text  # a filing still being scanned is not read


def test_caps_hold_on_a_matter_with_a_500_page_filing_and_many_memos(django_assert_num_queries, settings) -> None:
    matter = MatterFactory()
    FilingFactory(matter=matter, pages=[f"Page {n} " + "word " * 400 for n in range(1, 501)])
    for n in range(30):
        MemoFactory(matter=matter, body=f"Memo {n}. " + "x" * 5000)
    with django_assert_num_queries(CONTEXT_QUERIES):
        context = build_context(case_id=matter.pk)
    kinds = [item.kind for item in context.items]
    assert kinds.count("document") == settings.GRAPH_MEMORY.get("CONTEXT_MAX_PAGES_PER_DOCUMENT", 3)
    assert kinds.count("note") <= 10
    assert all(len(item.text) <= 1200 for item in context.items)
    assert context.char_count <= 16000


def test_no_other_matter_ever_enters_a_slice(world: Office) -> None:
    for reference, matter in world.matters.items():
        text = build_context(case_id=matter.pk).text
        if reference != TERM:
            assert not any(fact in text for fact in TERMINATION_FACTS[1:]), reference
        if reference != SUED:
            assert "zqsuedvx" not in text


def test_the_extractive_writer_summarises_every_matter(world: Office) -> None:
    for reference, matter in world.matters.items():
        summary = summarize_case(case_id=matter.pk, writer=ExtractiveWriter())
        assert summary.text and not summary.stale and summary.firm_id == matter.office_id, reference
        assert summary.verification["kept"] >= 1 and summary.source_ids[0] == "case:header"
        if reference != TERM:
            assert not any(fact in summary.text for fact in TERMINATION_FACTS[1:]), reference
    lease = CaseSummary.objects.get(case=world.matters[LEASE])
    assert "540,000.00" in lease.text and "Harbor Street" in lease.text
    acq = CaseSummary.objects.get(case=world.matters[ACQ])
    assert "RE-0057" in acq.text and "3,650.00" in acq.text and "2026-12-15" in acq.text
    assert not AICall.objects.exists()  # the extractive writer calls no model


def test_the_openai_writer_over_http_serves_only_the_sentences_it_selects(
    world: Office, openai_server: OpenAIServer
) -> None:
    acq = world.matters[ACQ]
    spa = Filing.objects.get(matter=acq, state=Filing.State.PROCESSED).pk
    note = Memo.objects.get(matter=acq, kind=Memo.Kind.FILE_NOTE).pk
    price = "The purchase price is EUR 48,000,000."
    invented = "The purchase price is EUR 49,000,000."
    question = "Is the escrow agreed?"
    # The price selected twice, once with an invented amount as its short form; an id the slice does not have.
    content = answer(
        money=[point(sentence_id(acq.pk, price)), point(sentence_id(acq.pk, price), short=invented), point("s99")],
        open_questions=[point(sentence_id(acq.pk, question))],
    )
    openai_server.add_chat(Reply.json(content, prompt_tokens=900, completion_tokens=120))
    summary = summarize_case(case_id=acq.pk, writer=OpenAIWriter())
    assert (summary.writer, summary.tokens_in, summary.tokens_out) == ("openai", 900, 120)
    assert price in summary.text and question in summary.text
    assert invented not in summary.text
    assert [d["reason"] for d in summary.verification["dropped"]] == [
        "repeated_id", "no_known_sentence", "unknown_id", "no_known_sentence",
    ]  # fmt: skip
    served = {(s["text"], *s["sources"]) for ss in summary.content.values() for s in ss if s["kind"] == "sentence"}
    assert served == {(price, f"document:{spa}#p1"), (question, f"note:{note}")}
    call = AICall.objects.get()
    assert (call.firm_id, call.case_id, call.outcome) == (world.office.pk, acq.pk, "ok")
    (request,) = openai_server.chat_requests()
    prompt = request["messages"][1]["content"]
    assert f"[document:{spa}#p1] " in prompt and f"] {price}" in prompt
    assert not any(fact in prompt for fact in (*TERMINATION_FACTS[1:], "zqsuedvx", "zqscanvx", "Harbor Street"))


def test_a_short_form_that_changes_a_sentence_is_refused_and_the_sentence_served(
    world: Office, openai_server: OpenAIServer
) -> None:
    acq = world.matters[ACQ]
    price = "The purchase price is EUR 48,000,000."
    invented = "The purchase price is EUR 49,000,000."
    openai_server.add_chat(Reply.json(answer(money=[point(sentence_id(acq.pk, price), short=invented)])))
    summary = summarize_case(case_id=acq.pk, writer=OpenAIWriter())
    assert [d["reason"] for d in summary.verification["dropped"]] == ["shortening_refused"]
    assert price in summary.text and invented not in summary.text


def test_a_failed_rewrite_keeps_the_previous_summary_and_the_flag(world: Office, openai_server: OpenAIServer) -> None:
    lease = world.matters[LEASE]
    previous = summarize_case(case_id=lease.pk, writer=ExtractiveWriter())
    MemoFactory(matter=lease, body="The landlord offered a rent holiday.", written_at=dt.datetime(2026, 11, 1, tzinfo=dt.UTC))
    assert CaseSummary.objects.get(case=lease).stale
    openai_server.add_chat(Reply.raw("this is not JSON"))
    with pytest.raises(SummaryFailed):
        summarize_case(case_id=lease.pk, writer=OpenAIWriter())
    now = CaseSummary.objects.get(case=lease)
    assert (now.text, now.written_at, now.stale) == (previous.text, previous.written_at, True)
    assert now.attempts == 1 and now.last_error


def test_summarize_case_command_takes_the_office_code_and_the_matter_reference(world: Office, capsys) -> None:
    call_command("summarize_case", "--firm", "kanzlei-nord", ACQ)
    out = capsys.readouterr().out
    assert "Saved the summary of case 2026/014." in out and "Nordwind" in out
    with pytest.raises(CommandError, match="no case"):
        call_command("summarize_case", "--firm", "kanzlei-nord", SUED)  # another office's matter
    with pytest.raises(CommandError, match="no firm"):
        call_command("summarize_case", "--firm", "nope", ACQ)
