"""Host changes the memory failed to react to: recorded by the receivers, redone by the next nightly run.

A receiver (`signals.py`) that fails never fails the host's write: it calls
`record_failure`, which logs the failure (the host row, its cases, the
exception's own type and message) and keeps a `MissedChange`. The nightly run
then redoes the work: each firm's run first (`repair_missed_changes(firm_id=...)`,
from `refresh_firm`, before it claims stale cases, so a case flagged now is
rewritten the same night), and the nightly dispatcher the changes no firm
could be told for (`firm_id=None`).

How a change is redone: the map by rebuilding the firm's map (deterministic;
it also refreshes every label), each firm's when the firm is unknown; stale
flags and document indexes by flagging the cases recorded, or, when they were
not known, the cases the adapter names now for the row (read again); admin's
log by redacting it again; a user's firm and role in the access ledger by
recording them as they are then; a case's last activity by recomputing it. A change whose cases cannot be told (its row is
gone and they were never known) stays open, counted on the health page.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.db import connection, transaction
from django.db.models import Model, QuerySet
from django.utils import timezone

from graph_memory.adapter import case_firm_attname, case_model, firm_model, get_adapter
from graph_memory.documents.routing import mark_documents_stale
from graph_memory.ledger import users as ledger_users
from graph_memory.map import graph
from graph_memory.models import MissedChange, Node
from graph_memory.plumbing import retention
from graph_memory.refresh.marking import mark_stale
from graph_memory.summaries import activity

logger = logging.getLogger(__name__)

Work = MissedChange.Work
# Repaired records are kept this long (the health page counts the last nights'), then deleted.
KEEP_REPAIRED = dt.timedelta(days=30)
_ERROR_MAX = MissedChange._meta.get_field("error").max_length or 500
_WHAT = {
    Work.STALE: "flag the summary stale",
    Work.GRAPH: "sync the connection map",
    Work.LABEL: "refresh a node's label",
    Work.DOCUMENT: "flag document indexes stale",
    Work.RETENTION: "redact admin's log",
    Work.ACCESS: "record a user's firm and role in the access ledger",
    Work.ACTIVITY: "recompute the case's last activity",
}


def guarded() -> Any:
    """A savepoint when inside the host's transaction: a database error in the memory's statements rolls
    back to it, and the host's own statements go on (PostgreSQL refuses any statement after an error
    until then). Outside one each statement commits alone and nothing needs undoing."""
    return transaction.atomic() if connection.in_atomic_block else nullcontext()


def error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:_ERROR_MAX]


def _firms_of_cases(case_ids: Sequence[int]) -> set[int]:
    firm_column = case_firm_attname()
    firms = set(case_model()._default_manager.filter(pk__in=case_ids).values_list(firm_column, flat=True))
    # A case deleted since: its node still knows the firm.
    return firms | set(Node.objects.filter(kind=Node.Kind.CASE, ref_id__in=case_ids).values_list("firm_id", flat=True))


def _firm_of_row(instance: Model | None) -> set[int]:
    if instance is None:
        return set()
    if instance._meta.label_lower == firm_model()._meta.label_lower:
        return {instance.pk}
    field = get_adapter().firm_field_of(type(instance))
    firm_id = getattr(instance, f"{field}_id", None) if field else None
    return {firm_id} if firm_id is not None else set()


def _ids(case_ids: Iterable[int] | QuerySet[Any] | None) -> list[int]:
    if case_ids is None:
        return []
    if isinstance(case_ids, QuerySet):
        return sorted(case_ids.values_list("pk", flat=True))
    return sorted({int(pk) for pk in case_ids})


def record_failure(
    *,
    work: str,
    error: BaseException,
    model: type[Model],
    instance: Model | None = None,
    object_id: Any = None,
    case_ids: Iterable[int] | QuerySet[Any] | None = None,
    detail: dict[str, Any] | None = None,
) -> None:
    """Log a reaction to a host change that failed, and keep it for the next nightly run. Never raises.

    The log line names the host row, the cases (when known) and the exception with its own type and
    message (and its traceback). The record goes to the firm of those cases, else of the row.
    """
    object_id = instance.pk if instance is not None and object_id is None else object_id
    label = model._meta.label_lower
    try:
        with guarded():
            ids = _ids(case_ids)
    except Exception:
        ids = []  # the case ids were what failed; the repair asks the adapter again
    logger.error(
        "graph_memory: could not %s after a change to %s #%s (case %s): %s",
        _WHAT[Work(work)], label, object_id, ", ".join(map(str, ids)) or "unknown", error_text(error),
        exc_info=(type(error), error, error.__traceback__),
    )  # fmt: skip
    try:
        with guarded():
            if ids:
                firms = _firms_of_cases(ids)
            elif work == Work.LABEL and detail:  # the nodes standing for that row know their firms
                firms = set(Node.objects.filter(kind=detail["kind"], ref_id=object_id).values_list("firm_id", flat=True))
            else:
                firms = _firm_of_row(instance)
            row = {"work": work, "model": label, "object_id": "" if object_id is None else str(object_id),
                   "case_ids": ids, "detail": detail or {}, "error": error_text(error)}  # fmt: skip
            firm_ids: list[int | None] = [*sorted(firms)] or [None]
            MissedChange.objects.bulk_create(MissedChange(firm_id=firm_id, **row) for firm_id in firm_ids)
    except Exception:
        logger.exception("graph_memory: could not record that failure either (it is logged just above)")


@dataclass
class Repaired:
    """What one repair pass did: records repaired, left open, and maps rebuilt (firm ids)."""

    repaired: int = 0
    still_open: int = 0
    rebuilt: tuple[int, ...] = ()


def _row_again(change: MissedChange) -> Model | None:
    model = apps.get_model(change.model)
    return model._default_manager.filter(pk=change.object_id).first() if change.object_id else None


def _named_now(change: MissedChange, purpose: str) -> list[Any] | None:
    """What the adapter's watches of this model name for the row as it is now (None: the row is gone)."""
    instance = _row_again(change)
    if instance is None:
        return None
    found: list[Any] = []
    for watch in getattr(get_adapter().changes(), purpose):
        if watch.model._meta.label_lower == change.model:
            named = watch.case_ids(instance)
            found += _ids(named) if purpose == "stale" else list(named)
    return found


def _redo(change: MissedChange) -> bool:
    """Redo one change's flags or redaction; False when its cases cannot be told."""
    if change.work == Work.STALE:
        case_ids = change.case_ids or _named_now(change, "stale")
        if case_ids is None:
            return False
        mark_stale(case_ids=case_ids)
    elif change.work == Work.DOCUMENT:
        documents = change.detail.get("documents") or _named_now(change, "documents")
        if documents is None:
            return False
        mark_documents_stale(documents=[(case_id, key) for case_id, key in documents])
    elif change.work == Work.RETENTION:
        retention.admin_log_redact(model=apps.get_model(change.model), object_ids=[change.object_id])
    elif change.work == Work.ACCESS:
        ledger_users.repair(model=change.model, object_id=change.object_id)
    elif change.work == Work.ACTIVITY:
        activity.activity_touch(case_ids=change.case_ids)
    return True


def repair_missed_changes(*, firm_id: int | None) -> Repaired:
    """Redo the open missed changes of one firm (or, `firm_id=None`, those no firm could be told for).

    Each change is redone in its own transaction and marked repaired with it; one that fails again
    is logged, keeps its record (with the new error) and is tried again the next night. Only a
    database connection that is gone fails the pass (writing that error fails too).
    """
    result = Repaired()
    now = timezone.now()
    MissedChange.objects.filter(firm_id=firm_id, repaired_at__lt=now - KEEP_REPAIRED).delete()
    changes = list(MissedChange.objects.filter(firm_id=firm_id, repaired_at__isnull=True).order_by("pk"))
    mapped = [c.pk for c in changes if c.work in (Work.GRAPH, Work.LABEL)]
    if mapped:
        firms = [firm_id] if firm_id is not None else list(firm_model().objects.order_by("pk").values_list("pk", flat=True))
        try:
            for firm in firms:
                graph.graph_rebuild_firm(firm_id=firm)
        except Exception as exc:
            logger.exception("graph_memory: the map rebuild repairing missed changes failed (firm %s)", firm_id)
            MissedChange.objects.filter(pk__in=mapped).update(error=error_text(exc))
            result.still_open += len(mapped)
        else:
            result.repaired += MissedChange.objects.filter(pk__in=mapped).update(repaired_at=timezone.now())
            result.rebuilt = tuple(firms)
    for change in changes:
        if change.pk in mapped:
            continue
        try:
            with transaction.atomic():
                done = _redo(change)
                if done:
                    MissedChange.objects.filter(pk=change.pk).update(repaired_at=timezone.now())
        except Exception as exc:
            logger.exception("graph_memory: repairing missed change %s failed", change.pk)
            MissedChange.objects.filter(pk=change.pk).update(error=error_text(exc))
            done = False
        result.repaired += done
        result.still_open += not done
    return result
