"""Writing one case's summary: build the slice, write, verify, save or keep the old one.

Nothing here reasons about viewers: a summary is written from one case's own
records and reads the same whoever asks later (reads filter by viewer).
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.postgres.search import SearchVector
from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError, InterfaceError, connection, transaction
from django.db.models import Case as SqlCase
from django.db.models import F, TextField, Value, When
from django.utils import timezone

from graph_memory import conf, signals
from graph_memory.adapter import case_firm_attname, case_model
from graph_memory.consent.exclusions import case_excluded
from graph_memory.models import AICall, CaseSummary, SummaryVersion
from graph_memory.plumbing.ai_calls import log_model_calls
from graph_memory.summaries import activity, rulebook
from graph_memory.summaries.context import CaseNotFound, ContextSlice, build_context
from graph_memory.summaries.fields import with_field_facts
from graph_memory.summaries.guard import Judgement, judge_rewrite
from graph_memory.summaries.sentences import number
from graph_memory.summaries.verify import Verification, verify_selection
from graph_memory.summaries.writers import ModelCall, Writer, WriterError, get_writer, validate_content

logger = logging.getLogger(__name__)

ERROR_MAX_CHARS = 500


class SummaryFailed(Exception):
    """No summary was saved; the previous one (if any) is untouched. `reason` holds no case text."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SummaryExcluded(SummaryFailed):
    """The case is excluded from the memory (consent): no summary is written, nothing was read or saved."""


def summarize_case(*, case_id: int, writer: Writer | None = None) -> CaseSummary:
    """Write, verify and save the summary of case `case_id`; return the saved row.

    Promises: what is saved is the writer's selection as `verify.verify_selection`
    makes it (the records' own sentences, or deletion-only shortenings that keep
    every meaning word, each citing its record) with the field facts; a
    rewrite that `guard.judge_rewrite` finds markedly poorer than the current
    summary is not saved ("rejected: weaker than current"); a failure of any
    kind (writer error, timeout, garbage, an empty answer, nothing verified,
    rejected by the guard) saves nothing but the error and the attempt's
    report (`CaseSummary.last_attempt`: outcome, reason, the server's
    explanation, the verification report, the guard's figures), keeps the case
    stale, and raises `SummaryFailed`; every HTTP attempt is logged as its own
    `AICall` (counts only, estimated tokens marked) and announced by
    `signals.ai_call_finished`; a change to the case that lands while the
    summary is being written keeps the case stale. `signals.summary_saved` is
    sent after the save commits. Anything else that goes wrong while this
    case is written (a bug, a row the database refuses) is this case's
    failure, recorded the same way (`SummaryFailed`); only a database
    connection that is gone escapes, since then nothing can be recorded.
    A case excluded from the memory (consent) raises `SummaryExcluded` before
    anything is read, written or sent to a model.
    """
    if case_excluded(case_id=case_id):
        raise SummaryExcluded(f"case {case_id} is excluded from the memory (consent): no summary is written")
    firm_id = _case_firm_id(case_id)
    row, _ = CaseSummary.objects.get_or_create(case_id=case_id, defaults={"firm_id": firm_id})
    link = connection.connection  # the session this write runs on (see connection_survived)
    try:
        return _write(row, case_id=case_id, writer=writer)
    except SummaryFailed:
        raise
    except Exception as exc:
        if isinstance(exc, (DatabaseError, InterfaceError)) and not connection_survived(link):
            raise  # the session is gone (and with it the case's lock): the caller's run fails
        logger.exception("summary of case %s failed unexpectedly", case_id)
        reason = unexpected_reason(exc)
        _record_failure(row.pk, reason, attempt=_attempt("error", reason))
        raise SummaryFailed(reason) from None


def connection_survived(link: Any) -> bool:
    """After a database error: whether it was one statement (the session `link` still runs statements)
    or the session itself (terminated, the network gone; Django may already have opened a new one)."""
    return link is not None and connection.connection is link and connection.is_usable()


def unexpected_reason(exc: Exception) -> str:
    """A short reason for an unexpected failure: its type and first line (a database's detail line
    quotes the refused row, which may hold case text)."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first}"[:ERROR_MAX_CHARS] if first else type(exc).__name__


def _write(row: CaseSummary, *, case_id: int, writer: Writer | None) -> CaseSummary:
    # Read before the context is built: a change committed after this point
    # bumps `generation` past it, and the compare-and-set below sees that.
    generation = row.generation
    try:
        context = build_context(case_id=case_id)
    except CaseNotFound:
        raise SummaryFailed("case not found") from None
    try:
        writer = writer or get_writer()
    except ImproperlyConfigured:
        _record_failure(row.pk, "writer not configured", attempt=_attempt("error", "writer not configured"))
        raise SummaryFailed("writer not configured") from None

    try:
        result = writer.write(context)
    except WriterError as exc:
        _log_calls(exc.calls, writer=writer, context=context, outcome=AICall.Outcome.ERROR, error=exc.reason)
        attempt = _attempt("error", exc.reason, writer=writer, calls=exc.calls)
        _record_failure(
            row.pk, f"{exc.reason}: {exc.server_error}" if exc.server_error else exc.reason, attempt=attempt
        )
        raise SummaryFailed(exc.reason) from None
    except Exception as exc:  # a writer bug must not lose the previous summary either
        logger.exception("summary writer %s failed on case %s", writer.name, case_id)
        reason = f"writer error: {type(exc).__name__}"
        _record_failure(row.pk, reason, attempt=_attempt("error", reason, writer=writer))
        raise SummaryFailed(reason) from None

    problem = validate_content(result.content)
    verification = verify_selection(result.content, number(context)) if problem is None else None
    if verification is not None:
        # Field facts are rendered from the records, never written (fields.py): they join the verified narrative here.
        verification = with_field_facts(verification, context)
    # The content as it would be saved, and judged against the current summary.
    content = verification.content if verification is not None else {}
    judgement = (
        judge_rewrite(current=row.content or {}, new=content, report=verification.report, context=context)
        if verification is not None and verification.ok
        else Judgement()
    )
    reason = problem or _unverified(verification) or judgement.reason
    # The extractive writer makes no model call, so it reports no calls and logs no AICall.
    outcome = AICall.Outcome.REJECTED if reason else AICall.Outcome.OK
    attempt = _attempt(
        "saved" if not reason else "rejected", reason, writer=writer, calls=result.calls,
        verification=verification, judgement=judgement,
    )  # fmt: skip
    counts = {"counts": verification.report.get("counts", {}), "guard": judgement.figures} if verification else {}
    _log_calls(result.calls, writer=writer, context=context, outcome=outcome, error=reason, report=counts)
    if reason or verification is None:
        _record_failure(row.pk, reason, attempt=attempt)
        raise SummaryFailed(reason)

    text = rulebook.render_text(content)
    fields: dict[str, Any] = {
        "text": text,
        "content": content,
        "writer": writer.name,
        "model": writer.model,
        "prompt_version": rulebook.PROMPT_VERSION,
        "tokens_in": AICall.bounded(result.tokens_in),
        "tokens_out": AICall.bounded(result.tokens_out),
        "source_ids": verification.source_ids,
        "verification": verification.report,
    }
    now = timezone.now()
    with transaction.atomic():
        CaseSummary.objects.filter(pk=row.pk).update(
            **fields,
            written_at=now,
            written_generation=generation,
            attempts=0,
            last_error="",
            last_attempt_at=now,
            last_attempt=attempt,
            next_attempt_after=None,
            search_vector=_search_vector(context, text),
            # Compare-and-set in the same UPDATE: clear the flag only if no change
            # landed since `generation` was read. A document processed while the
            # model was writing bumped `generation`; this summary does not reflect
            # it, so the case must stay stale for the next run.
            stale=SqlCase(When(generation=generation, then=Value(False)), default=F("stale")),
            stale_since=SqlCase(When(generation=generation, then=Value(None)), default=F("stale_since")),
        )
        SummaryVersion.objects.create(case_id=case_id, firm_id=context.firm_id, generation=generation, **fields)
        # Its written_at (and a cleared stale flag) is one of the case's clocks: the index's order moves with it.
        activity.activity_touch(case_ids=[case_id])
    summary = CaseSummary.objects.get(pk=row.pk)
    # After commit (at once when no transaction is open), and robustly: a failing
    # receiver (embedding, say) can never undo the save.
    transaction.on_commit(lambda: _send_saved(summary), robust=True)
    return summary


def _case_firm_id(case_id: int) -> int:
    firm_column = case_firm_attname()
    firm_id = case_model().objects.filter(pk=case_id).values_list(firm_column, flat=True).first()
    if firm_id is None:
        raise SummaryFailed("case not found")
    return firm_id


def summary_payload(summary: CaseSummary) -> dict[str, Any]:
    """A summary as served anywhere: always with the fixed notice."""
    return {
        "case_id": summary.case_id,
        "text": summary.text,
        "content": summary.content,
        "writer": summary.writer,
        "model": summary.model,
        "prompt_version": summary.prompt_version,
        "written_at": summary.written_at.isoformat() if summary.written_at else None,
        "stale": summary.stale,
        "notice": conf.get("NOTICE"),
    }


def _search_vector(context: ContextSlice, text: str) -> Any:
    names = " ".join(context.party_names)
    return SearchVector(
        Value(f"{context.case_key} {context.title} {names}", output_field=TextField()), weight="A", config="english"
    ) + SearchVector(Value(f"{context.description} {text}", output_field=TextField()), weight="B", config="english")


def _unverified(verification: Verification | None) -> str:
    if verification is None or verification.ok:
        return ""
    if not verification.report.get("counts", {}).get("ids"):
        return "empty answer: no sentence selected"
    return "no selected sentence is in the slice"


def _attempt(
    outcome: str,
    reason: str,
    *,
    writer: Writer | None = None,
    calls: tuple[ModelCall, ...] = (),
    verification: Verification | None = None,
    judgement: Judgement | None = None,
) -> dict[str, Any]:
    """What `CaseSummary.last_attempt` keeps of one attempt (its verification report quotes the dropped statements)."""
    return {
        "at": timezone.now().isoformat(),
        "outcome": outcome,
        "reason": reason,
        "writer": writer.name if writer else "",
        "model": writer.model if writer else "",
        "calls": len(calls),
        "modes": [c.mode for c in calls if c.mode],
        "tokens_in": sum(c.tokens_in for c in calls),
        "tokens_out": sum(c.tokens_out for c in calls),
        "tokens_estimated": any(c.estimated for c in calls),
        "latency_ms": sum(c.latency_ms for c in calls),
        "server_errors": [c.server_error for c in calls if c.server_error],
        "verification": verification.report if verification is not None else None,
        "guard": judgement.figures if judgement is not None else {},
    }


def _record_failure(row_pk: int, reason: str, *, attempt: dict[str, Any]) -> None:
    """One UPDATE: the text and content stay as they were; the flag stays up."""
    CaseSummary.objects.filter(pk=row_pk).update(
        attempts=F("attempts") + 1,
        last_error=reason[:ERROR_MAX_CHARS],
        last_attempt_at=timezone.now(),
        last_attempt=attempt,
    )


def _log_calls(
    calls: tuple[ModelCall, ...],
    *,
    writer: Writer,
    context: ContextSlice,
    outcome: str,
    error: str,
    report: dict[str, Any] | None = None,
) -> None:
    log_model_calls(
        calls, firm_id=context.firm_id, case_id=context.case_id, purpose=AICall.Purpose.SUMMARY,
        writer_name=writer.name, outcome=outcome, error=error, report=report,
    )  # fmt: skip


def _send_saved(summary: CaseSummary) -> None:
    for receiver, response in signals.summary_saved.send_robust(
        sender=CaseSummary, case_id=summary.case_id, summary=summary
    ):
        if isinstance(response, Exception):
            logger.error("summary_saved receiver %r failed: %r", receiver, response)
