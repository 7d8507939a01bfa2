"""The regression guard (graph_memory/summaries/guard.py): a weaker rewrite never replaces a good summary."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from accounts.models import Firm
from graph_memory.models import AICall, CaseSummary, SummaryVersion
from graph_memory.refresh import refresh_firm
from graph_memory.summaries.context import build_context
from graph_memory.summaries.guard import REJECTED, judge_rewrite
from graph_memory.summaries.rewrite import SummaryFailed, summarize_case
from practice.models import Case, Document, Draft
from tests.openai_server import OpenAIServer, Reply
from tests.writer_support import (
    CLAUSE_9,
    CLOSING,
    DISCLOSURE,
    ESCROW,
    HEADER,
    INVOICE,
    N_RICH,
    PRICE,
    RED_FLAG,
    RICH,
    SIGNING,
    WEAK,
    answer,
    point,
    seed_previous,
    selection,
    texts,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def case(demo_firm: Firm, settings) -> Case:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "EMBEDDER": "none", "OPENAI_MAX_RETRIES": 0}
    return Case.objects.get(firm=demo_firm, key="2026-014")


def test_a_weak_answer_after_a_rich_summary_leaves_it_in_place_and_the_case_stale(
    openai_server: OpenAIServer, case: Case
) -> None:
    previous = seed_previous(openai_server, case.pk)
    assert previous.verification["kept"] == N_RICH
    openai_server.add_chat(Reply.json(selection(case.pk, WEAK), prompt_tokens=900, completion_tokens=60))

    with pytest.raises(SummaryFailed) as info:
        summarize_case(case_id=case.pk)

    assert (
        info.value.reason
        == f"{REJECTED}: serves 2 distinct sentences against 7 still backed in the current summary (needs 5)"
    )
    row = CaseSummary.objects.get(pk=previous.pk)
    assert (row.text, row.content, row.verification) == (previous.text, previous.content, previous.verification)
    assert (row.stale, row.attempts, row.last_error) == (True, 1, info.value.reason)
    assert SummaryVersion.objects.filter(case=case).count() == 1
    # The rejected attempt is on record with its own verification report and the guard's figures.
    attempt = row.last_attempt
    assert (attempt["outcome"], attempt["reason"]) == ("rejected", info.value.reason)
    assert attempt["verification"]["kept"] == 2 and attempt["verification"]["dropped"] == []
    assert (attempt["guard"]["current_sentences"], attempt["guard"]["new_sentences"]) == (7, 2)
    assert (attempt["guard"]["current_records"], attempt["guard"]["new_records"]) == (6, 2)
    call = AICall.objects.get()
    assert (call.outcome, call.error, call.tokens_in, call.tokens_out) == ("rejected", info.value.reason, 900, 60)
    assert call.report["guard"]["new_sentences"] == 2 and call.report["counts"]["kept"] == 2


def test_the_nightly_run_backs_off_a_rejected_rewrite_and_counts_what_it_cost(
    openai_server: OpenAIServer, case: Case
) -> None:
    previous = seed_previous(openai_server, case.pk)
    CaseSummary.objects.filter(firm=case.firm).exclude(pk=previous.pk).update(stale=False)
    openai_server.add_chat(Reply.json(selection(case.pk, WEAK), prompt_tokens=900, completion_tokens=60))

    run = refresh_firm(firm_id=case.firm_id)

    assert (run.claimed, run.rewritten, run.failed, run.tokens_used) == (1, 0, 1, 960)
    row = CaseSummary.objects.get(pk=previous.pk)
    assert row.stale and row.text == previous.text and row.last_error.startswith(REJECTED)
    assert row.next_attempt_after > timezone.now() + dt.timedelta(hours=19)  # backing off to the next night


def test_a_timed_out_rewrite_counts_against_the_nightly_token_budget(
    openai_server: OpenAIServer, case: Case, settings
) -> None:
    CaseSummary.objects.filter(firm=case.firm).update(stale=False)
    CaseSummary.objects.filter(case=case).update(stale=True)
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "OPENAI_TIMEOUT": 0.4}
    openai_server.add_chat(Reply.slow(3, Reply.json(selection(case.pk, RICH))))

    run = refresh_firm(firm_id=case.firm_id)

    call = AICall.objects.get()
    assert (run.failed, call.error, call.tokens_estimated) == (1, "timeout", True)
    assert run.tokens_used == call.tokens_in + call.tokens_out > 0  # the server did the work: it is paid for


def test_a_rewrite_that_loses_half_of_what_it_selected_to_verification_is_rejected(
    openai_server: OpenAIServer, case: Case
) -> None:
    previous = seed_previous(openai_server, case.pk)
    rich = selection(case.pk, RICH)
    invented = [point(f"s{40 + n}") for n in range(8)]  # the slice has eight sentences
    sections = ("status", "key_dates", "money", "open_questions")
    padded = {**rich, **{name: [*rich[name], *invented[2 * i : 2 * i + 2]] for i, name in enumerate(sections)}}
    openai_server.add_chat(Reply.json(padded))
    with pytest.raises(SummaryFailed) as info:
        summarize_case(case_id=case.pk)
    # Everything the current summary says is there, but 8 of 15 selected ids name no sentence of the slice.
    assert info.value.reason == f"{REJECTED}: 7 of 15 selected sentence ids are in the slice (below 50%)"
    assert CaseSummary.objects.get(pk=previous.pk).text == previous.text


def test_ids_selected_twice_are_redundant_not_invented(openai_server: OpenAIServer, case: Case) -> None:
    seed_previous(openai_server, case.pk)
    rich = selection(case.pk, RICH)
    every = [p for name in rich for p in rich[name]]
    # Sentences selected again under another heading: repeats, no invention.
    repeated = {**rich, "open_questions": [*rich["open_questions"], *every, *every][:6]}
    openai_server.add_chat(Reply.json(repeated))
    summary = summarize_case(case_id=case.pk)
    counts = summary.verification["counts"]
    assert counts["repeated_id"] > 0 and counts["unknown_id"] == 0
    assert summary.last_attempt["guard"]["ids_known"] == counts["ids"]


def test_a_smaller_rewrite_is_saved_when_the_records_shrank(openai_server: OpenAIServer, case: Case) -> None:
    seed_previous(openai_server, case.pk)
    # The documents and the draft behind five of the seven statements are gone.
    Document.objects.filter(case=case, key__in=["spa-v3", "dd-memo"]).delete()
    Draft.objects.filter(case=case, key="disc-letter").delete()
    openai_server.add_chat(Reply.json(selection(case.pk, WEAK)))
    summary = summarize_case(case_id=case.pk)
    assert texts(WEAK) <= texts(summary.content)
    assert (summary.last_attempt["guard"]["current_sentences"], summary.last_attempt["guard"]["current_records"]) == (
        2,
        2,
    )
    assert SummaryVersion.objects.filter(case=case).count() == 2


def test_an_equal_or_better_rewrite_replaces_the_current_summary(openai_server: OpenAIServer, case: Case) -> None:
    seed_previous(openai_server, case.pk, content=answer(status=[HEADER], money=[PRICE], open_questions=[CLOSING]))
    openai_server.add_chat(Reply.json(selection(case.pk, RICH)))
    summary = summarize_case(case_id=case.pk)
    assert texts(RICH) <= texts(summary.content) and not summary.stale
    assert summary.last_attempt["outcome"] == "saved"


def test_a_first_summary_has_nothing_to_protect(openai_server: OpenAIServer, case: Case) -> None:
    openai_server.add_chat(Reply.json(selection(case.pk, answer(open_questions=[CLOSING]))))
    summary = summarize_case(case_id=case.pk)
    assert CLOSING["text"] in texts(summary.content) and not summary.stale


def test_a_rewrite_must_keep_the_field_records_the_current_summary_covers(demo_firm: Firm) -> None:
    case = Case.objects.get(firm=demo_firm, key="2026-014")
    context = build_context(case_id=case.pk)
    current = answer(status=[HEADER], key_dates=[SIGNING, CLAUSE_9], money=[INVOICE, PRICE], open_questions=[CLOSING])
    report = {"kept": 5, "counts": {"ids": 5, "ids_kept": 5, "statements": 5, "kept": 5}}
    # More selected sentences and as many records, but the deadline and the invoice are gone.
    poorer = answer(status=[HEADER], key_dates=[CLAUSE_9], money=[PRICE, ESCROW], recent_activity=[RED_FLAG])
    judged = judge_rewrite(current=current, new=poorer, report=report, context=context)
    assert judged.reason == f"{REJECTED}: cites 1 of the 3 field records the current summary covers"
    # Field facts rendered from the records (kind "field") count as covering them.
    rendered = {**poorer, "key_dates": [*poorer["key_dates"], SIGNING], "money": [*poorer["money"], INVOICE]}
    assert judge_rewrite(current=current, new=rendered, report=report, context=context).ok
    # ...but are not selected sentences: they do not make up for lost narrative.
    fields_only = answer(key_dates=[SIGNING], money=[INVOICE])
    assert not judge_rewrite(current=RICH, new={**fields_only, "status": [HEADER]}, report=report, context=context).ok
    assert judge_rewrite(current=answer(), new=answer(open_questions=[DISCLOSURE]), report=report, context=context).ok
    # A summary written before summary-v3 (kind "quote": free text beside a quote) protects nothing.
    legacy = {name: [{**s, "kind": "quote"} for s in statements] for name, statements in RICH.items()}
    assert judge_rewrite(current=legacy, new=WEAK, report=report, context=context).ok
    assert not judge_rewrite(current=RICH, new=WEAK, report=report, context=context).ok
