"""Each grant's sight of the connection map, kept current by triggers, row by row.

`models/sight.py` says what the tables hold and why. This module:
- installs the triggers (`install`, run after every migrate): on the host's
  guardian grant tables, its case table, its users and groups, and the map's
  own edges and nodes. Each is a statement trigger, so whatever wrote the change
  (a bulk insert, a queryset delete, raw SQL) rewrites the rows of exactly the
  (holder, case) pairs it touched, in its own transaction: a grant or revoke its
  own pair, a change to a case's edges or to a node's name every holder of that
  case. The work follows the change's own audience, never anyone's whole sight,
  and no read ever rebuilds anything (issue 28);
- builds every row at once (`build`): after migrate, and after a TRUNCATE of a
  table the rows come from (which marks the sight not built: reads then answer
  from the cases each viewer may open, and `build_later` queues the build);
- gives the reads their holders (`holders_sql`): the viewer, and each group they
  are in, found by the statement itself, so joining a group changes no row.

Why two writers cannot leave a pair's rows out of date: every trigger first
upserts the `SightCase` row of each case it rewrites (in case order), which it
holds until its transaction ends; its next statements take a fresh snapshot
(READ COMMITTED: each statement of a volatile function does), so they read
whatever the writer before it committed. Under REPEATABLE READ or SERIALIZABLE
the upsert fails instead with a serialization error, and nothing stale is kept.
`build` locks the whole `SightCase` table the same way.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ImproperlyConfigured
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction

from graph_memory import conf
from graph_memory.adapter import GuardianPermissions, Viewer, case_firm_column, case_model, get_adapter
from graph_memory.models import Edge, Node, Sight, SightCase, SightState
from graph_memory.plumbing import locks
from graph_memory.plumbing.stmt import Stmt
from graph_memory.wall import access, triggers
from graph_memory.wall.triggers import Trigger, TriggerSet

logger = logging.getLogger(__name__)

SIGHT, CASES, STATE = Sight._meta.db_table, SightCase._meta.db_table, SightState._meta.db_table
N, E = Node._meta.db_table, Edge._meta.db_table

# Every statement a trigger runs reads the tables through their indexes, driven by the change's own rows
# (a transition table, whose size the planner knows exactly): its work follows the change, whatever the
# tables' statistics say. They are planned at each run, and a table's statistics may be far from its
# contents (thousands of grants just written, a table emptied by a test run): planned from them, a bulk
# insert of 3,200 grants in the test suite twice ran for over ten minutes (not reproduced on demand; a
# plan that scans a whole table for each changed row fits). Seq scans of the transition tables (which
# have no index) stay; tests/wall/test_sight.py checks every statement has an index path. Joins are nested
# loops too: a rewrite joins the rows it found by their keys, and with a table's statistics saying
# thousands, a merge join read every partition's primary key whole instead of probing it per row.
INDEXED_SETTINGS = {"enable_seqscan": "off", "enable_mergejoin": "off", "enable_hashjoin": "off"}
INDEXED = " ".join(f"SET {name} = {value}" for name, value in INDEXED_SETTINGS.items())
# Writers of the sight take one advisory lock per bucket of holders their statement rewrites (`_sync`).
HOLDER_BUCKETS = 64
# A trigger statement starting with this is a query of (holder, node_id, firm_id, gone) rows, each applied
# by the two statements below, by key (`{key}`: the row variable).
EACH_ROW = "-- each row"
ROW_KEY = "holder = {key}.holder AND node_id = {key}.node_id AND firm_id = {key}.firm_id"
ROW_DELETE = f"DELETE FROM {SIGHT} WHERE {ROW_KEY} AND cases <@ {{key}}.gone"
ROW_LESSEN = (
    f"UPDATE {SIGHT} SET cases = ARRAY(SELECT x FROM unnest(cases) x WHERE x <> ALL({{key}}.gone) ORDER BY x) "
    f"WHERE {ROW_KEY}"
)

_SYNC = f"""
CREATE OR REPLACE FUNCTION gm_sight_sync() RETURNS trigger LANGUAGE plpgsql {INDEXED} AS $fn$
DECLARE found_ record;
BEGIN
    -- TG_ARGV: the statements that take the cases' rows and their holders' locks, delete the rows of no
    -- other case, take the cases out of the others and write them back, each over this trigger's
    -- transition tables; one statement after another, each with a fresh snapshot.
    FOR i IN 0 .. TG_NARGS - 1 LOOP
        IF starts_with(TG_ARGV[i], '{EACH_ROW}') THEN
            -- The rows holding the statement's cases, with the cases each loses: each row by its key (one
            -- probe of the primary key, whatever the statistics say), deleted if it held no other case.
            FOR found_ IN EXECUTE TG_ARGV[i] LOOP
                {ROW_DELETE.format(key="found_")};
                IF NOT FOUND THEN
                    {ROW_LESSEN.format(key="found_")};
                END IF;
            END LOOP;
        ELSE
            EXECUTE TG_ARGV[i];
        END IF;
    END LOOP;
    RETURN NULL;
END
$fn$"""
_FORGET = f"""
CREATE OR REPLACE FUNCTION gm_sight_forget() RETURNS trigger LANGUAGE plpgsql {INDEXED} AS $fn$
BEGIN
    -- TG_ARGV[0]: a statement deleting the rows of what this statement deleted (no name outlives its record).
    EXECUTE TG_ARGV[0];
    RETURN NULL;
END
$fn$"""
_UNBUILT = f"""
CREATE OR REPLACE FUNCTION gm_sight_unbuilt() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE {STATE} SET built = false;
    RETURN NULL;
END
$fn$"""


def enabled() -> bool:
    """Whether lawyers' reads use the sight: LAWYER_SIGHT, on a host that grants through django-guardian
    (the triggers must know the tables a grant lives in)."""
    return bool(conf.get("LAWYER_SIGHT")) and get_adapter().guardian_permissions() is not None


def _permissions() -> GuardianPermissions:
    """The host's guardian permission tables: the sight is kept only on a host that grants through them."""
    permissions = get_adapter().guardian_permissions()
    if permissions is None:
        raise ImproperlyConfigured("the sight needs a host that grants cases through django-guardian")
    return permissions


def _q(name: str) -> str:
    return connection.ops.quote_name(name)


def _permission_sql() -> str:
    """The id of the permission that opens a case, as a subquery (permissions are made anew by a flush)."""
    permissions = _permissions()
    content_type = ContentType.objects.get_for_model(case_model())
    return (
        f"(SELECT p.id FROM {_q(Permission._meta.db_table)} p JOIN {_q(ContentType._meta.db_table)} ct ON ct.id = p.content_type_id "
        f"WHERE ct.app_label = {triggers.literal(content_type.app_label)} AND ct.model = {triggers.literal(content_type.model)} "
        f"AND p.codename = {triggers.literal(permissions.codename)})"
    )


def _held(wanted: str) -> str:
    """The (holder, case_id) pairs of `wanted` (rows `h`, `c`; a NULL `h`: every holder of case `c`) whose
    grant stands now: its users, and its groups negated. Each pair probes the grant tables' case index
    (a LATERAL subquery with OFFSET 0: always a nested loop driven by the pairs, see INDEXED)."""
    permissions = _permissions()
    perm = _permission_sql()
    users = _q(permissions.user_model._meta.db_table)
    sql = (
        f"SELECT g.holder, g.case_id FROM ({wanted}) p CROSS JOIN LATERAL (SELECT up.user_id::bigint AS holder, "
        f"up.content_object_id AS case_id FROM {users} up WHERE up.content_object_id = p.c "
        f"AND (p.h IS NULL OR up.user_id = p.h) AND up.permission_id = {perm} OFFSET 0) g"
    )
    if permissions.group_model is not None:
        groups = _q(permissions.group_model._meta.db_table)
        sql += (
            f" UNION SELECT g.holder, g.case_id FROM ({wanted}) p CROSS JOIN LATERAL (SELECT -gp.group_id::bigint AS holder, "
            f"gp.content_object_id AS case_id FROM {groups} gp WHERE gp.content_object_id = p.c "
            f"AND (p.h IS NULL OR -gp.group_id = p.h) AND gp.permission_id = {perm} OFFSET 0) g"
        )
    return sql


def _sync(pairs: str) -> tuple[str, ...]:
    """The statements that bring the rows of `pairs` up to date: (holder, case) rows, a NULL holder
    meaning every holder of the case. First each case's `SightCase` row (in case order) and the lock of
    each holder's bucket (in bucket order); then each pair's case taken out of the rows that should no
    longer hold it (its grant ended, or the node left the case's edges), row by row by key (EACH_ROW: a
    row of no other case deleted, the others lessened); then each pair whose grant still stands written
    into the rows that lack its case or show the node's names as they were. A row already right is not
    written. Each reads the tables one
    probe per pair or row (INDEXED): a case's rows through the GIN index of `cases`, a row by its key."""
    wanted = f"SELECT DISTINCT p.h, p.c FROM ({pairs}) p(h, c) WHERE p.c IS NOT NULL"
    take = (
        f"INSERT INTO {CASES} (case_id, version) SELECT DISTINCT p.c, 1 FROM ({wanted}) p ORDER BY p.c "
        f"ON CONFLICT (case_id) DO UPDATE SET version = {CASES}.version + 1"
    )
    # Per row, every case of the statement's pairs it holds and should no longer hold: the holder's grant of
    # the case ended, or the case has no edge to the node any more (in the row's firm). A row left with none
    # is deleted, the others lose those cases (applied row by row by gm_sight_sync: EACH_ROW). A row that
    # keeps its cases is not written at all: a change rewrites only what it changed, so a holder's lawyer
    # node on a thousand cases is not rewritten (with its GIN entries) by every edit of one of them.
    hit = f"""{EACH_ROW}
WITH held AS MATERIALIZED ({_held(wanted)})
SELECT s.holder, s.node_id, s.firm_id, array_agg(DISTINCT p.c) AS gone
FROM ({wanted}) p CROSS JOIN LATERAL (
    SELECT s.holder, s.node_id, s.firm_id FROM {SIGHT} s
    WHERE s.cases @> ARRAY[p.c]::bigint[] AND (p.h IS NULL OR s.holder = p.h) OFFSET 0
) s
WHERE NOT EXISTS (SELECT 1 FROM held g WHERE g.holder = s.holder AND g.case_id = p.c)
   OR NOT EXISTS (
    SELECT 1 FROM {E} e WHERE e.case_id = p.c AND e.firm_id = s.firm_id
    AND (e.source_id = s.node_id OR e.target_id = s.node_id)
)
GROUP BY s.holder, s.node_id, s.firm_id"""
    # A row holds a node for several of its holder's cases, so writers of different cases meet on it: each
    # takes its holders' buckets first, in order (after the cases, in order), and none waits on another in a
    # circle. Buckets, not holders: a map rebuild's statement rewrites every holder of its cases, and a lock
    # per holder could fill PostgreSQL's lock table.
    holders = f"SELECT p.h FROM ({wanted}) p WHERE p.h IS NOT NULL UNION SELECT g.holder FROM ({_held(wanted)}) g"
    buckets = (
        f"SELECT count(pg_advisory_xact_lock({int(locks.LockKind.SIGHT_HOLDERS)}, b.b)) FROM ("
        f"SELECT DISTINCT (h.h % {HOLDER_BUCKETS})::int AS b FROM ({holders}) h(h) ORDER BY 1 OFFSET 0) b"
    )
    return take, buckets, hit, _write(_held(wanted), probe=True)


def _write(held: str, *, probe: bool = False) -> str:
    """Write the rows of the (holder, case_id) pairs `held` lists: every node at either end of the case's
    edges, its cases added to the holder's row of it. `probe`: each pair probes the edges and nodes
    through their indexes (a trigger's few pairs); else joins (`build`: every grant at once). A node is
    read with its edge's firm, so in that firm's partition of the nodes (migration 0030)."""
    if probe:
        edges = (
            f"CROSS JOIN LATERAL (SELECT e.source_id, e.target_id, e.firm_id FROM {E} e WHERE e.case_id = g.case_id OFFSET 0) e"
        )
        node = f"CROSS JOIN LATERAL (SELECT n.* FROM {N} n WHERE n.id = g.id AND n.firm_id = g.firm_id OFFSET 0) n"
    else:
        edges, node = f"JOIN {E} e ON e.case_id = g.case_id", f"JOIN {N} n ON n.id = g.id AND n.firm_id = g.firm_id"
    # One row per (holder, node) in the statement (ON CONFLICT may touch a row once); a row already there
    # (the node reached through another case of the holder) gets these cases besides its own, and the node's
    # names as they are now; it is left as it is (no new row version) when it holds them already under
    # those names.
    return f"""
INSERT INTO {SIGHT} AS s (holder, node_id, firm_id, kind, label, name_key, cases)
SELECT g.holder, n.id, n.firm_id, n.kind, n.label, n.name_key, g.cases
FROM (
    SELECT g.holder, x.id, e.firm_id, array_agg(DISTINCT g.case_id ORDER BY g.case_id) AS cases FROM ({held}) g
    {edges} CROSS JOIN LATERAL (VALUES (e.source_id), (e.target_id)) x(id)
    GROUP BY g.holder, x.id, e.firm_id
) g
{node}
ON CONFLICT (holder, node_id, firm_id) DO UPDATE SET
    cases = ARRAY(SELECT DISTINCT x FROM unnest(s.cases || EXCLUDED.cases) x ORDER BY x),
    kind = EXCLUDED.kind, label = EXCLUDED.label, name_key = EXCLUDED.name_key
WHERE NOT s.cases @> EXCLUDED.cases
   OR (s.kind, s.label, s.name_key) IS DISTINCT FROM (EXCLUDED.kind, EXCLUDED.label, EXCLUDED.name_key)
"""


def _trigger_specs() -> list[tuple[str, str, str]]:
    """(table, event, statement of the (holder, case) pairs it touched) for every sync trigger; the
    statement reads the transition tables `gm_new` / `gm_old`."""
    permissions = _permissions()
    if permissions is None:
        return []

    def rows(event: str, columns: str) -> str:
        tables = {"INSERT": ["gm_new"], "DELETE": ["gm_old"], "UPDATE": ["gm_new", "gm_old"]}[event]
        return " UNION ".join(f"SELECT {columns} FROM {t}" for t in tables)

    specs: list[tuple[str, str, str]] = []
    for event in ("INSERT", "DELETE", "UPDATE"):
        specs.append(
            (_q(permissions.user_model._meta.db_table), event, rows(event, "user_id::bigint, content_object_id"))
        )
        if permissions.group_model is not None:
            specs.append((_q(permissions.group_model._meta.db_table), event,
                          rows(event, "-group_id::bigint, content_object_id")))  # fmt: skip
        specs.append((E, event, rows(event, "NULL::bigint, case_id")))
    # A node renamed (or its party key changed): every case with an edge to it (in the node's firm's partition).
    renamed = (
        "SELECT n.id, n.firm_id FROM gm_new n JOIN gm_old o ON o.id = n.id "
        "WHERE (n.label, n.name_key, n.kind, n.party_key) IS DISTINCT FROM (o.label, o.name_key, o.kind, o.party_key)"
    )
    specs.append((N, "UPDATE", (
        f"SELECT NULL::bigint, e.case_id FROM ({renamed}) r CROSS JOIN LATERAL ("
        f"SELECT e.case_id FROM {E} e WHERE e.source_id = r.id AND e.firm_id = r.firm_id OFFSET 0 ) e "
        f"UNION SELECT NULL::bigint, e.case_id FROM ({renamed}) r CROSS JOIN LATERAL ("
        f"SELECT e.case_id FROM {E} e WHERE e.target_id = r.id AND e.firm_id = r.firm_id OFFSET 0) e"
    )))  # fmt: skip
    # A case moved to another firm: its rows say the firm.
    firm, pk = _q(case_firm_column()), _q(case_model()._meta.pk.column)
    specs.append((_q(case_model()._meta.db_table), "UPDATE", (
        f"SELECT NULL::bigint, n.{pk} FROM gm_new n JOIN gm_old o ON o.{pk} = n.{pk} WHERE n.{firm} IS DISTINCT FROM o.{firm}"
    )))  # fmt: skip
    return specs


def _forget_specs() -> list[tuple[str, str]]:
    """(table, statement over `gm_old`) for the DELETE triggers that drop the rows naming what was deleted:
    a case, a node, a user, a group (their grants and edges go first when Django deletes them; raw SQL may not)."""
    permissions = _permissions()
    if permissions is None:
        return []
    case, user = case_model()._meta, get_user_model()._meta
    cases = f"SELECT {_q(case.pk.column)} FROM gm_old"
    # `= ANY(ARRAY(...))`: an index condition on the deleted ids (INDEXED), never a join the planner may turn around.
    specs = [
        (_q(case.db_table), f"DELETE FROM {SIGHT} WHERE cases && ARRAY({cases})::bigint[] "
                            f"AND cases <@ ARRAY({cases})::bigint[]; "
                            f"UPDATE {SIGHT} SET cases = ARRAY(SELECT x FROM unnest(cases) x "
                            f"WHERE x <> ALL(ARRAY({cases})) ORDER BY x) WHERE cases && ARRAY({cases})::bigint[]; "
                            f"DELETE FROM {CASES} WHERE case_id = ANY(ARRAY({cases}))"),
        (N, f"DELETE FROM {SIGHT} WHERE node_id = ANY(ARRAY(SELECT id FROM gm_old))"),
        (_q(user.db_table), f"DELETE FROM {SIGHT} WHERE holder = ANY(ARRAY(SELECT {_q(user.pk.column)}::bigint FROM gm_old))"),
    ]  # fmt: skip
    if permissions.group_model is not None:
        group = permissions.group_model._meta.get_field("group").related_model._meta
        specs.append(
            (
                _q(group.db_table),
                f"DELETE FROM {SIGHT} WHERE holder = ANY(ARRAY(SELECT -{_q(group.pk.column)}::bigint FROM gm_old))",
            )
        )
    return specs


def _truncated_tables() -> list[str]:
    """The tables whose TRUNCATE leaves the sight not built: every table a sync trigger reads."""
    return list(dict.fromkeys([t for t, _, _ in _trigger_specs()] + [SIGHT, CASES]))


def _triggers() -> list[Trigger]:
    """Every trigger of the sight, as data (graph_memory.wall.triggers installs and removes them)."""
    specs = _trigger_specs()
    if not specs:
        return []
    return [
        *(triggers.after_statement("gm_sight_", table, event, "gm_sight_sync", _sync(pairs)) for table, event, pairs in specs),
        *(triggers.after_statement("gm_sight_", table, "TRUNCATE", "gm_sight_unbuilt") for table in _truncated_tables()),
        *(triggers.after_statement("gm_sight_", table, "DELETE", "gm_sight_forget", (statement,), suffix="delete_forget")
          for table, statement in _forget_specs()),
    ]  # fmt: skip


def _unbuilt(using: str) -> None:
    """Without its triggers the rows fall out of date: they are emptied and marked not built, so that the
    sight switched on again is built anew (after migrate) before any read trusts it."""
    if STATE in connections[using].introspection.table_names():
        with connections[using].cursor() as cursor:
            cursor.execute(f"TRUNCATE {SIGHT}, {CASES}")
            cursor.execute(f"UPDATE {STATE} SET built = false")


TRIGGERS = TriggerSet(
    prefix="gm_sight_",
    enabled=lambda: enabled(),
    triggers=_triggers,
    functions=lambda: [("gm_sight_sync()", _SYNC), ("gm_sight_forget()", _FORGET), ("gm_sight_unbuilt()", _UNBUILT)],
    on_uninstall=_unbuilt,
)


def install(using: str = DEFAULT_DB_ALIAS, **_: Any) -> int:
    """Create (or replace) every trigger; returns how many. Safe to run again."""
    return triggers.install(TRIGGERS, using=using) if _trigger_specs() else 0


def trigger_names() -> list[str]:
    """The names of every trigger `install` creates."""
    return [t.name for t in _triggers()]


def missing_triggers() -> list[str]:
    """The names of triggers the sight wants (it is on) that the database lacks (for the system check)."""
    return triggers.missing(TRIGGERS)


def unwanted_triggers() -> list[str]:
    """The sight's triggers in the database while it is off (for the system check)."""
    return triggers.unwanted(TRIGGERS)


# --- building ---------------------------------------------------------------------------------


def build(using: str = DEFAULT_DB_ALIAS) -> int:
    """Every grant's rows, from nothing; returns how many. The sight is built once it commits.

    Takes the whole `SightCase` table first (writers of a case's rows wait, and
    then rewrite them from what this wrote), so a change committed meanwhile is
    never lost. Run after every migrate, by the nightly refresh when a TRUNCATE
    left the sight unbuilt, and by `manage.py memory_sight --build`.
    """
    if not _trigger_specs():
        return 0
    permissions = _permissions()
    perm = _permission_sql()
    grants = f"SELECT up.user_id::bigint, up.content_object_id FROM {_q(permissions.user_model._meta.db_table)} up WHERE up.permission_id = {perm}"
    if permissions.group_model is not None:
        grants += (
            f" UNION SELECT -gp.group_id::bigint, gp.content_object_id FROM {_q(permissions.group_model._meta.db_table)} gp "
            f"WHERE gp.permission_id = {perm}"
        )
    with transaction.atomic(using=using), connections[using].cursor() as cursor:
        cursor.execute(f"LOCK TABLE {CASES} IN EXCLUSIVE MODE")
        cursor.execute(f"DELETE FROM {SIGHT}")
        cursor.execute(_write(f"SELECT g.h AS holder, g.c AS case_id FROM ({grants}) g(h, c)"))
        rows = cursor.rowcount
        cursor.execute(
            f"INSERT INTO {STATE} (id, built, built_at) VALUES (1, true, now()) "
            "ON CONFLICT (id) DO UPDATE SET built = true, built_at = now()"
        )
    logger.info("sight built: %d rows", rows)
    return rows


@shared_task(name="graph_memory.build_sight", acks_late=True, ignore_result=True)
def build_sight() -> int:
    """The task: build every grant's rows when a TRUNCATE left them unbuilt; safe to run twice.
    (Here rather than in graph_memory.tasks, which imports this module: the task module re-exports it.)"""
    return build() if not current() else 0


def build_later() -> None:
    """Queue `build_sight` on the worker, after the current transaction commits (a read never waits for it)."""
    transaction.on_commit(build_sight.delay, robust=True)


# --- reads ------------------------------------------------------------------------------------

FRESH = f"SELECT EXISTS (SELECT 1 FROM {STATE} WHERE id = 1 AND built) AS ok"


def current() -> bool:
    """Whether the sight is built: lawyers' reads answer from it in one statement."""
    with connection.cursor() as cursor:
        cursor.execute(FRESH)
        return bool(cursor.fetchone()[0])


def uses_sight(viewer: Viewer) -> bool:
    """Whether this viewer's reads go through the sight (a lawyer on a guardian host; not a firm admin).
    The reads have asked `access.sees_whole_firm` already and ask `enabled` alone."""
    return enabled() and not access.sees_whole_firm(viewer)


def holders_sql(viewer: Viewer) -> str:
    """The viewer's holders as one column: their own id, and each group they are in, negated. No parameters
    (the id is written in as a number), so it can be formatted into any statement as `{holders}`."""
    if viewer.pk is None:
        raise ValueError("a viewer with no id holds no part of the sight")
    pk = int(viewer.pk)
    sql = f"SELECT {pk}::bigint"
    if _permissions().group_model is not None:
        memberships = _q(get_user_model().groups.through._meta.db_table)
        sql += f" UNION ALL SELECT -ug.group_id::bigint FROM {memberships} ug WHERE ug.user_id = {pk}"
    return sql


def answer(*, sighted: Stmt, walled: Stmt, columns: int) -> tuple[list[tuple], list[str]]:
    """The rows (and column names) of `sighted` while the sight is built: one statement.
    Otherwise those of `walled`, a second statement, and the build is queued (`build_later`).

    `sighted` is `columns` wide; its statement carries one more row, all NULL but a last column
    that says whether the sight was built, so an empty answer says it too. (`scope.rows` calls it.)
    """
    gate = Stmt(
        f"WITH gm_fresh AS MATERIALIZED ({FRESH}) "
        f"SELECT sighted.*, NULL::boolean AS gm_current FROM ({sighted.sql}) sighted WHERE (SELECT ok FROM gm_fresh) "
        f"UNION ALL SELECT {', '.join(['NULL'] * columns)}, (SELECT ok FROM gm_fresh)",
        sighted.params,
    )
    with connection.cursor() as cursor:
        cursor.execute(gate.sql, gate.params)
        rows = cursor.fetchall()
        if rows[-1][-1]:
            return [row[:-1] for row in rows[:-1]], [c.name for c in cursor.description[:-1]]
        cursor.execute(walled.sql, walled.params)
        rows, names = cursor.fetchall(), [c.name for c in cursor.description]
    build_later()
    return rows, names


def gated(*, sighted: Stmt, walled: Stmt) -> Stmt:
    """One statement for use inside another: `sighted` while the sight is built, else `walled` (the one
    not taken is never executed: a one-time filter). (`scope.statement` calls it.)"""
    return Stmt(
        f"WITH gm_fresh AS MATERIALIZED ({FRESH}) "
        f"SELECT sighted.* FROM ({sighted.sql}) sighted WHERE (SELECT ok FROM gm_fresh) "
        f"UNION ALL SELECT walled.* FROM ({walled.sql}) walled WHERE NOT (SELECT ok FROM gm_fresh)",
        (*sighted.params, *walled.params),
    )
