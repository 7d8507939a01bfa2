"""A case asked about before its first summary gets one on the spot, written once however many ask."""

from __future__ import annotations

import logging
import time
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from graph_memory import conf
from graph_memory.models import CaseSummary
from graph_memory.refresh.locks import case_lock
from graph_memory.summaries import rewrite as summary_service
from graph_memory.summaries.writers import get_writer

logger = logging.getLogger(__name__)

# Even a caller that has waited out most of its budget gives the model this long.
_MIN_MODEL_SECONDS = 1.0


def _current(case_id: int) -> CaseSummary | None:
    return CaseSummary.objects.filter(case_id=case_id).first()


def ensure_summary(*, case_id: int, timeout: float | None = None) -> CaseSummary | None:
    """The case's summary, writing the first one now if it has none yet; None if that cannot be done in time.

    Single flight: the writer holds the case's advisory lock, so concurrent
    callers for one case cause one model call; the others wait (up to
    `timeout`, default ON_DEMAND_TIMEOUT seconds) and then read what it saved.
    The writer's model call gets what is left of `timeout` (at least one
    second) and no retries. If the write fails or times out, or the lock is
    not free in time, returns None and the caller answers "no summary yet"
    with header facts only; the case stays stale for the nightly run. Never
    raises for a failed write. An existing summary is returned as is, even if
    stale (the nightly run refreshes it). The caller has already checked that
    the viewer may open the case: this function does not reason about viewers.
    """
    summary = _current(case_id)
    if summary is not None and summary.has_summary:
        return summary
    wait = float(conf.get("ON_DEMAND_TIMEOUT") if timeout is None else timeout)
    asked_at = timezone.now()
    started = time.monotonic()
    with case_lock(case_id, wait=wait) as locked:
        summary = _current(case_id)
        if summary is not None and summary.has_summary:
            return summary  # someone else wrote it while we waited
        if not locked:
            logger.info("on-demand summary of case %s: still being written after %.1fs", case_id, wait)
            return None
        if summary is not None and summary.last_attempt_at is not None and summary.last_attempt_at >= asked_at:
            # The caller we waited for just tried and failed: paying for a
            # second attempt now would double the cost of a bad case.
            return None
        try:
            writer = _writer_within(max(wait - (time.monotonic() - started), _MIN_MODEL_SECONDS))
        except ImproperlyConfigured as exc:
            logger.warning("on-demand summary of case %s: no writer: %s", case_id, exc)
            return None
        try:
            return summary_service.summarize_case(case_id=case_id, writer=writer)
        except summary_service.SummaryFailed as exc:
            logger.info("on-demand summary of case %s failed: %s", case_id, exc)
            return None


def _writer_within(seconds: float) -> Any:
    """The configured writer, its model client (if it has one) bounded to `seconds` and no retries.

    Someone is waiting for this answer: a timed-out write is recorded as a
    failure and left to the nightly run, which retries with the usual limits.
    """
    writer = get_writer()
    client = getattr(writer, "client", None)
    if client is not None and hasattr(client, "with_options"):
        writer.client = client.with_options(timeout=seconds, max_retries=0)  # type: ignore[attr-defined]  # any writer with an openai-style client
    return writer
