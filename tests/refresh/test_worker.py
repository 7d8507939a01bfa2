"""The nightly task end to end on a real Celery worker with the Redis broker."""

from __future__ import annotations

import socket
import time
import uuid

import pytest
from celery.contrib.testing.worker import start_worker
from celery.result import EagerResult

from config.celery import app
from graph_memory.models import CaseSummary, RefreshRun
from graph_memory.tasks import refresh_all_firms_task

BROKER = "redis://127.0.0.1:6379/0"


def redis_reachable() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
    except OSError:
        return False
    return True


@pytest.fixture
def redis_worker():
    """A worker thread on a queue of its own, so parallel test runs never take each other's tasks."""
    if not redis_reachable():
        pytest.skip("no Redis broker reachable at 127.0.0.1:6379 (start redis-server to run this test)")
    queue = f"graph-memory-test-{uuid.uuid4().hex}"
    # Settings run tasks eagerly when CELERY_BROKER_URL is unset; this test needs the real broker.
    overrides = {
        "broker_url": BROKER,
        "task_always_eager": False,
        "task_default_queue": queue,
        "result_backend": None,
        "task_ignore_result": True,
    }
    saved = {key: app.conf.get(key) for key in overrides}
    app.conf.update(overrides)
    forget_connections()
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, queues=[queue], shutdown_timeout=30):
            yield queue
    finally:
        with app.connection_for_write() as conn:
            conn.default_channel.queue_delete(queue)
            client = conn.default_channel.client
            client.delete(*client.scan_iter(match=f"*{queue}*"), f"_kombu.binding.{queue}")
        app.conf.update(saved)
        forget_connections()


def forget_connections() -> None:
    # The app caches its broker pools on first use; an earlier test may have
    # built them for the default (unused) broker, so drop them both ways.
    app._pool = None
    app.amqp._producer_pool = None


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_the_nightly_task_runs_end_to_end_on_a_worker(demo_firm, redis_worker, settings) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "EMBEDDER": "none", "WRITER": "extractive"}
    stale = CaseSummary.objects.filter(firm=demo_firm, stale=True).count()
    assert stale >= 1  # importing the firm flagged its cases

    sent = refresh_all_firms_task.delay()  # what beat sends every night
    assert not isinstance(sent, EagerResult)  # through Redis, not run in this thread

    deadline = time.monotonic() + 60
    run = None
    while time.monotonic() < deadline:
        run = RefreshRun.objects.filter(firm=demo_firm).exclude(status=RefreshRun.Status.RUNNING).first()
        if run is not None:
            break
        time.sleep(0.2)
    assert run is not None, "the worker did not finish the demo firm's refresh within 60 s"
    assert (run.status, run.trigger, run.claimed, run.rewritten, run.failed) == ("done", "nightly", stale, stale, 0)
    assert not CaseSummary.objects.filter(firm=demo_firm, stale=True).exists()
    assert all(s.text for s in CaseSummary.objects.filter(firm=demo_firm))
