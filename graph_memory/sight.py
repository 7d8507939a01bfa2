"""Each lawyer's sight of the connection map: the nodes of the cases they may open, kept current by triggers.

`models/sight.py` says what the two tables hold and why. This module:
- installs the triggers (`install`, run after every migrate): on the host's
  guardian grant tables, its group memberships and its case table, on the
  map's own edges and nodes, and on the case summaries (their vectors, which a
  sight copies). Each is a statement trigger: one bump per statement, whatever
  wrote it (a bulk insert, a queryset delete, raw SQL). Deleting a case, a
  node, a summary or a user also deletes the sight rows naming it;
- answers a lawyer's read (`answer`): one statement from their sight when it
  is current; when it is not, a second from their cases (walled_reads);
- rebuilds a viewer's sight (`rebuild`), after a read found it stale.

Why the version protocol cannot mark stale rows current: a trigger bumps
`version` inside the writer's transaction (an upsert, which waits for a row
another transaction is creating); a rebuild reads `version`, builds from a
later snapshot, and records `built_version` only `WHERE version` is still what
it read. A change committed before the build's snapshot is in the rows; one
committed after it has bumped `version`, so the record fails (or waits on the
writer's row lock, then fails) and the next read rebuilds again.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction

from graph_memory import access, conf
from graph_memory.adapter import case_model, get_adapter
from graph_memory.models import CaseSummary, Edge, Node, Sight, SightVector, SightViewer
from graph_memory.models.graph import PARTY_HASHES_COLUMN
from graph_memory.walled_reads import PARTY_KINDS

logger = logging.getLogger(__name__)

SV, SIGHT, VECTORS = SightViewer._meta.db_table, Sight._meta.db_table, SightVector._meta.db_table
SUMMARY = CaseSummary._meta.db_table
N, E = Node._meta.db_table, Edge._meta.db_table
# pg_advisory_xact_lock's first key for rebuilds (any constant of this app's own).
_LOCK_CLASS = 71_402

_BUMP_FUNCTION = f"""
CREATE OR REPLACE FUNCTION gm_sight_bump() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    -- TG_ARGV[0]: a statement over this trigger's transition tables naming the viewers to bump.
    EXECUTE 'INSERT INTO {SV} (viewer_id, version) SELECT DISTINCT w.u, 1 FROM (' || TG_ARGV[0]
         || ') w(u) WHERE w.u IS NOT NULL ON CONFLICT (viewer_id) DO UPDATE SET version = {SV}.version + 1';
    RETURN NULL;
END
$fn$;
CREATE OR REPLACE FUNCTION gm_sight_forget() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    -- TG_ARGV[0]: a statement deleting the rows of what this statement deleted (no name outlives its record).
    EXECUTE TG_ARGV[0];
    RETURN NULL;
END
$fn$;
CREATE OR REPLACE FUNCTION gm_sight_bump_all() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE {SV} SET version = version + 1;
    RETURN NULL;
END
$fn$;
"""


def enabled() -> bool:
    """Whether lawyers' reads use their sight: LAWYER_SIGHT, on a host that grants through django-guardian
    (the triggers must know the tables a grant lives in)."""
    return bool(conf.get("LAWYER_SIGHT")) and get_adapter().guardian_permissions() is not None


def _trigger_specs() -> list[tuple[str, str, str]]:
    """(table, event, statement naming the viewers to bump) for every trigger; the statement reads the
    transition tables `gm_new` / `gm_old`."""
    q = connection.ops.quote_name
    permissions = get_adapter().guardian_permissions()
    if permissions is None:
        return []
    grants = q(permissions.user_model._meta.db_table)
    specs: list[tuple[str, str, str]] = []

    def rows(event: str, column: str) -> str:
        tables = {"INSERT": ["gm_new"], "DELETE": ["gm_old"], "UPDATE": ["gm_new", "gm_old"]}[event]
        return " UNION ".join(f"SELECT {column} FROM {t}" for t in tables)

    groups = ""
    if permissions.group_model is not None:
        group_grants = q(permissions.group_model._meta.db_table)
        memberships = q(get_user_model().groups.through._meta.db_table)
        groups = memberships
        for event in ("INSERT", "DELETE", "UPDATE"):
            members = f"SELECT ug.user_id FROM {memberships} ug WHERE ug.group_id IN ({rows(event, 'group_id')})"
            specs.append((group_grants, event, members))
            specs.append((memberships, event, rows(event, "user_id")))

    def viewers_of(case_ids: str) -> str:
        """Everyone granted one of these cases, directly or through a group."""
        direct = f"SELECT up.user_id FROM {grants} up WHERE up.content_object_id IN ({case_ids})"
        if not groups:
            return direct
        return (
            f"{direct} UNION SELECT ug.user_id FROM {q(permissions.group_model._meta.db_table)} gp "
            f"JOIN {groups} ug ON ug.group_id = gp.group_id WHERE gp.content_object_id IN ({case_ids})"
        )

    for event in ("INSERT", "DELETE", "UPDATE"):
        specs.append((grants, event, rows(event, "user_id")))
        specs.append((E, event, viewers_of(rows(event, "case_id"))))
    # A case moved to another firm: everyone granted it (the wall checks each case's firm).
    firm, pk = q(access._firm_column()), q(case_model()._meta.pk.column)
    moved = f"SELECT n.{pk} FROM gm_new n JOIN gm_old o ON o.{pk} = n.{pk} WHERE n.{firm} IS DISTINCT FROM o.{firm}"
    specs.append((q(case_model()._meta.db_table), "UPDATE", viewers_of(moved)))
    # A node renamed or gone: everyone whose sight holds it.
    renamed = (
        "SELECT n.id FROM gm_new n JOIN gm_old o ON o.id = n.id "
        "WHERE (n.label, n.name_key, n.kind) IS DISTINCT FROM (o.label, o.name_key, o.kind)"
    )
    specs.append((N, "UPDATE", f"SELECT s.viewer_id FROM {SIGHT} s WHERE s.node_id IN ({renamed})"))
    specs.append((N, "DELETE", f"SELECT s.viewer_id FROM {SIGHT} s WHERE s.node_id IN (SELECT id FROM gm_old)"))
    # A summary's vector written, changed or gone: everyone granted its case (their copy is out of date).
    revectored = (
        "SELECT n.case_id FROM gm_new n JOIN gm_old o ON o.id = n.id "
        "WHERE (n.embedding_model, n.embedding) IS DISTINCT FROM (o.embedding_model, o.embedding)"
    )
    specs.append((SUMMARY, "INSERT", viewers_of("SELECT case_id FROM gm_new WHERE embedding IS NOT NULL")))
    specs.append((SUMMARY, "UPDATE", viewers_of(revectored)))
    specs.append((SUMMARY, "DELETE", viewers_of("SELECT case_id FROM gm_old")))
    return specs


def _forget_specs() -> list[tuple[str, str]]:
    """(table, statement over `gm_old`) for the DELETE triggers that drop sight rows naming what was deleted:
    a case, a node, a summary (its vector), a user. (They run after the bump triggers of the same statement: names sort so.)"""
    if get_adapter().guardian_permissions() is None:
        return []
    q = connection.ops.quote_name
    case, user = case_model()._meta, get_user_model()._meta
    users = f"SELECT {q(user.pk.column)} FROM gm_old"
    cases = f"SELECT {q(case.pk.column)} FROM gm_old"
    return [
        (q(case.db_table), f"DELETE FROM {SIGHT} WHERE case_id IN ({cases}); DELETE FROM {VECTORS} WHERE case_id IN ({cases})"),
        (N, f"DELETE FROM {SIGHT} WHERE node_id IN (SELECT id FROM gm_old)"),
        (SUMMARY, f"DELETE FROM {VECTORS} WHERE case_id IN (SELECT case_id FROM gm_old)"),
        (q(user.db_table), f"DELETE FROM {SIGHT} WHERE viewer_id IN ({users}); DELETE FROM {VECTORS} WHERE viewer_id IN ({users}); "
                           f"DELETE FROM {SV} WHERE viewer_id IN ({users})"),
    ]  # fmt: skip


def _trigger_name(table: str, event: str) -> str:
    return f"gm_sight_{table.strip(chr(34))}_{event.lower()}"[:63]


def install(using: str = DEFAULT_DB_ALIAS, **_: Any) -> int:
    """Create (or replace) every trigger; returns how many. Safe to run again: after every migrate."""
    specs = _trigger_specs()
    if not specs:
        return 0
    db = connections[using]
    with transaction.atomic(using=using), db.cursor() as cursor:
        cursor.execute(_BUMP_FUNCTION)
        tables = dict.fromkeys(table for table, _, _ in specs)
        for table, event, who in specs:
            refs = {"INSERT": "NEW TABLE AS gm_new", "DELETE": "OLD TABLE AS gm_old",
                    "UPDATE": "OLD TABLE AS gm_old NEW TABLE AS gm_new"}[event]  # fmt: skip
            cursor.execute(
                f"CREATE OR REPLACE TRIGGER {_trigger_name(table, event)} AFTER {event} ON {table} "
                f"REFERENCING {refs} FOR EACH STATEMENT EXECUTE FUNCTION gm_sight_bump({_literal(who)})"
            )
        for table in tables:
            cursor.execute(
                f"CREATE OR REPLACE TRIGGER {_trigger_name(table, 'truncate')} AFTER TRUNCATE ON {table} "
                "FOR EACH STATEMENT EXECUTE FUNCTION gm_sight_bump_all()"
            )
        forget = _forget_specs()
        for table, statement in forget:
            cursor.execute(
                f"CREATE OR REPLACE TRIGGER {_trigger_name(table, 'delete_forget')} AFTER DELETE ON {table} "
                f"REFERENCING OLD TABLE AS gm_old FOR EACH STATEMENT EXECUTE FUNCTION gm_sight_forget({_literal(statement)})"
            )
    return len(specs) + len(tables) + len(forget)


def _literal(text: str) -> str:
    """A SQL string literal (trigger arguments cannot be bound parameters)."""
    return "'" + text.replace("'", "''") + "'"


def missing_triggers() -> list[str]:
    """The names of triggers `install` would create that the database lacks (for the system check)."""
    specs = _trigger_specs()
    wanted = {_trigger_name(t, e) for t, e, _ in specs} | {_trigger_name(t, "truncate") for t, _, _ in specs}
    wanted |= {_trigger_name(t, "delete_forget") for t, _ in _forget_specs()}
    if not wanted:
        return []
    with connection.cursor() as cursor:
        cursor.execute("SELECT tgname FROM pg_trigger WHERE tgname = ANY(%s)", [sorted(wanted)])
        have = {row[0] for row in cursor.fetchall()}
    return sorted(wanted - have)


# --- reads ------------------------------------------------------------------------------------

FRESH = (
    f"SELECT EXISTS (SELECT 1 FROM {SV} WHERE viewer_id = %s AND firm_id = %s AND built_version = version) AS ok"
)


def current(viewer: Any) -> bool:
    """Whether the viewer's sight is current: their reads answer from it in one statement."""
    with connection.cursor() as cursor:
        cursor.execute(FRESH, [viewer.pk, access.viewer_firm_id(viewer)])
        return bool(cursor.fetchone()[0])


def uses_sight(viewer: Any) -> bool:
    """Whether this viewer's reads go through their sight (a lawyer on a guardian host; not a firm admin).
    The reads have asked `access.sees_whole_firm` already and ask `enabled` alone."""
    return enabled() and not access.sees_whole_firm(viewer)


def answer(
    viewer: Any, *, sighted: tuple[str, list[Any]], walled: tuple[str, list[Any]], columns: int, visible_sql: str
) -> tuple[list[tuple], list[str]]:
    """The rows (and column names) of `sighted` when the viewer's sight is current: one statement.
    Otherwise those of `walled`, a second statement, and the sight is rebuilt after (`rebuild_later`).

    `sighted` is `columns` wide; its statement carries one more row, all NULL but a last column
    that says whether the sight was current, so an empty answer says it too.
    """
    sql = (
        f"WITH gm_fresh AS MATERIALIZED ({FRESH}) "
        f"SELECT sighted.*, NULL::boolean AS gm_current FROM ({sighted[0]}) sighted WHERE (SELECT ok FROM gm_fresh) "
        f"UNION ALL SELECT {', '.join(['NULL'] * columns)}, (SELECT ok FROM gm_fresh)"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql.format(visible=visible_sql), [viewer.pk, access.viewer_firm_id(viewer), *sighted[1]])
        rows = cursor.fetchall()
        if rows[-1][-1]:
            return [row[:-1] for row in rows[:-1]], [c.name for c in cursor.description[:-1]]
        cursor.execute(walled[0].format(visible=visible_sql), walled[1])
        rows, names = cursor.fetchall(), [c.name for c in cursor.description]
    rebuild_later(viewer)
    return rows, names


def gated(viewer: Any, *, sighted: tuple[str, list[Any]], walled: tuple[str, list[Any]]) -> tuple[str, list[Any]]:
    """One statement for use inside another: `sighted` while the viewer's sight is current, else `walled`
    (the one not taken is never executed: a one-time filter). It does not rebuild a stale sight."""
    sql = (
        f"WITH gm_fresh AS MATERIALIZED ({FRESH}) "
        f"SELECT sighted.* FROM ({sighted[0]}) sighted WHERE (SELECT ok FROM gm_fresh) "
        f"UNION ALL SELECT walled.* FROM ({walled[0]}) walled WHERE NOT (SELECT ok FROM gm_fresh)"
    )
    return sql, [viewer.pk, access.viewer_firm_id(viewer), *sighted[1], *walled[1]]


def rebuild_later(viewer: Any) -> None:
    """Rebuild after the current transaction commits (at once outside one), so a read returns first.
    A rebuild that fails is logged, and the read's answer stands (the sight stays stale)."""
    transaction.on_commit(lambda: rebuild(viewer), robust=True)


# A viewer's rows: every node of every edge of the cases they may open, once per case; a client or
# counterparty with its conflict-check strings as numbers (the node's generated `party_hashes`). Params: viewer, access, firm id.
_BUILD = f"""
INSERT INTO {SIGHT} (viewer_id, node_id, case_id, kind, label, name_key, variants)
SELECT %s, n.id, d.case_id, n.kind, n.label, n.name_key, CASE WHEN n.kind IN {PARTY_KINDS} THEN n.{PARTY_HASHES_COLUMN} END
FROM (
    SELECT DISTINCT x.id, e.case_id FROM ({{visible}}) v(id)
    JOIN {E} e ON e.case_id = v.id
    CROSS JOIN LATERAL (VALUES (e.source_id), (e.target_id)) x(id)
) d JOIN {N} n ON n.id = d.id AND n.firm_id = %s
"""
# Their cases' summary vectors, in case order (so one viewer's rows fill pages of their own).
# Params: viewer, access, firm id.
_BUILD_VECTORS = f"""
INSERT INTO {VECTORS} (viewer_id, case_id, embedding_model, embedding)
SELECT %s, s.case_id, s.embedding_model, s.embedding
FROM (SELECT DISTINCT v.id FROM ({{visible}}) v(id)) v
JOIN {SUMMARY} s ON s.case_id = v.id AND s.firm_id = %s AND s.embedding IS NOT NULL
ORDER BY s.case_id
"""


def rebuild(viewer: Any) -> bool:
    """Rebuild `viewer`'s sight from the cases they may open now; False if there was nothing to do.

    Atomic (a savepoint inside an open transaction; the module's note on versions holds either
    way); two at once for the same viewer take turns, and the second finds the work done.
    """
    if not uses_sight(viewer):
        return False
    visible = access.visible_case_ids_sql(viewer)
    firm_id = access.viewer_firm_id(viewer)
    if visible is None or firm_id is None:
        return False
    visible_sql, visible_params = visible
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", [_LOCK_CLASS, str(viewer.pk)])
        cursor.execute(f"INSERT INTO {SV} (viewer_id, version) VALUES (%s, 0) ON CONFLICT DO NOTHING", [viewer.pk])
        cursor.execute(f"SELECT version, built_version, firm_id FROM {SV} WHERE viewer_id = %s", [viewer.pk])
        version, built, built_firm = cursor.fetchone()
        if built == version and built_firm == firm_id:
            return False
        cursor.execute(f"DELETE FROM {SIGHT} WHERE viewer_id = %s", [viewer.pk])
        cursor.execute(_BUILD.format(visible=visible_sql), [viewer.pk, *visible_params, firm_id])
        rows = cursor.rowcount
        cursor.execute(f"DELETE FROM {VECTORS} WHERE viewer_id = %s", [viewer.pk])
        cursor.execute(_BUILD_VECTORS.format(visible=visible_sql), [viewer.pk, *visible_params, firm_id])
        vectors = cursor.rowcount
        cursor.execute(
            f"UPDATE {SV} SET built_version = %s, firm_id = %s, built_at = now() WHERE viewer_id = %s AND version = %s",
            [version, firm_id, viewer.pk, version],
        )
        recorded = cursor.rowcount == 1
    logger.info(
        "sight of viewer %s rebuilt: %d rows, %d vectors%s", viewer.pk, rows, vectors, "" if recorded else " (changed meanwhile)"
    )
    return True
