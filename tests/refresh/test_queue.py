"""Issue 32: honest run records when the queue is down.

The broker is a real connection failure: a Redis URL on a port of 127.0.0.1 that was just bound and
closed, so publishing is refused by the operating system (no mock of Celery or kombu). The nightly
fan-out then records a failed run per firm ("queue unavailable") and the next night catches up; a firm
run whose search-index follow-up cannot be queued, or fails, stays `done` with the failure noted on it.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from config.celery import app
from graph_memory import tasks
from graph_memory.models import CaseSummary, RefreshRun
from graph_memory.vectors import firm_indexes
from tests.factories import CaseFactory, FirmFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def refresh_settings(settings):
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "EMBEDDER": "none", "WRITER": "extractive"}
    return settings


def _forget_connections() -> None:
    # The app caches its broker pools on first use (as tests/refresh/test_worker.py explains).
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def broker_down() -> Iterator[str]:
    """Tasks sent to a Redis broker on a closed port, not run eagerly; the settings restored afterwards."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    overrides = {"broker_url": f"redis://127.0.0.1:{port}/0", "task_always_eager": False, "result_backend": None}
    saved = {key: app.conf.get(key) for key in overrides}
    app.conf.update(overrides)
    _forget_connections()
    try:
        yield overrides["broker_url"]
    finally:
        app.conf.update(saved)
        _forget_connections()


def test_with_the_broker_down_each_firm_gets_a_failed_run_and_the_next_night_catches_up(
    broker_down: str, django_capture_on_commit_callbacks
) -> None:
    firms = [FirmFactory(), FirmFactory()]
    cases = [case for firm in firms for case in CaseFactory.create_batch(2, firm=firm)]
    assert CaseSummary.objects.filter(case__in=cases, stale=True).count() == len(cases)

    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.refresh_all_firms_task() == sorted(f.pk for f in firms)  # no exception reaches beat

    runs = {run.firm_id: run for run in RefreshRun.objects.all()}
    assert sorted(runs) == sorted(f.pk for f in firms)  # one record per firm for the night
    for run in runs.values():
        assert run.status == "failed" and run.error.startswith("queue unavailable: ") and run.finished_at
        assert (run.trigger, run.claimed, run.rewritten) == ("nightly", 0, 0)
    assert CaseSummary.objects.filter(case__in=cases, stale=True).count() == len(cases)  # nothing lost

    app.conf.update({"task_always_eager": True})  # the broker is back: the next night
    _forget_connections()
    with django_capture_on_commit_callbacks(execute=True):
        tasks.refresh_all_firms_task()
    for firm in firms:
        latest = RefreshRun.objects.filter(firm=firm).first()
        assert (latest.status, latest.claimed, latest.rewritten) == ("done", 2, 2)
    assert not CaseSummary.objects.filter(case__in=cases, stale=True).exists()


def test_a_finished_run_whose_follow_up_cannot_be_queued_stays_done_with_a_note(
    broker_down: str, django_capture_on_commit_callbacks
) -> None:
    case = CaseFactory()
    with django_capture_on_commit_callbacks(execute=True):
        run_id = tasks.refresh_firm_task(case.firm_id)  # what the worker runs; no exception for finished work
    run = RefreshRun.objects.get(pk=run_id)
    assert (run.status, run.rewritten) == ("done", 1)
    assert run.error.startswith("search index follow-up not queued (queue unavailable: OperationalError")


def test_a_follow_up_that_fails_is_noted_on_the_run_it_follows(monkeypatch: pytest.MonkeyPatch) -> None:
    """The index task itself failing (here: the index build raising) notes it on the run, after any earlier note."""
    case = CaseFactory()
    run = RefreshRun.objects.create(firm_id=case.firm_id, status="done", error="embedding backfill failed: X")

    def broken(**kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(firm_indexes, "ensure_search_indexes", broken)
    monkeypatch.setattr(tasks.services, "ensure_search_indexes", broken)
    assert tasks.search_index_firm_task(case.firm_id, run_id=run.pk) == {}
    run.refresh_from_db()
    assert run.status == "done"
    assert run.error == "embedding backfill failed: X; search index follow-up failed: RuntimeError: disk full"
    with pytest.raises(RuntimeError):  # called on its own (the command, a retry), it still raises
        tasks.search_index_firm_task(case.firm_id)
