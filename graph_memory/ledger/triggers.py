"""The access ledger's statement triggers, its baseline, and their removal.

Installed after every migrate (apps.py), whatever LAWYER_SIGHT says: the
ledger records on every host. Like the sight's (graph_memory/wall/sight.py), each
trigger is `AFTER <event> ... REFERENCING ... TABLE ... FOR EACH STATEMENT`,
so whatever wrote the change (a bulk insert, a queryset delete, raw SQL) is
recorded, in its own transaction, by one INSERT over the statement's changed
rows:

- django-guardian's user and group grant tables (guardian hosts only): a grant
  of the permission that opens a case, or its end;
- the user model's group memberships (guardian hosts that grant to groups);
- the case table: created, deleted, moved to another firm (its standing grants
  are written again under the new firm, so every read filters on one firm),
  and its owner (when the adapter names the column);
- the user table's `is_active`: deactivated, reactivated (the firm: the one the
  ledger last recorded for the user).

Which firm a user is in, and whether they are its admin, the adapter decides
in Python (`viewer_firm_id`, `viewer_is_firm_admin`): `ledger/signals.py`
records those from Django's signals. Each statement is an INSERT ... SELECT
over the transition tables whose only reads of a table are probes by key (the
case's firm by primary key, a user's last firm through an index), so a host's
write costs one more statement and never fails for the ledger's sake unless
the database itself does. The ledger's own rows can be inserted, never
updated or deleted (a row trigger refuses it; TRUNCATE, which a test's flush
uses, is not refused).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import FieldDoesNotExist
from django.db import DEFAULT_DB_ALIAS, connection

from graph_memory.adapter import case_firm_column, case_model, get_adapter
from graph_memory.models import AccessChange
from graph_memory.wall import sight, triggers
from graph_memory.wall.triggers import Trigger, TriggerSet

LEDGER = AccessChange._meta.db_table
COLUMNS = "(at, firm_id, kind, granted, reason, case_id, viewer_id, group_id)"
K, R = AccessChange.Kind, AccessChange.Reason
PREFIX = "gm_ledger_"

_RECORD = f"""
CREATE OR REPLACE FUNCTION gm_ledger_record() RETURNS trigger LANGUAGE plpgsql {sight.INDEXED} AS $fn$
BEGIN
    -- TG_ARGV[0]: one INSERT into the ledger over this statement's transition tables.
    EXECUTE TG_ARGV[0];
    RETURN NULL;
END
$fn$"""
_APPEND_ONLY = """
CREATE OR REPLACE FUNCTION gm_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    RAISE EXCEPTION 'the access ledger is append-only: % refused', TG_OP;
END
$fn$"""


def _q(name: str) -> str:
    return connection.ops.quote_name(name)


def _case_columns() -> tuple[str, str, str, str | None]:
    """The case table, its primary key, firm and owner columns (quoted; owner None when not named)."""
    meta = case_model()._meta
    owner = get_adapter().case_owner_field
    return (
        _q(meta.db_table), _q(meta.pk.column), _q(case_firm_column()),
        _q(meta.get_field(owner).column) if owner else None,
    )  # fmt: skip


def _firm_of_case(case_id: str) -> str:
    table, pk, firm, _ = _case_columns()
    return f"(SELECT c.{firm} FROM {table} c WHERE c.{pk} = {case_id})"


def last_firm_sql(viewer_id: str) -> str:
    """The firm the ledger last recorded `viewer_id` in (one probe of the (viewer, kind, id) index)."""
    return (
        f"(SELECT l.firm_id FROM {LEDGER} l WHERE l.viewer_id = {viewer_id} AND l.kind = '{K.USER}' "
        "ORDER BY l.id DESC LIMIT 1)"
    )


def _insert(select: str) -> str:
    return f"INSERT INTO {LEDGER} {COLUMNS} {select}"


def _pair_changes(event: str, pairs: Any, row: Any) -> str:
    """One INSERT for a statement on a table of pairs: `pairs(t)` selects (a, b) from transition table `t`,
    `row(granted, reason)` the ledger columns from them as `p`. An UPDATE ends the pairs it took away and
    grants those it made."""
    parts = {
        "INSERT": [(pairs("gm_new"), True)],
        "DELETE": [(pairs("gm_old"), False)],
        "UPDATE": [(f"{pairs('gm_new')} EXCEPT {pairs('gm_old')}", True),
                   (f"{pairs('gm_old')} EXCEPT {pairs('gm_new')}", False)],
    }[event]  # fmt: skip
    return _insert(" UNION ALL ".join(f"SELECT {row(granted)} FROM ({sql}) p(a, b)" for sql, granted in parts))


def _grant_specs() -> list[tuple[str, str, str]]:
    permissions = get_adapter().guardian_permissions()
    if permissions is None:
        return []
    perm = sight._permission_sql()
    specs: list[tuple[str, str, str]] = []
    users = _q(permissions.user_model._meta.db_table)
    groups = _q(permissions.group_model._meta.db_table) if permissions.group_model is not None else None

    def grant_row(kind: str, holder: str) -> Any:
        def row(granted: bool) -> str:
            reason = R.GRANTED if granted else R.REVOKED
            viewer, group = ("p.a", "NULL::bigint") if holder == "viewer" else ("NULL::bigint", "p.a")
            return f"now(), {_firm_of_case('p.b')}, '{kind}', {granted}, '{reason}', p.b, {viewer}, {group}"

        return row

    for event in ("INSERT", "DELETE", "UPDATE"):
        specs.append((users, event, _pair_changes(
            event, lambda t: f"SELECT user_id::bigint, content_object_id FROM {t} WHERE permission_id = {perm}",
            grant_row(K.USER_GRANT, "viewer"),
        )))  # fmt: skip
        if groups is not None:
            specs.append((groups, event, _pair_changes(
                event, lambda t: f"SELECT group_id::bigint, content_object_id FROM {t} WHERE permission_id = {perm}",
                grant_row(K.GROUP_GRANT, "group"),
            )))  # fmt: skip
    if groups is not None:
        field = get_user_model()._meta.get_field("groups")
        through = _q(field.remote_field.through._meta.db_table)
        user_col, group_col = _q(field.m2m_column_name()), _q(field.m2m_reverse_name())

        def member_row(granted: bool) -> str:
            reason = R.JOINED if granted else R.LEFT
            return f"now(), {last_firm_sql('p.a')}, '{K.MEMBERSHIP}', {granted}, '{reason}', NULL::bigint, p.a, p.b"

        for event in ("INSERT", "DELETE", "UPDATE"):
            specs.append((through, event, _pair_changes(
                event, lambda t: f"SELECT {user_col}::bigint, {group_col}::bigint FROM {t}", member_row,
            )))  # fmt: skip
    return specs


def standing_grants_sql(cases: str, *, firm: str, reason: str) -> list[str]:
    """SELECTs of ledger rows restating every grant that stands now on the cases `cases` (rows `m` with
    columns `c`, the case, and `firm`), each under `firm`: for a case that moved, and for the baseline."""
    permissions = get_adapter().guardian_permissions()
    if permissions is None:
        return []
    perm = sight._permission_sql()
    users = _q(permissions.user_model._meta.db_table)
    selects = [
        f"SELECT now(), {firm}, '{K.USER_GRANT}', true, '{reason}', m.c, up.user_id::bigint, NULL::bigint "
        f"FROM {cases} JOIN {users} up ON up.content_object_id = m.c AND up.permission_id = {perm}"
    ]
    if permissions.group_model is not None:
        groups = _q(permissions.group_model._meta.db_table)
        selects.append(
            f"SELECT now(), {firm}, '{K.GROUP_GRANT}', true, '{reason}', m.c, NULL::bigint, gp.group_id::bigint "
            f"FROM {cases} JOIN {groups} gp ON gp.content_object_id = m.c AND gp.permission_id = {perm}"
        )
    return selects


def _case_specs() -> list[tuple[str, str, str]]:
    table, pk, firm, owner = _case_columns()
    created = [
        f"SELECT now(), n.{firm}, '{K.CASE}', true, '{R.CREATED}', n.{pk}, NULL::bigint, NULL::bigint FROM gm_new n"
    ]
    if owner:
        created.append(
            f"SELECT now(), n.{firm}, '{K.OWNER}', true, '{R.CREATED}', n.{pk}, n.{owner}::bigint, NULL FROM gm_new n "
            f"WHERE n.{owner} IS NOT NULL"
        )
    moved = f"(SELECT n.{pk} AS c, o.{firm} AS old_firm, n.{firm} AS firm FROM gm_new n JOIN gm_old o ON o.{pk} = n.{pk} WHERE n.{firm} IS DISTINCT FROM o.{firm}) m"
    updated = [
        f"SELECT now(), m.old_firm, '{K.CASE}', false, '{R.MOVED}', m.c, NULL::bigint, NULL::bigint FROM {moved}",
        f"SELECT now(), m.firm, '{K.CASE}', true, '{R.MOVED}', m.c, NULL, NULL FROM {moved}",
        *standing_grants_sql(moved, firm="m.firm", reason=R.MOVED),
    ]
    if owner:
        changed = (
            f"(SELECT n.{pk} AS c, o.{firm} AS old_firm, n.{firm} AS firm, o.{owner}::bigint AS old_owner, "
            f"n.{owner}::bigint AS owner, n.{firm} IS DISTINCT FROM o.{firm} AS moved FROM gm_new n JOIN gm_old o "
            f"ON o.{pk} = n.{pk} WHERE n.{owner} IS DISTINCT FROM o.{owner} OR n.{firm} IS DISTINCT FROM o.{firm}) m"
        )
        updated += [
            f"SELECT now(), m.old_firm, '{K.OWNER}', false, CASE WHEN m.moved THEN '{R.MOVED}' ELSE '{R.REVOKED}' END, "
            f"m.c, m.old_owner, NULL FROM {changed} WHERE m.old_owner IS NOT NULL",
            f"SELECT now(), m.firm, '{K.OWNER}', true, CASE WHEN m.moved THEN '{R.MOVED}' ELSE '{R.GRANTED}' END, "
            f"m.c, m.owner, NULL FROM {changed} WHERE m.owner IS NOT NULL",
        ]
    deleted = (
        f"SELECT now(), o.{firm}, '{K.CASE}', false, '{R.DELETED}', o.{pk}, NULL::bigint, NULL::bigint FROM gm_old o"
    )
    return [
        (table, "INSERT", _insert(" UNION ALL ".join(created))),
        (table, "UPDATE", _insert(" UNION ALL ".join(updated))),
        (table, "DELETE", _insert(deleted)),
    ]


def _user_specs() -> list[tuple[str, str, str]]:
    """`is_active` changed, written under the firm the ledger last recorded for the user (none: not written)."""
    meta = get_user_model()._meta
    try:
        active = _q(meta.get_field("is_active").column)
    except FieldDoesNotExist:
        return []  # a user model without the column: ledger/signals.py records it from saves
    pk = _q(meta.pk.column)
    select = (
        f"SELECT * FROM (SELECT now(), {last_firm_sql(f'n.{pk}')} AS firm_id, '{K.USER}', n.{active}, "
        f"CASE WHEN n.{active} THEN '{R.REACTIVATED}' ELSE '{R.DEACTIVATED}' END, NULL::bigint, n.{pk}::bigint, NULL::bigint "
        f"FROM gm_new n JOIN gm_old o ON o.{pk} = n.{pk} WHERE n.{active} IS DISTINCT FROM o.{active}) r "
        "WHERE r.firm_id IS NOT NULL"
    )
    return [(_q(meta.db_table), "UPDATE", _insert(select))]


def _specs() -> list[tuple[str, str, str]]:
    return [*_grant_specs(), *_case_specs(), *_user_specs()]


APPEND_ONLY = f"{PREFIX}append_only"


def trigger_names() -> list[str]:
    """Every trigger `install` creates."""
    return [t.name for t in _triggers()]


def _triggers() -> list[Trigger]:
    """Every trigger of the ledger, as data (graph_memory.wall.triggers installs and removes them)."""
    declared = [triggers.after_statement(PREFIX, table, event, "gm_ledger_record", (statement,))
                for table, event, statement in _specs()]  # fmt: skip
    declared.append(Trigger(APPEND_ONLY, LEDGER,
                            "BEFORE UPDATE OR DELETE ON " + LEDGER + " FOR EACH ROW EXECUTE FUNCTION gm_ledger_append_only()"))  # fmt: skip
    return declared


# Always on: the ledger records on every host, whatever LAWYER_SIGHT says; the rows stay when it is removed.
TRIGGERS = TriggerSet(
    prefix=PREFIX,
    enabled=lambda: True,
    triggers=_triggers,
    functions=lambda: [("gm_ledger_record()", _RECORD), ("gm_ledger_append_only()", _APPEND_ONLY)],
)


def install(using: str = DEFAULT_DB_ALIAS) -> int:
    """Create (or replace) every trigger, dropping the ledger's triggers no longer wanted; returns how many.
    Safe to run again: after every migrate."""
    return triggers.install(TRIGGERS, using=using)


def uninstall(using: str = DEFAULT_DB_ALIAS) -> int:
    """Drop every trigger and function of the ledger (the rows stay); returns how many triggers."""
    return triggers.uninstall(TRIGGERS, using=using)


def missing_triggers(using: str = DEFAULT_DB_ALIAS) -> list[str]:
    """The triggers `install` would create that the database lacks (for the system check)."""
    return triggers.missing(TRIGGERS, using=using)
