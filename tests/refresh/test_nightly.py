"""The nightly rewrite (graph_memory/refresh/nightly.py) against the real summary service."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from django.db import connection
from django.utils import timezone

from graph_memory.models import AICall, CaseSummary, RefreshRun, SummaryVersion
from graph_memory.refresh import backoff_delay, mark_stale, refresh_firm
from graph_memory.summaries.writers import ExtractiveWriter
from graph_memory.tasks import refresh_all_firms_task
from graph_memory.vectors import embeddings
from practice.models import Document
from tests.factories import CaseFactory, DocumentFactory, FirmFactory, NoteFactory
from tests.refresh_support import FailingWriter, SummarizeSpy, run_in_threads, valid_reply

CHAT = "/v1/chat/completions"


@pytest.fixture(autouse=True)
def refresh_settings(settings):
    # No local embedding model (slow to load) and no client retries (slow backoff) in these tests.
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "EMBEDDER": "none", "OPENAI_MAX_RETRIES": 0, "OPENAI_TIMEOUT": 10.0}
    return settings


def summary_of(case) -> CaseSummary:
    return CaseSummary.objects.get(case=case)


class BumpingWriter(ExtractiveWriter):
    """Simulates a change to the case landing while its summary is being written."""

    def write(self, context):
        mark_stale(case_ids=[context.case_id])
        return super().write(context)


@pytest.mark.django_db
def test_200_processed_documents_cost_no_model_call_until_one_nightly_rewrite(openai_server) -> None:
    openai_server.default_chat = valid_reply()
    case = CaseFactory()
    for _ in range(200):
        doc = DocumentFactory(case=case, status=Document.Status.UPLOADED)
        doc.status = Document.Status.PROCESSING
        doc.save()
        doc.status = Document.Status.PROCESSED
        doc.save()
    assert openai_server.calls() == 0
    assert not AICall.objects.exists()
    assert (summary_of(case).stale, summary_of(case).generation) == (True, 201)

    run = refresh_firm(firm_id=case.firm_id)

    assert (run.status, run.claimed, run.rewritten, run.failed, run.skipped) == ("done", 1, 1, 0, 0)
    assert openai_server.calls(CHAT) == 1
    assert AICall.objects.filter(purpose=AICall.Purpose.SUMMARY).count() == 1
    assert run.tokens_used == 420 + 96
    summary = summary_of(case)
    assert summary.text and not summary.stale and summary.written_generation == 201
    again = refresh_firm(firm_id=case.firm_id)
    assert (again.claimed, openai_server.calls(CHAT)) == (0, 1)


@pytest.mark.django_db
def test_50_edits_give_one_rewrite(monkeypatch) -> None:
    spy = SummarizeSpy(monkeypatch)
    case = CaseFactory()
    note = NoteFactory(case=case)
    for i in range(49):
        note.text = f"Working note, revision {i}."
        note.save()
    assert summary_of(case).generation == 51  # creation + 50 note changes
    run = refresh_firm(firm_id=case.firm_id)
    assert (run.claimed, run.rewritten) == (1, 1)
    assert spy.case_ids == [case.pk]
    assert SummaryVersion.objects.filter(case=case).count() == 1
    assert not summary_of(case).stale


@pytest.mark.django_db
def test_per_firm_cap_oldest_first_and_other_firms_untouched(monkeypatch, refresh_settings) -> None:
    refresh_settings.GRAPH_MEMORY = {**refresh_settings.GRAPH_MEMORY, "NIGHTLY_BATCH_SIZE": 3}
    spy = SummarizeSpy(monkeypatch)
    firm = FirmFactory()
    cases = CaseFactory.create_batch(5, firm=firm)
    other = CaseFactory()
    now = timezone.now()
    ages = [3, 9, 1, 7, 5]  # days since the first unrewritten change
    for case, days in zip(cases, ages, strict=True):
        CaseSummary.objects.filter(case=case).update(stale_since=now - dt.timedelta(days=days))
    oldest_first = [c.pk for _, c in sorted(zip(ages, cases, strict=True), key=lambda pair: -pair[0])]

    run = refresh_firm(firm_id=firm.pk)

    assert (run.claimed, run.rewritten, run.failed, run.skipped) == (3, 3, 0, 2)
    assert spy.case_ids == oldest_first[:3]
    assert summary_of(other).stale and not summary_of(other).text
    assert RefreshRun.objects.filter(firm=other.firm).count() == 0
    second = refresh_firm(firm_id=firm.pk, limit=1)
    assert (second.claimed, second.skipped, spy.case_ids[-1]) == (1, 1, oldest_first[3])


@pytest.mark.django_db
def test_a_firm_whose_writer_fails_leaves_other_firms_untouched(
    monkeypatch, django_capture_on_commit_callbacks
) -> None:
    broken, healthy = FirmFactory(), FirmFactory()
    broken_cases = CaseFactory.create_batch(2, firm=broken)
    healthy_cases = CaseFactory.create_batch(2, firm=healthy)
    broken_ids = {c.pk for c in broken_cases}
    SummarizeSpy(monkeypatch, writer_for=lambda case_id: FailingWriter() if case_id in broken_ids else None)

    with django_capture_on_commit_callbacks(execute=True):
        assert refresh_all_firms_task() == sorted([broken.pk, healthy.pk])  # one eager task per firm

    bad = RefreshRun.objects.get(firm=broken)
    good = RefreshRun.objects.get(firm=healthy)
    assert (bad.status, bad.claimed, bad.rewritten, bad.failed) == ("done", 2, 0, 2)
    assert (good.status, good.claimed, good.rewritten, good.failed) == ("done", 2, 2, 0)
    assert all(summary_of(c).stale and summary_of(c).last_error == "model unavailable" for c in broken_cases)
    assert all(not summary_of(c).stale and summary_of(c).text for c in healthy_cases)


@pytest.mark.django_db
def test_failure_keeps_flag_summary_and_error_then_backs_off_until_a_success(monkeypatch) -> None:
    case = CaseFactory()
    refresh_firm(firm_id=case.firm_id)
    previous = summary_of(case).text
    assert previous and not summary_of(case).stale
    mark_stale(case_ids=[case.pk])
    spy = SummarizeSpy(monkeypatch, writer_for=lambda case_id: FailingWriter())

    expected = [dt.timedelta(hours=20), dt.timedelta(hours=44), dt.timedelta(hours=164), dt.timedelta(hours=164)]
    for attempt, delay in enumerate(expected, start=1):
        before = timezone.now()
        run = refresh_firm(firm_id=case.firm_id)
        assert (run.status, run.claimed, run.failed, run.rewritten) == ("done", 1, 1, 0)
        row = summary_of(case)
        assert (row.stale, row.text, row.last_error, row.attempts) == (True, previous, "model unavailable", attempt)
        assert before + delay <= row.next_attempt_after <= timezone.now() + delay
        assert backoff_delay(attempt) == delay
        # Backing off: tonight's next run leaves it alone and does not count it as skipped.
        idle = refresh_firm(firm_id=case.firm_id)
        assert (idle.claimed, idle.skipped) == (0, 0)
        CaseSummary.objects.filter(case=case).update(next_attempt_after=timezone.now() - dt.timedelta(seconds=1))
    assert len(spy.case_ids) == 4

    spy._writer_for = None  # the model is back
    run = refresh_firm(firm_id=case.firm_id)
    row = summary_of(case)
    assert (run.rewritten, row.stale, row.attempts, row.last_error, row.next_attempt_after) == (1, False, 0, "", None)


@pytest.mark.django_db
def test_a_change_during_the_rewrite_keeps_the_case_stale(monkeypatch) -> None:
    case = CaseFactory()
    spy = SummarizeSpy(monkeypatch, writer_for=lambda case_id: BumpingWriter())
    run = refresh_firm(firm_id=case.firm_id)
    row = summary_of(case)
    assert (run.claimed, run.rewritten) == (1, 1)  # saved, and not claimed twice in one run
    assert row.text and row.stale and row.generation == row.written_generation + 1
    assert row.next_attempt_after is None  # the claim is released: due again next run
    spy._writer_for = None
    assert refresh_firm(firm_id=case.firm_id).rewritten == 1
    assert not summary_of(case).stale


@pytest.mark.django_db
def test_token_budget_stops_claiming(openai_server, refresh_settings) -> None:
    openai_server.default_chat = valid_reply()  # 516 tokens a call
    firm = FirmFactory()
    CaseFactory.create_batch(4, firm=firm)
    refresh_settings.GRAPH_MEMORY = {**refresh_settings.GRAPH_MEMORY, "NIGHTLY_TOKEN_BUDGET": 600}
    run = refresh_firm(firm_id=firm.pk)
    # The second case starts under budget and is finished; then claiming stops.
    assert (run.claimed, run.rewritten, run.skipped, run.tokens_used) == (2, 2, 2, 1032)
    refresh_settings.GRAPH_MEMORY = {**refresh_settings.GRAPH_MEMORY, "NIGHTLY_TOKEN_BUDGET": 0}
    spent = refresh_firm(firm_id=firm.pk)
    assert (spent.claimed, spent.skipped, openai_server.calls(CHAT)) == (0, 2, 2)


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_refreshes_of_one_firm_never_rewrite_a_case_twice(monkeypatch) -> None:
    firm = FirmFactory()
    cases = CaseFactory.create_batch(12, firm=firm)
    spy = SummarizeSpy(monkeypatch)
    spy.before = lambda case_id: time.sleep(0.05)  # let the two workers interleave

    runs = run_in_threads(*[lambda: refresh_firm(firm_id=firm.pk, limit=100)] * 2)

    assert sorted(spy.case_ids) == sorted(c.pk for c in cases)  # each exactly once
    assert sum(r.rewritten for r in runs) == sum(r.claimed for r in runs) == 12
    assert all(r.status == "done" and r.claimed > 0 for r in runs)  # both really worked at once
    assert not CaseSummary.objects.filter(firm=firm, stale=True).exists()


@pytest.mark.django_db(transaction=True)
def test_a_dropped_connection_fails_the_run_record_and_the_next_run_completes(monkeypatch) -> None:
    firm = FirmFactory()
    CaseFactory.create_batch(3, firm=firm)
    spy = SummarizeSpy(monkeypatch)

    def drop_once(case_id: int) -> None:
        spy.before = None
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")

    spy.before = drop_once
    run = refresh_firm(firm_id=firm.pk)
    stored = RefreshRun.objects.get(pk=run.pk)
    assert (stored.status, stored.claimed, stored.rewritten) == ("failed", 1, 0)
    assert stored.finished_at is not None and "OperationalError" in stored.error

    after = refresh_firm(firm_id=firm.pk)
    # The interrupted case stays leased for a while; the other two are rewritten.
    assert (after.status, after.claimed, after.rewritten) == ("done", 2, 2)


@pytest.mark.django_db
def test_missing_embeddings_are_retried_through_the_hook(monkeypatch) -> None:
    calls = []

    def backfill_missing_embeddings(*, firm_id: int, limit: int) -> int:
        calls.append((firm_id, limit))
        return 3

    monkeypatch.setattr(embeddings, "backfill_missing_embeddings", backfill_missing_embeddings)
    case = CaseFactory()
    run = refresh_firm(firm_id=case.firm_id, limit=7)
    assert (run.status, run.rewritten, run.embedded, calls) == ("done", 1, 3, [(case.firm_id, 7)])

    def broken(*, firm_id: int, limit: int) -> int:
        raise RuntimeError("embedder down")

    monkeypatch.setattr(embeddings, "backfill_missing_embeddings", broken)
    run = refresh_firm(firm_id=case.firm_id)
    assert run.status == "done" and "embedder down" in run.error  # summaries never depend on search


@pytest.mark.django_db
def test_a_misconfigured_writer_fails_the_run_before_any_claim(monkeypatch, refresh_settings) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    refresh_settings.GRAPH_MEMORY = {**refresh_settings.GRAPH_MEMORY, "WRITER": "openai"}
    case = CaseFactory()
    run = refresh_firm(firm_id=case.firm_id)
    assert (run.status, run.claimed) == ("failed", 0) and "OPENAI_API_KEY" in run.error
    assert summary_of(case).next_attempt_after is None  # nothing leased: the next good run takes it

