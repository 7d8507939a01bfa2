"""Receivers on the host's models, connected from what the adapter names. They only flag or enqueue.

- Stale flags: a relevant change flips the case's flag (one UPDATE, no model
  call), inside the transaction that made the change, so the flag commits or
  rolls back with it.
- Document indexes: a change to a processed document flags its routing index
  (one statement, like a summary's flag).
- Connection map: a change to a case's header, team or counterparties syncs
  that case's part of the map, and a renamed party or lawyer refreshes one
  label, once the host's transaction commits (at once when none is open):
  while a case is being deleted its team rows go first, and a sync at that
  moment would re-create edges of a case about to disappear. A sync that
  fails is logged and leaves drift for the next `rebuild_graph` to fix.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from django.db import transaction
from django.db.models import Model, QuerySet
from django.db.models.signals import m2m_changed, post_delete, post_init, post_save

from graph_memory import conf, embeddings, events, graph, retention, tasks
from graph_memory.adapter import Changes, ManyToManyWatch, Watch, case_model, get_adapter
from graph_memory.documents.index import mark_documents_stale
from graph_memory.refresh.marking import mark_stale

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


def _sync_after_commit(case_ids: Iterable[int] | QuerySet[Any]) -> None:
    ids = list(case_ids.values_list("pk", flat=True)) if isinstance(case_ids, QuerySet) else list(case_ids)
    for case_id in ids:
        transaction.on_commit(partial(graph.graph_sync_case, case_id=case_id), robust=True)


def _connect_watch(watch: Watch, act: Callable[[Any], None], *, purpose: str, deletes_own_only: bool) -> None:
    """post_init / post_save / post_delete receivers that call `act(case_ids)` when `watch` says a change counts."""
    uid = f"graph_memory.{purpose}.{watch.model._meta.label_lower}"
    memo = f"_graph_memory_{purpose}"
    fields = watch.fields

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
        if created:
            counts = watch.on_create and relevant(now)
        elif fields is None:
            counts = True
        else:
            changed = before is None or now != before or _UNKNOWN in now
            counts = (changed or not watch.only_when_changed) and relevant(*(s for s in (before, now) if s is not None))
        if counts:
            act(watch.case_ids(instance))

    def deleted(sender: Any, instance: Any, origin: Any = None, **kwargs: Any) -> None:
        if deletes_own_only and not _own_deletion(sender, origin):
            return
        if relevant(_loaded(instance, fields or ())):
            act(watch.case_ids(instance))

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
        if not reverse:
            case_ids = [instance.pk] if action in {"post_add", "post_remove", "post_clear"} else []
        elif action == "pre_clear":
            case_ids = get_adapter().graph_linked_case_ids(instance)
        else:
            case_ids = sorted(pk_set or ()) if action in {"post_add", "post_remove"} else []
        _sync_after_commit(case_ids)
        if link.stale and action == "post_add":
            mark_stale(case_ids=case_ids)

    m2m_changed.connect(
        changed, sender=link.through, dispatch_uid=f"graph_memory.m2m.{link.through._meta.label_lower}", weak=False
    )


def _connect_label(model: type[Model], kinds: tuple[str, ...], fields: tuple[str, ...] | None) -> None:
    def saved(sender: Any, instance: Any, created: bool, update_fields: Any = None, **kwargs: Any) -> None:
        # A new row has no node until a case links it; a login saves last_login alone.
        if created or (fields and update_fields is not None and not set(fields) & set(update_fields)):
            return
        for kind in kinds:
            transaction.on_commit(partial(graph.graph_refresh_label, kind=kind, ref_id=instance.pk), robust=True)

    post_save.connect(saved, sender=model, dispatch_uid=f"graph_memory.label.{model._meta.label_lower}", weak=False)


def connect(changes: Changes) -> None:
    """Connect every receiver the adapter's `changes()` calls for (idempotent: fixed dispatch uids)."""
    for watch in changes.stale:
        _connect_watch(watch, lambda ids: mark_stale(case_ids=ids), purpose="stale", deletes_own_only=True)
    for watch in changes.graph:
        _connect_watch(watch, _sync_after_commit, purpose="graph", deletes_own_only=False)
    for link in changes.m2m:
        _connect_m2m(link)
    for model, kinds in changes.labels.items():
        _connect_label(model, (kinds,) if isinstance(kinds, str) else tuple(kinds), changes.label_fields.get(model))
    for watch in changes.documents:  # here `case_ids` gives (case id, document key) pairs
        _connect_watch(watch, lambda refs: mark_documents_stale(documents=refs), purpose="document", deletes_own_only=True)
    events.summary_saved.connect(_summary_saved, dispatch_uid="graph_memory.embeddings.summary_saved")
    # The case and every record of it the memory watches (cascaded with it, or deleted alone).
    for model in {case_model(), *(watch.model for watch in (*changes.stale, *changes.graph))}:
        post_delete.connect(
            _record_deleted, sender=model, dispatch_uid=f"graph_memory.retention.{model._meta.label_lower}", weak=False
        )


def _record_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    """A deleted record's text leaves admin's log too, in the deletion's transaction (admin logs a deletion first)."""
    retention.admin_log_redact(model=sender, object_ids=[instance.pk])


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
