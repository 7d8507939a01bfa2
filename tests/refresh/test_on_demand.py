"""A first summary on the spot, single-flight (graph_memory/refresh/on_demand.py)."""

from __future__ import annotations

import threading
import time

import pytest

from graph_memory.models import AICall, CaseSummary
from graph_memory.refresh import ensure_summary, refresh_firm
from graph_memory.refresh.locks import case_lock
from practice.models import Case
from tests.factories import CaseFactory
from tests.openai_server import Reply
from tests.refresh_support import run_in_threads, valid_reply

CHAT = "/v1/chat/completions"


@pytest.fixture(autouse=True)
def refresh_settings(settings):
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "EMBEDDER": "none", "OPENAI_MAX_RETRIES": 0, "OPENAI_TIMEOUT": 10.0}


class HeldLock:
    """Holds a case's lock from another connection, as a concurrent writer would."""

    def __init__(self, case_id: int) -> None:
        self.case_id = case_id
        self.taken, self.release = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._hold)

    def _hold(self) -> None:
        from django.db import connection

        try:
            with case_lock(self.case_id) as locked:
                assert locked
                self.taken.set()
                self.release.wait(30)
        finally:
            connection.close()

    def __enter__(self) -> HeldLock:
        self.thread.start()
        assert self.taken.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.thread.join(10)


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_callers_cause_one_model_call(openai_server) -> None:
    openai_server.default_chat = valid_reply(delay=1.0)  # slow model: the second caller must wait
    case = CaseFactory()
    first, second = run_in_threads(*[lambda: ensure_summary(case_id=case.pk, timeout=15)] * 2)
    assert openai_server.calls(CHAT) == 1
    assert AICall.objects.filter(case=case).count() == 1
    assert first is not None and second is not None
    assert first.text and first.text == second.text
    assert not CaseSummary.objects.get(case=case).stale


@pytest.mark.django_db(transaction=True)
def test_a_failed_first_write_is_not_retried_by_the_waiting_caller(openai_server) -> None:
    openai_server.default_chat = Reply.error(500, delay=0.5)
    case = CaseFactory()
    results = run_in_threads(*[lambda: ensure_summary(case_id=case.pk, timeout=15)] * 2)
    assert results == [None, None]  # "no summary yet": the caller answers with header facts
    assert openai_server.calls(CHAT) == 1
    row = CaseSummary.objects.get(case=case)
    assert (row.text, row.stale, row.attempts) == ("", True, 1) and row.last_error


@pytest.mark.django_db
def test_a_slow_model_is_cut_off_at_the_timeout(openai_server) -> None:
    openai_server.default_chat = valid_reply(delay=5.0)
    case = CaseFactory()
    started = time.monotonic()
    assert ensure_summary(case_id=case.pk, timeout=1.0) is None
    assert time.monotonic() - started < 4
    assert openai_server.calls(CHAT) == 1  # no retry while someone waits
    row = CaseSummary.objects.get(case=case)
    assert (row.text, row.stale, row.last_error) == ("", True, "timeout")  # left to the nightly run


@pytest.mark.django_db
def test_no_configured_writer_means_no_summary_yet(monkeypatch, settings) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "EMBEDDER": "none", "WRITER": "openai"}
    assert ensure_summary(case_id=CaseFactory().pk) is None


@pytest.mark.django_db(transaction=True)
def test_gives_up_after_the_timeout_while_another_writes(openai_server) -> None:
    case = CaseFactory()
    with HeldLock(case.pk):
        started = time.monotonic()
        assert ensure_summary(case_id=case.pk, timeout=0.3) is None
        assert 0.3 <= time.monotonic() - started < 3
    assert openai_server.calls() == 0


@pytest.mark.django_db(transaction=True)
def test_the_nightly_run_leaves_a_case_being_written_on_demand(monkeypatch) -> None:
    case = CaseFactory()
    with HeldLock(case.pk):
        run = refresh_firm(firm_id=case.firm_id)
    assert (run.claimed, run.skipped, run.rewritten) == (1, 1, 0)
    assert CaseSummary.objects.get(case=case).next_attempt_after is None  # claim released
    assert refresh_firm(firm_id=case.firm_id).rewritten == 1


@pytest.mark.django_db
def test_an_existing_summary_is_returned_with_one_query(django_assert_num_queries) -> None:
    case = CaseFactory()
    written = ensure_summary(case_id=case.pk)  # extractive writer: no model configured
    assert written is not None and written.text
    with django_assert_num_queries(1):
        again = ensure_summary(case_id=case.pk)
    assert again.pk == written.pk and again.text == written.text


@pytest.mark.django_db
def test_a_case_never_marked_or_missing() -> None:
    case = CaseFactory()
    CaseSummary.objects.filter(case=case).delete()
    assert ensure_summary(case_id=case.pk).text
    missing = Case.objects.order_by("-pk").values_list("pk", flat=True).first() + 1000
    assert ensure_summary(case_id=missing) is None
