"""Receivers on the host's models (connected through `source`). They only flag or enqueue."""

from __future__ import annotations

from functools import partial
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.db.models.signals import m2m_changed, post_delete, post_init, post_save
from django.dispatch import receiver

from graph_memory import services, source
from graph_memory.refresh.marking import mark_stale

# --- Connection map -----------------------------------------------------------
# Any change to a case's owner, client, team or counterparties syncs that case's
# part of the map; a renamed client, counterparty or lawyer refreshes one label.
# The work runs once the host's transaction commits (at once when none is
# open): while a case is being deleted its team rows go first, and a sync at
# that moment would re-create edges of a case about to disappear. A sync that
# fails is logged and leaves drift for the next `rebuild_graph` to fix.


def _graph_after_commit(fn: Any, **kwargs: Any) -> None:
    transaction.on_commit(partial(fn, **kwargs), robust=True)


@receiver(post_save, sender=source.Case, dispatch_uid="graph_memory.graph_case_saved")
@receiver(post_delete, sender=source.Case, dispatch_uid="graph_memory.graph_case_deleted")
def graph_case_changed(sender: Any, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    if update_fields is not None and not source.GRAPH_CASE_FIELDS & set(update_fields):
        return
    _graph_after_commit(services.graph_sync_case, case_id=instance.pk)



@receiver(post_save, sender=source.CaseTeamMember, dispatch_uid="graph_memory.graph_team_member_saved")
@receiver(post_delete, sender=source.CaseTeamMember, dispatch_uid="graph_memory.graph_team_member_deleted")
@receiver(post_save, sender=source.CaseCounterparty, dispatch_uid="graph_memory.graph_case_counterparty_saved")
@receiver(post_delete, sender=source.CaseCounterparty, dispatch_uid="graph_memory.graph_case_counterparty_deleted")
def graph_case_link_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    _graph_after_commit(services.graph_sync_case, case_id=instance.case_id)


@receiver(m2m_changed, sender=source.Case.team.through, dispatch_uid="graph_memory.graph_team_m2m")
@receiver(m2m_changed, sender=source.Case.counterparties.through, dispatch_uid="graph_memory.graph_counterparties_m2m")
def graph_case_links_changed(
    sender: Any, instance: Any, action: str, reverse: bool, pk_set: set[int] | None, **kwargs: Any
) -> None:
    # add() bulk-creates and fires no post_save; clear() from the user's or the
    # counterparty's side names no cases, so they are read before the rows go.
    if not reverse:
        case_ids = [instance.pk] if action in {"post_add", "post_remove", "post_clear"} else []
    elif action == "pre_clear":
        case_ids = source.graph_linked_case_ids(instance)
    else:
        case_ids = sorted(pk_set or ()) if action in {"post_add", "post_remove"} else []
    for case_id in case_ids:
        _graph_after_commit(services.graph_sync_case, case_id=case_id)


@receiver(post_save, sender=source.Client, dispatch_uid="graph_memory.graph_client_renamed")
@receiver(post_save, sender=source.Counterparty, dispatch_uid="graph_memory.graph_counterparty_renamed")
def graph_party_saved(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    if not created:  # a new party has no node until a case links it
        kind = "client" if sender is source.Client else "counterparty"
        _graph_after_commit(services.graph_refresh_label, kind=kind, ref_id=instance.pk)


def graph_lawyer_saved(sender: Any, instance: Any, created: bool, update_fields: Any = None, **kwargs: Any) -> None:
    # Logins save last_login alone; only a change that may touch the label matters.
    if created or (update_fields is not None and not {"name", "username"} & set(update_fields)):
        return
    _graph_after_commit(services.graph_refresh_label, kind="lawyer", ref_id=instance.pk)


post_save.connect(graph_lawyer_saved, sender=source.lawyer_model(), dispatch_uid="graph_memory.graph_lawyer_renamed")


# --- Stale flags (refresh): a relevant change flips the case's flag, one UPDATE, no model call. ---
# Called inside the transaction that made the change, so the flag commits or
# rolls back with it. What counts as relevant mirrors what a summary is
# written from: header, client, counterparties, processed documents, drafts,
# deadlines, invoices, notes.

_UNKNOWN = object()  # a deferred field: treated as changed, since a missed flag costs more than an extra rewrite
_CASE_HEADER = ("key", "title", "status", "opened", "description", "client_id")
_PROCESSED = source.Document.Status.PROCESSED


def _loaded(instance: Any, *fields: str) -> tuple[Any, ...]:
    # __dict__ rather than getattr: reading a deferred field would cost a query.
    return tuple(instance.__dict__.get(name, _UNKNOWN) for name in fields)


def _own_deletion(sender: type, origin: Any) -> bool:
    """False when the record goes because its case (or firm) is being deleted.

    Marking then would re-create the summary row of a case that is on its way
    out. `origin` is what `.delete()` was called on.
    """
    if isinstance(origin, QuerySet):
        return origin.model is sender
    return isinstance(origin, sender)


@receiver(post_init, sender=source.Case, dispatch_uid="graph_memory.refresh.case_loaded")
def _remember_case_header(sender: Any, instance: Any, **kwargs: Any) -> None:
    instance._graph_memory_header = _loaded(instance, *_CASE_HEADER)


@receiver(post_save, sender=source.Case, dispatch_uid="graph_memory.refresh.case_saved")
def _case_saved(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    header = _loaded(instance, *_CASE_HEADER)
    if created or header != getattr(instance, "_graph_memory_header", None) or _UNKNOWN in header:
        mark_stale(case_ids=[instance.pk])
    instance._graph_memory_header = header


@receiver(post_init, sender=source.Document, dispatch_uid="graph_memory.refresh.document_loaded")
def _remember_document_status(sender: Any, instance: Any, **kwargs: Any) -> None:
    (instance._graph_memory_status,) = _loaded(instance, "status")


def _document_matters(*statuses: Any) -> bool:
    # Summaries are written from processed documents only; one still uploaded,
    # processing or failed changes nothing a summary says.
    return any(status is _UNKNOWN or status == _PROCESSED for status in statuses)


@receiver(post_save, sender=source.Document, dispatch_uid="graph_memory.refresh.document_saved")
def _document_saved(sender: Any, instance: Any, **kwargs: Any) -> None:
    (status,) = _loaded(instance, "status")
    if _document_matters(getattr(instance, "_graph_memory_status", _UNKNOWN), status):
        mark_stale(case_ids=[instance.case_id])
    instance._graph_memory_status = status


@receiver(post_delete, sender=source.Document, dispatch_uid="graph_memory.refresh.document_deleted")
def _document_deleted(sender: Any, instance: Any, origin: Any = None, **kwargs: Any) -> None:
    if _own_deletion(sender, origin) and _document_matters(*_loaded(instance, "status")):
        mark_stale(case_ids=[instance.case_id])


def _case_record_changed(sender: Any, instance: Any, origin: Any = None, signal: Any = None, **kwargs: Any) -> None:
    if signal is post_delete and not _own_deletion(sender, origin):
        return
    mark_stale(case_ids=[instance.case_id])


for _model in (source.Draft, source.Deadline, source.Invoice, source.Note, source.CaseCounterparty):
    post_save.connect(_case_record_changed, sender=_model, dispatch_uid=f"graph_memory.refresh.{_model.__name__}_saved")
    post_delete.connect(
        _case_record_changed, sender=_model, dispatch_uid=f"graph_memory.refresh.{_model.__name__}_deleted"
    )


@receiver(m2m_changed, sender=source.CaseCounterparty, dispatch_uid="graph_memory.refresh.counterparties_added")
def _counterparties_added(
    sender: Any, instance: Any, action: str, reverse: bool, pk_set: set[int] | None, **kwargs: Any
) -> None:
    # Only "post_add": case.counterparties.add() bulk-inserts link rows without
    # post_save, while remove() and clear() delete them one by one, which the
    # post_delete receiver above already sees.
    if action != "post_add":
        return
    mark_stale(case_ids=(pk_set or ()) if reverse else [instance.pk])


@receiver(post_init, sender=source.Client, dispatch_uid="graph_memory.refresh.client_loaded")
@receiver(post_init, sender=source.Counterparty, dispatch_uid="graph_memory.refresh.counterparty_loaded")
def _remember_party(sender: Any, instance: Any, **kwargs: Any) -> None:
    instance._graph_memory_party = _loaded(instance, "key", "name")


@receiver(post_save, sender=source.Client, dispatch_uid="graph_memory.refresh.client_saved")
@receiver(post_save, sender=source.Counterparty, dispatch_uid="graph_memory.refresh.counterparty_saved")
def _party_renamed(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    party = _loaded(instance, "key", "name")
    if not created and party != getattr(instance, "_graph_memory_party", None):
        # Every case naming this party quotes the old name and key: one statement for all of them.
        if sender is source.Client:
            cases = source.Case.objects.filter(client_id=instance.pk)
        else:
            cases = source.Case.objects.filter(counterparties=instance.pk)
        mark_stale(case_ids=cases)
    instance._graph_memory_party = party


# --- Search: a saved summary gets its vector (receiver in embeddings.py, connected by this import). ---
from graph_memory import embeddings as _embeddings  # noqa: E402, F401
