"""Who is an active user of which firm, and its admin: recorded from the user model's saves and deletes.

The adapter decides both in Python (`viewer_firm_id`, `viewer_is_firm_admin`:
a column, a role, a property), so no trigger can see them; Django's
`post_save` and `post_delete` on the user model can (connected in
`graph_memory/receivers.py`, `connect_ledger`). Each save compares what
the adapter says now with the user's last rows in the ledger (one indexed
query) and appends the difference, so a save that changes nothing appends
nothing, and a change the trigger on `is_active` already wrote is not written
twice. The limit: a queryset `update()` or raw SQL that moves a user to another
firm or changes what makes them a firm admin sends no signal, and is recorded
at the user's next save (or by `repair`, which the nightly run calls for a
failure recorded here). Deactivation through `update()` is recorded by the
trigger all the same.

A failure never fails the host's save (issue 29): it runs in a savepoint, is
logged and kept as a missed change, and the nightly run records the user's
state then.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection

from graph_memory.adapter import get_adapter
from graph_memory.ledger.triggers import COLUMNS, LEDGER
from graph_memory.models import AccessChange
from graph_memory.plumbing.stmt import sql

K, R = AccessChange.Kind, AccessChange.Reason


def _last(viewer_id: int) -> dict[str, tuple[int | None, bool]]:
    """The user's last `user` and `firm_admin` rows: kind -> (firm, granted)."""
    rows = (
        AccessChange.objects.filter(viewer_id=viewer_id, kind__in=[K.USER, K.FIRM_ADMIN])
        .order_by("kind", "-id")
        .distinct("kind")
        .values_list("kind", "firm_id", "granted")
    )
    return {kind: (firm_id, granted) for kind, firm_id, granted in rows}


def now_of(user: Any) -> tuple[int | None, bool, bool]:
    """(firm, active, firm admin) of a user as the adapter says now."""
    adapter = get_adapter()
    firm_id = adapter.viewer_firm_id(user)
    active = bool(getattr(user, "is_active", True))
    return firm_id, active, firm_id is not None and bool(adapter.viewer_is_firm_admin(user))


def changes(viewer_id: int, *, now: tuple[int | None, bool, bool] | None, created: bool = False) -> list[AccessChange]:
    """The rows that bring the ledger from the user's last rows to `now` (None: the user was deleted)."""
    last = _last(viewer_id)
    firm_id, active, admin = now if now is not None else (None, False, False)
    rows: list[AccessChange] = []

    def row(kind: str, firm: int | None, granted: bool, reason: str) -> None:
        rows.append(AccessChange(firm_id=firm, kind=kind, granted=granted, reason=reason, viewer_id=viewer_id))

    gone = R.DELETED if now is None else R.MOVED
    last_firm, was_active = last.get(K.USER, (None, False))
    if K.USER not in last or last_firm != firm_id:
        if last_firm is not None and was_active:
            row(K.USER, last_firm, False, gone)
        if firm_id is not None:
            row(K.USER, firm_id, active, R.CREATED if created or K.USER not in last else R.MOVED)
    elif was_active != active:  # a user model without `is_active` column, or a trigger that was missing
        row(K.USER, firm_id, active, R.REACTIVATED if active else R.DEACTIVATED)
    admin_firm, was_admin = last.get(K.FIRM_ADMIN, (None, False))
    if was_admin and (not admin or admin_firm != firm_id):
        row(K.FIRM_ADMIN, admin_firm, False, gone if admin_firm != firm_id else R.REVOKED)
    if admin and not (was_admin and admin_firm == firm_id):
        row(K.FIRM_ADMIN, firm_id, True, R.GRANTED)
    return rows


def record_user(*, viewer_id: int, user: Any | None, created: bool = False) -> int:
    """Append the user's changes (`user` None: deleted); returns how many rows. When they moved firm, their
    group memberships are written again under the new firm (memberships are read by firm)."""
    now = now_of(user) if user is not None else None
    rows = changes(viewer_id, now=now, created=created)
    AccessChange.objects.bulk_create(rows)
    firm_now = now[0] if now is not None else None
    moved_to = (
        firm_now if any(r.kind == K.USER and r.reason == R.MOVED and r.firm_id == firm_now for r in rows) else None
    )
    permissions = get_adapter().guardian_permissions()
    if moved_to is not None and permissions is not None and permissions.group_model is not None:
        field = get_user_model()._meta.get_field("groups")
        through, q = field.remote_field.through._meta.db_table, connection.ops.quote_name
        with connection.cursor() as cursor:
            sql(
                f"INSERT INTO {LEDGER} {COLUMNS} SELECT now(), %(firm)s, %(kind)s, true, %(reason)s, NULL, "
                f"ug.{q(field.m2m_column_name())}, ug.{q(field.m2m_reverse_name())} FROM {q(through)} ug "
                f"WHERE ug.{q(field.m2m_column_name())} = %(user)s",
                firm=moved_to, kind=K.MEMBERSHIP, reason=R.MOVED, user=viewer_id,
            ).execute(cursor)
    return len(rows)


def repair(*, model: str, object_id: str) -> None:
    """The nightly redo of a failed recording: the user's state now (gone: deleted)."""
    user = get_user_model()._default_manager.filter(pk=object_id).first()
    record_user(viewer_id=int(object_id), user=user)
