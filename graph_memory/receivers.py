"""Receivers on the host's models, connected from what the adapter names. They only flag or enqueue.

- Stale flags: a relevant change flips the case's flag (one UPDATE, no model
  call), inside the transaction that made the change, so the flag commits or
  rolls back with it.
- Document indexes: a change to a processed document flags its routing index
  (one statement, like a summary's flag).
- Last activity: every save of a case recomputes when it was last active
  (summaries/activity.py: the host's clock moves on a save), in the save's
  transaction, as the stale flags.
- Connection map: a change to a case's header, team or counterparties syncs
  that case's part of the map, and a renamed party or lawyer refreshes one
  label, once the host's transaction commits (at once when none is open):
  while a case is being deleted its team rows go first, and a sync at that
  moment would re-create edges of a case about to disappear.

Nothing here ever fails the host's write. Each reaction runs in a savepoint
of the host's transaction (when one is open), so even a database error rolls
back to it and leaves the host's statements going; a reaction that fails,
here or after the commit, is logged and recorded with its own exception
(`refresh/missed.py`), and the next nightly run redoes the work.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Model, QuerySet
from django.db.models.signals import m2m_changed, post_delete, post_init, post_save

from graph_memory import conf, signals, tasks
from graph_memory.adapter import Changes, ManyToManyWatch, Watch, case_model, get_adapter
from graph_memory.consent import service as consent_service
from graph_memory.documents.routing import mark_documents_stale
from graph_memory.ledger import users as ledger_users
from graph_memory.map import graph
from graph_memory.models import MissedChange
from graph_memory.plumbing import retention
from graph_memory.refresh.marking import mark_stale
from graph_memory.refresh.missed import guarded, record_failure
from graph_memory.summaries import activity
from graph_memory.vectors import embeddings

logger = logging.getLogger(__name__)

_UNKNOWN = object()  # a deferred field: treated as changed, since a missed flag costs more than an extra rewrite


def _loaded(instance: Any, fields: tuple[str, ...]) -> tuple[Any, ...]:
    # __dict__ rather than getattr: reading a deferred field would cost a query.
    return tuple(instance.__dict__.get(name, _UNKNOWN) for name in fields)


def _own_deletion(sender: type, origin: Any) -> bool:
    """False when the row goes because its case (or firm) is being deleted.

    Marking then would re-create the summary row of a case that is on its way
    out. `origin` is what `.delete()` was called on.
    """
    if isinstance(origin, QuerySet):
        return origin.model is sender
    return isinstance(origin, sender)


def _after_commit(run: Callable[[], Any], *, work: str, model: type[Model], object_id: Any, **known: Any) -> None:
    """Run `run()` once the host's transaction commits; a failure then is recorded, never raised."""

    def reaction() -> None:
        try:
            run()
        except Exception as exc:
            record_failure(work=work, error=exc, model=model, object_id=object_id, **known)

    transaction.on_commit(reaction, robust=True)


def _sync_after_commit(case_ids: Iterable[int] | QuerySet[Any], *, model: type[Model], object_id: Any) -> None:
    ids = list(case_ids.values_list("pk", flat=True)) if isinstance(case_ids, QuerySet) else list(case_ids)
    for case_id in ids:
        _after_commit(
            functools.partial(graph.graph_sync_case, case_id=case_id),
            work=MissedChange.Work.GRAPH, model=model, object_id=object_id, case_ids=[case_id],
        )  # fmt: skip


def _connect_watch(
    watch: Watch, act: Callable[[Any, Any], object], *, purpose: str, work: str, deletes_own_only: bool
) -> None:
    """post_init / post_save / post_delete receivers that call `act(case_ids, instance)` when `watch` says a
    change counts; a failure (the adapter's code included) is recorded, never raised."""
    uid = f"graph_memory.{purpose}.{watch.model._meta.label_lower}"
    memo = f"_graph_memory_{purpose}"
    fields = watch.fields

    def react(instance: Any, counts: Callable[[], bool]) -> None:
        named: Any = None  # case ids, or for documents (case id, key) pairs
        try:
            if not counts():
                return
            with guarded():
                named = watch.case_ids(instance)
                act(named, instance)
        except Exception as exc:
            pairs = work == MissedChange.Work.DOCUMENT and isinstance(named, list | tuple)
            record_failure(
                work=work, error=exc, model=watch.model, instance=instance,
                case_ids=[case_id for case_id, _ in named] if pairs else named,
                detail={"documents": [list(ref) for ref in named]} if pairs else None,
            )  # fmt: skip

    def relevant(*snapshots: tuple[Any, ...]) -> bool:
        if watch.relevant is None:
            return True
        return any(_UNKNOWN in values or watch.relevant(dict(zip(fields or (), values, strict=True)))
                   for values in snapshots)  # fmt: skip

    def loaded(sender: Any, instance: Any, **kwargs: Any) -> None:
        setattr(instance, memo, _loaded(instance, fields or ()))

    def saved(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
        now = _loaded(instance, fields or ())
        before = getattr(instance, memo, None)
        setattr(instance, memo, now)

        def counts() -> bool:
            if created:
                return watch.on_create and relevant(now)
            if fields is None:
                return True
            changed = before is None or now != before or _UNKNOWN in now
            return (changed or not watch.only_when_changed) and relevant(*(s for s in (before, now) if s is not None))

        react(instance, counts)

    def deleted(sender: Any, instance: Any, origin: Any = None, **kwargs: Any) -> None:
        if deletes_own_only and not _own_deletion(sender, origin):
            return
        react(instance, lambda: relevant(_loaded(instance, fields or ())))

    if fields is not None:
        post_init.connect(loaded, sender=watch.model, dispatch_uid=f"{uid}.loaded", weak=False)
    post_save.connect(saved, sender=watch.model, dispatch_uid=f"{uid}.saved", weak=False)
    post_delete.connect(deleted, sender=watch.model, dispatch_uid=f"{uid}.deleted", weak=False)


def _connect_m2m(link: ManyToManyWatch) -> None:
    def changed(sender: Any, instance: Any, action: str, reverse: bool, pk_set: set[int] | None, **kwargs: Any) -> None:
        # add() bulk-creates and fires no post_save; remove() and clear() delete
        # rows one by one, which the link model's post_delete already sees for
        # stale flags. clear() from the far side names no cases, so they are read
        # before the rows go.
        case_ids: list[int] | None = None
        synced = False
        try:
            if not reverse:
                case_ids = [instance.pk] if action in {"post_add", "post_remove", "post_clear"} else []
            elif action == "pre_clear":
                with guarded():
                    case_ids = get_adapter().graph_linked_case_ids(instance)
            else:
                case_ids = sorted(pk_set or ()) if action in {"post_add", "post_remove"} else []
            if not case_ids:
                return
            _sync_after_commit(case_ids, model=type(instance), object_id=instance.pk)
            synced = True
            if link.stale and action == "post_add":
                with guarded():
                    mark_stale(case_ids=case_ids)
        except Exception as exc:
            missed = [] if synced else [MissedChange.Work.GRAPH]
            missed += [MissedChange.Work.STALE] if link.stale and action == "post_add" else []
            for work in missed:
                record_failure(work=work, error=exc, model=type(instance), instance=instance, case_ids=case_ids)

    m2m_changed.connect(
        changed, sender=link.through, dispatch_uid=f"graph_memory.m2m.{link.through._meta.label_lower}", weak=False
    )


def _connect_label(model: type[Model], kinds: tuple[str, ...], fields: tuple[str, ...] | None) -> None:
    def saved(sender: Any, instance: Any, created: bool, update_fields: Any = None, **kwargs: Any) -> None:
        # A new row has no node until a case links it; a login saves last_login alone.
        if created or (fields and update_fields is not None and not set(fields) & set(update_fields)):
            return
        for kind in kinds:
            _after_commit(
                functools.partial(graph.graph_refresh_label, kind=kind, ref_id=instance.pk),
                work=MissedChange.Work.LABEL, model=sender, object_id=instance.pk, detail={"kind": kind},
            )  # fmt: skip

    post_save.connect(saved, sender=model, dispatch_uid=f"graph_memory.label.{model._meta.label_lower}", weak=False)


def connect(changes: Changes) -> None:
    """Connect every receiver the adapter's `changes()` calls for (idempotent: fixed dispatch uids)."""
    work = MissedChange.Work
    for watch in changes.stale:
        _connect_watch(watch, _stale, purpose="stale", work=work.STALE, deletes_own_only=True)
    for watch in changes.graph:
        _connect_watch(
            watch, lambda ids, row: _sync_after_commit(ids, model=type(row), object_id=row.pk),
            purpose="graph", work=work.GRAPH, deletes_own_only=False,
        )  # fmt: skip
    for link in changes.m2m:
        _connect_m2m(link)
    for model, kinds in changes.labels.items():
        _connect_label(model, (kinds,) if isinstance(kinds, str) else tuple(kinds), changes.label_fields.get(model))
    for watch in changes.documents:  # here `case_ids` gives (case id, document key) pairs
        _connect_watch(
            watch, lambda refs, _: mark_documents_stale(documents=refs),
            purpose="document", work=work.DOCUMENT, deletes_own_only=True,
        )  # fmt: skip
    signals.summary_saved.connect(_summary_saved, dispatch_uid="graph_memory.vectors.embeddings.summary_saved")
    post_save.connect(_case_saved, sender=case_model(), dispatch_uid="graph_memory.summaries.activity.case_saved", weak=False)
    # The case and every record of it the memory watches (cascaded with it, or deleted alone).
    for model in {case_model(), *(watch.model for watch in (*changes.stale, *changes.graph))}:
        post_delete.connect(
            _record_deleted, sender=model, dispatch_uid=f"graph_memory.plumbing.retention.{model._meta.label_lower}", weak=False
        )


# Set on a saved case whose last activity the stale flag's statement has just recomputed (`_stale`), so that
# `_case_saved`, which runs after it for the same save (receivers run in the order `connect` made them), does
# not write it a second time. Taken off by `_case_saved`, so it never outlives the save.
_ACTIVITY_DONE = "_graph_memory_activity_done"


def _stale(case_ids: Any, row: Any) -> None:
    """A watched change: flag these cases' summaries (their activity recomputed in the same statement)."""
    marked = mark_stale(case_ids=case_ids)
    if isinstance(row, case_model()) and isinstance(case_ids, list | tuple) and list(case_ids) == [row.pk]:
        row.__dict__[_ACTIVITY_DONE] = marked == 1  # 0: excluded from the memory, its activity left to _case_saved


def _case_saved(sender: Any, instance: Any, **kwargs: Any) -> None:
    """A case saved: its host clock may have moved (an `auto_now` field does on every save); unless the stale
    flag's statement for this save recomputed its activity already."""
    if instance.__dict__.pop(_ACTIVITY_DONE, False):
        return
    try:
        with guarded():
            activity.activity_touch(case_ids=[instance.pk])
    except Exception as exc:
        record_failure(work=MissedChange.Work.ACTIVITY, error=exc, model=sender, instance=instance, case_ids=[instance.pk])


def _record_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    """A deleted record's text leaves admin's log too, in the deletion's transaction (admin logs a deletion first)."""
    try:
        with guarded():
            retention.admin_log_redact(model=sender, object_ids=[instance.pk])
    except Exception as exc:
        record_failure(work=MissedChange.Work.RETENTION, error=exc, model=sender, instance=instance)


def _summary_saved(sender: Any, case_id: int, summary: Any = None, **kwargs: Any) -> None:
    """Search: enqueue the embedding of a freshly saved summary; an enqueue failure is left to the nightly backfill."""
    if conf.get("EMBEDDER") == "none":
        return
    try:
        tasks.embed_case_summary_task.delay(case_id)
    except Exception:
        logger.exception("could not enqueue the embedding of case %s; the nightly backfill will retry", case_id)
        if summary is not None:
            embeddings.clear_embedding(summary)


# --- the access ledger: a user's firm and firm-admin role (graph_memory/ledger/users.py) -------------------


def connect_ledger() -> None:
    """The user model's receivers that record a user's firm, activity and role in the access ledger, whatever
    the adapter's `changes()` says (idempotent: fixed dispatch uids)."""
    user = get_user_model()
    post_save.connect(_user_saved, sender=user, dispatch_uid="graph_memory.ledger.user_saved", weak=False)
    post_delete.connect(_user_deleted, sender=user, dispatch_uid="graph_memory.ledger.user_deleted", weak=False)
    if get_adapter().case_client_field:
        post_save.connect(
            _case_created, sender=case_model(), dispatch_uid="graph_memory.consent.case_created", weak=False
        )


def _case_created(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    # A case opened for a client excluded from the memory (consent): its ended row in the access ledger.
    if created:
        _record_user(lambda: consent_service.record_new_case(case=instance), instance)


def _user_saved(sender: Any, instance: Any, created: bool, update_fields: Any = None, **kwargs: Any) -> None:
    if update_fields is not None and set(update_fields) <= {"last_login"}:
        return  # a login: nothing the wall reads
    _record_user(lambda: ledger_users.record_user(viewer_id=instance.pk, user=instance, created=created), instance)


def _user_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    _record_user(lambda: ledger_users.record_user(viewer_id=instance.pk, user=None), instance)


def _record_user(run: Callable[[], Any], instance: Any) -> None:
    """A failure never fails the host's save: recorded, and redone by the nightly run."""
    try:
        with guarded():
            run()
    except Exception as exc:
        record_failure(work=MissedChange.Work.ACCESS, error=exc, model=type(instance), instance=instance)
