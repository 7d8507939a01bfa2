"""The nightly rewrite: per firm, claim stale cases (those written under an older prompt first, then
oldest first), rewrite each, record the run.

Claiming. A case is claimed in a short transaction that locks its summary
row with `SELECT ... FOR UPDATE SKIP LOCKED`, writes a lease into
`next_attempt_after` and commits. The row lock is never held across a model
call; the lease is what keeps other workers away while the rewrite runs
(every claim skips rows whose `next_attempt_after` is in the future), and it
expires by itself if a worker dies mid-rewrite.

Backoff after a failed rewrite (the flag and the previous summary stay;
`attempts` counts failures since the last success):

    1st failure in a row  -> due again after 20 hours  (the next nightly run)
    2nd failure in a row  -> due again after 44 hours  (skips one night)
    3rd and later         -> due again after 164 hours (weekly)

Each delay is a few hours short of whole days so the run at the same time
on the due night finds the case due even if tonight's run reached it late.
A success resets `attempts` and the backoff.

Counters on the run record: `claimed` = cases this run took; each ends as
`rewritten` (a summary was saved, even if a change during the rewrite left
the case stale for next time), `failed`, or `skipped` (another process was
writing it right then). When the run stops claiming (batch size reached,
token budget spent, or nothing left), the firm's stale cases that were due
but not taken are added to `skipped`. Cases backing off are not counted.

A failure inside one case's rewrite (a model's garbage, a writer bug, a row
the database refuses) is that case's failure: attempt, error and backoff
recorded, and the run goes on to the next case. Only a database connection
that is gone fails the run itself.

The run has a lease too (`RefreshRun.lease_until`, renewed after every
case). A worker killed mid-run leaves its record `running`; the firm's next
run marks every such record past its lease `abandoned` (`abandon_dead_runs`).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError, InterfaceError, connection, transaction
from django.db.models import Case as SqlCase
from django.db.models import F, Q, QuerySet, Sum, Value, When
from django.db.models.functions import Concat, Left
from django.utils import timezone

from graph_memory import conf
from graph_memory.adapter import firm_model
from graph_memory.documents import routing as document_index
from graph_memory.models import AICall, CaseSummary, RefreshRun
from graph_memory.refresh.locks import case_lock
from graph_memory.refresh.missed import repair_missed_changes
from graph_memory.summaries import activity, openai_writer, rulebook
from graph_memory.summaries import rewrite as summary_service
from graph_memory.summaries.writers import get_writer
from graph_memory.vectors import embeddings

logger = logging.getLogger(__name__)

BACKOFF_NEXT_NIGHT = dt.timedelta(hours=20)
BACKOFF_SKIP_ONE_NIGHT = dt.timedelta(hours=44)
BACKOFF_WEEKLY = dt.timedelta(hours=164)
_MIN_LEASE = dt.timedelta(minutes=15)
_ERROR_MAX = 500


@dataclass(frozen=True)
class _Claim:
    pk: int
    case_id: int
    lease: dt.datetime


def due_summaries(*, firm_id: int, now: dt.datetime | None = None) -> QuerySet[CaseSummary]:
    """The firm's stale summaries that may be claimed now (not backing off, not leased)."""
    now = now or timezone.now()
    return CaseSummary.objects.filter(firm_id=firm_id, stale=True).filter(
        Q(next_attempt_after__isnull=True) | Q(next_attempt_after__lte=now)
    )


def backoff_delay(attempts: int) -> dt.timedelta:
    """How long a case waits after its `attempts`-th failure in a row."""
    if attempts <= 1:
        return BACKOFF_NEXT_NIGHT
    if attempts == 2:
        return BACKOFF_SKIP_ONE_NIGHT
    return BACKOFF_WEEKLY


def _lease_length() -> dt.timedelta:
    # Longer than the slowest possible rewrite (every retry timing out), so a
    # lease never expires under a worker that is still writing.
    # One write may step down every response format, each with its retries (the
    # refusals are quick, but a hanging server is not).
    worst = float(conf.get("OPENAI_TIMEOUT")) * (int(conf.get("OPENAI_MAX_RETRIES")) + 1) * len(openai_writer.MODES)
    return max(_MIN_LEASE, dt.timedelta(seconds=4 * worst))


def _claim_next(*, firm_id: int, taken: list[int]) -> _Claim | None:
    now = timezone.now()
    lease = now + _lease_length()
    # SKIP LOCKED: a row another worker is claiming right now is passed over
    # instead of waited for (and, with LIMIT 1, instead of making the query
    # come back empty once that worker's lease hides the row). The lock lasts
    # only until this block commits the lease.
    with transaction.atomic():
        rows = list(
            due_summaries(firm_id=firm_id, now=now)
            .exclude(pk__in=taken)
            # Summaries written under an older prompt first (their statements are free text, served
            # as `legacy` until rewritten), then the longest stale.
            .order_by(
                SqlCase(When(prompt_version__in=rulebook.LEGACY_VERSIONS, then=Value(0)), default=Value(1)),
                F("stale_since").asc(nulls_first=True),
                "pk",
            )
            .select_for_update(skip_locked=True)
            .values_list("pk", "case_id")[:1]
        )
        if not rows:
            return None
        pk, case_id = rows[0]
        CaseSummary.objects.filter(pk=pk).update(next_attempt_after=lease)
    return _Claim(pk=pk, case_id=case_id, lease=lease)


def _release_lease(claim: _Claim) -> None:
    # Compare-and-set on our own lease: if the writer already reset it, or a
    # backoff replaced it, this changes nothing.
    CaseSummary.objects.filter(pk=claim.pk, next_attempt_after=claim.lease).update(next_attempt_after=None)


def _back_off(claim: _Claim) -> None:
    # One UPDATE reading `attempts` as the writer just left it: no read-then-write.
    now = timezone.now()
    CaseSummary.objects.filter(pk=claim.pk).update(
        next_attempt_after=SqlCase(
            When(attempts__lte=1, then=Value(now + BACKOFF_NEXT_NIGHT)),
            When(attempts=2, then=Value(now + BACKOFF_SKIP_ONE_NIGHT)),
            default=Value(now + BACKOFF_WEEKLY),
        )
    )


def _record_unexpected_failure(claim: _Claim, exc: Exception) -> None:
    # The writer promises SummaryFailed after recording the attempt itself;
    # anything else is a bug, recorded here the same way so backoff still works.
    CaseSummary.objects.filter(pk=claim.pk).update(
        attempts=F("attempts") + 1,
        last_error=f"{type(exc).__name__}: {exc}"[:_ERROR_MAX],
        last_attempt_at=timezone.now(),
    )


def _tokens_spent(*, case_id: int, since: dt.datetime) -> int:
    # Every summary call for this case since the claim: one row per HTTP
    # attempt, refused, retried, timed out (an estimate, the server kept
    # generating) or rejected ones included, since all of them were paid for.
    # The case lock keeps on-demand writes of the same case out of this window.
    total = AICall.objects.filter(case_id=case_id, purpose=AICall.Purpose.SUMMARY, created_at__gte=since).aggregate(
        total=Sum(F("tokens_in") + F("tokens_out"))
    )["total"]
    return int(total or 0)


def _rewrite(claim: _Claim, *, writer: Any) -> tuple[str, int]:
    """Rewrite one claimed case; returns ("rewritten" | "failed" | "skipped", tokens spent)."""
    with case_lock(claim.case_id) as locked:
        if not locked:
            _release_lease(claim)  # an on-demand write is under way; leave the case to it
            return "skipped", 0
        started = timezone.now()
        try:
            summary_service.summarize_case(case_id=claim.case_id, writer=writer)
        except summary_service.SummaryFailed:
            outcome = "failed"
        except (DatabaseError, InterfaceError):
            raise  # the database session is gone (summarize_case records anything less): the run fails
        except Exception as exc:
            logger.exception("summary rewrite of case %s raised unexpectedly", claim.case_id)
            _record_unexpected_failure(claim, exc)
            outcome = "failed"
        else:
            outcome = "rewritten"
        # From the call log, whatever the outcome: a saved summary's own counts leave out
        # the attempts that failed on the way (a refused response format, a retried 500).
        tokens = _tokens_spent(case_id=claim.case_id, since=started)
    if outcome == "rewritten":
        _release_lease(claim)
    else:
        _back_off(claim)
    return outcome, tokens


def _backfill_embeddings(run: RefreshRun, *, limit: int) -> None:
    try:
        result = embeddings.backfill_missing_embeddings(firm_id=run.firm_id, limit=limit)
    except DatabaseError:
        raise
    except Exception as exc:
        # Search is a bonus layer: the summaries are saved, so the run is done.
        logger.exception("embedding backfill failed for firm %s", run.firm_id)
        run.error = f"embedding backfill failed: {type(exc).__name__}: {exc}"[:_ERROR_MAX]
        return
    if isinstance(result, int):
        run.embedded += result
    elif hasattr(result, "embedded"):
        run.embedded += int(result.embedded)
    elif result is not None:
        run.embedded += len(result)


def _rebuild_document_indexes(run: RefreshRun, *, budget: int | None) -> None:
    # After the summaries, with what is left of the same per-firm budget (documents/index.py).
    left = None if budget is None else max(int(budget) - run.tokens_used, 0)
    if left == 0:
        return
    result = document_index.rebuild_stale_indexes(firm_id=run.firm_id, budget=left, backoff=backoff_delay)
    run.tokens_used += result.tokens
    logger.info("firm %s: %s document indexes rebuilt, %s failed", run.firm_id, result.rebuilt, result.failed)


def _finish(run: RefreshRun, *, status: str, error: str) -> None:
    run.status = status
    run.error = error[:_ERROR_MAX]
    run.finished_at = timezone.now()
    try:
        run.save()
    except DatabaseError:
        if connection.in_atomic_block:
            raise
        # The connection died mid-run: a fresh one records the outcome, so no
        # run is left "running" and the next run starts from a clean slate.
        connection.close()
        run.save()


_COUNTERS = ["claimed", "rewritten", "failed", "skipped", "tokens_used", "lease_until"]


def abandon_dead_runs(*, firm_id: int, now: dt.datetime | None = None) -> int:
    """Mark the firm's runs still `running` past their lease as `abandoned`; return how many.

    A run's lease is as long as a case's (`_lease_length`, four times the
    slowest possible rewrite) and is renewed after every case, so a live
    worker is always inside it, the next rewrite or the embedding backfill
    included; a run past it has lost its worker (SIGKILL, a lost machine) and
    nothing would ever finish its record. The case it was writing needs
    nothing: that case's lease runs out with the run's. One UPDATE,
    conditional on the status, so two runs starting at once mark each dead
    run once. Runs recorded before leases existed count from their start.
    """
    now = now or timezone.now()
    expired = Q(lease_until__lt=now) | Q(lease_until__isnull=True, started_at__lt=now - _lease_length())
    return RefreshRun.objects.filter(expired, firm_id=firm_id, status=RefreshRun.Status.RUNNING).update(
        status=RefreshRun.Status.ABANDONED,
        error="abandoned: its worker stopped before finishing (the run's lease ran out)",
    )


def refresh_firm(
    *,
    firm_id: int,
    limit: int | None = None,
    trigger: str = "nightly",
    progress: Callable[[RefreshRun], None] | None = None,
) -> RefreshRun:
    """Rewrite up to `limit` (default NIGHTLY_BATCH_SIZE) of one firm's stale summaries, oldest first.

    Never touches another firm's cases. Stops claiming once the firm's
    NIGHTLY_TOKEN_BUDGET (if set) is spent; the case that crosses the budget
    is finished, not cut off. Then retries missing embeddings. Returns the
    run record, always finished: `done`, or `failed` with the error if
    something escaped (for example the database connection dropping). Never
    raises for a failed rewrite, and no case's failure fails the run;
    `progress`, if given, is called after each claimed case. First marks
    the firm's earlier runs whose worker died `abandoned`, redoes the
    host changes the memory missed (`refresh/missed.py`) and catches up
    the cases' last activity (`summaries/activity.py`).
    """
    cap = int(conf.get("NIGHTLY_BATCH_SIZE") if limit is None else limit)
    budget = conf.get("NIGHTLY_TOKEN_BUDGET")
    run = RefreshRun.objects.create(firm_id=firm_id, trigger=trigger, lease_until=timezone.now() + _lease_length())
    taken: list[int] = []
    try:
        abandon_dead_runs(firm_id=firm_id)
        # Before claiming: a case a missed change flags now is rewritten tonight.
        repaired = repair_missed_changes(firm_id=firm_id)
        if repaired.repaired or repaired.still_open:
            logger.info("firm %s: %s missed changes repaired, %s still open", firm_id, repaired.repaired, repaired.still_open)
        # What the receivers never heard (cases bulk-created, clocks moved past Django's saves): the index's order.
        activity.activity_rebuild(firm_id=firm_id)
        # One writer (one HTTP client) for the whole run: building a client
        # costs about as much as a fast model call. Built before any claim, so
        # a misconfigured writer fails the run without leasing a case.
        writer = get_writer()
        while run.claimed < cap and (budget is None or run.tokens_used < budget):
            claim = _claim_next(firm_id=firm_id, taken=taken)
            if claim is None:
                break
            taken.append(claim.pk)
            run.claimed += 1
            outcome, tokens = _rewrite(claim, writer=writer)
            setattr(run, outcome, getattr(run, outcome) + 1)
            run.tokens_used = AICall.bounded(run.tokens_used + tokens)
            # Saved as it goes, so admin shows a long run's progress; the renewed lease covers
            # the next case (or the backfill), as each case's own lease does.
            run.lease_until = timezone.now() + _lease_length()
            run.save(update_fields=_COUNTERS)
            if progress is not None:
                progress(run)
        run.skipped += due_summaries(firm_id=firm_id).exclude(pk__in=taken).count()
        _rebuild_document_indexes(run, budget=budget)
        _backfill_embeddings(run, limit=max(cap, 1))
    except Exception as exc:
        logger.exception("refresh of firm %s failed", firm_id)
        _finish(run, status=RefreshRun.Status.FAILED, error=f"{type(exc).__name__}: {exc}")
    else:
        _finish(run, status=RefreshRun.Status.DONE, error=run.error)
    return run


def firms_to_refresh() -> list[int]:
    """The ids of every firm the nightly run visits, in a stable order (tasks.py fans out one task each)."""
    return list(firm_model().objects.order_by("pk").values_list("pk", flat=True))


QUEUE_UNAVAILABLE = "queue unavailable"


def record_unqueued_runs(*, firm_ids: list[int], error: str, trigger: str = "nightly") -> list[RefreshRun]:
    """Record tonight's run of each firm as `failed` with "queue unavailable: <error>": the fan-out could not
    enqueue them (the broker is down), so no worker will ever start them.

    Nothing was claimed, so every stale case stays stale and due: the next night's run takes it as usual.
    """
    now = timezone.now()
    reason = f"{QUEUE_UNAVAILABLE}: {error}"[:_ERROR_MAX]
    return RefreshRun.objects.bulk_create(
        RefreshRun(firm_id=firm_id, trigger=trigger, status=RefreshRun.Status.FAILED, error=reason, finished_at=now)
        for firm_id in firm_ids
    )


def note_on_run(*, firm_id: int, run_id: int, note: str) -> None:
    """Add `note` to a finished run's `error` (the field a `done` run keeps its side failures in), leaving its status.

    For what fails after the run itself finished (its search-index follow-up): the summaries were written,
    so the run stays `done`. One UPDATE, appending, so two notes never overwrite each other.
    """
    separator = SqlCase(When(error="", then=Value("")), default=Value("; "))
    RefreshRun.objects.filter(firm_id=firm_id, pk=run_id).update(
        error=Left(Concat(F("error"), separator, Value(note)), _ERROR_MAX)
    )
