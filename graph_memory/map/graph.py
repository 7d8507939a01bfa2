"""The connection map: derived from the host's records, rebuilt deterministically.

Four node kinds (lawyer, case, client, counterparty) and three edge kinds
(lawyer works_on case, case for_client client, case against counterparty);
every edge belongs to one case. Nothing here reasons about viewers: the reads
that do live in `viewer/selectors.py`.

Every row's id is a UUID derived from what it stands for, keyed with this
installation's secret (an HMAC-SHA256, see `ID_KEY_TABLE`), so the same host
records always give the same rows while an id says nothing about the firm,
the record or how many exist; a rebuild only has to compare sets:
it computes the wanted rows, then deletes, updates and inserts the
difference in a handful of set-based statements, inside one transaction. A
rebuild with nothing changed writes nothing. A sync of one case runs the same
code scoped to that case's edges, so it ends exactly where a full rebuild
would.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any

from django.db import connection, transaction

from graph_memory.adapter import case_firm_attname, case_model, firm_model, get_adapter, queryset_sql
from graph_memory.map.names import name_keys
from graph_memory.models import Edge, Node
from graph_memory.plumbing import locks
from graph_memory.plumbing.stmt import Stmt, sql

logger = logging.getLogger(__name__)

# One row, written once by migration 0006 from PostgreSQL's strong random source: the
# installation's id key (32 bytes). Not a Django model, so `flush` keeps it; it lives and is
# backed up with the rows whose ids it made. Rotating it would give every node and edge a new id.
ID_KEY_TABLE = "graph_memory_id_key"
_LABEL_MAX = Node._meta.get_field("label").max_length or 300

LAWYER, CASE, CLIENT, COUNTERPARTY = (k.value for k in Node.Kind)
WORKS_ON, FOR_CLIENT, AGAINST = (k.value for k in Edge.Kind)


def node_uuid(*, firm_id: int, kind: str, ref_id: int) -> uuid.UUID:
    """The id of a node: the keyed UUID of what it stands for, so every rebuild gives the same one.

    Without the installation's key nobody can compute it, nor read the firm or
    the record out of it. Computed by the same SQL as the rebuild's (one query).
    """
    return _keyed_uuid(f"node:{firm_id}:{kind}:{ref_id}")


def edge_uuid(*, case_id: int, kind: str, source_id: uuid.UUID, target_id: uuid.UUID) -> uuid.UUID:
    """The id of an edge, keyed like a node's (one query)."""
    return _keyed_uuid(f"edge:{case_id}:{kind}:{source_id}:{target_id}")


def _keyed_uuid(name: str) -> uuid.UUID:
    with connection.cursor() as cursor:
        statement = f"WITH {_ID_PADS_CTE} SELECT {_uuid_sql('d.h')} FROM (SELECT {_digest_sql('%(name)s')} AS h OFFSET 0) d"
        row = sql(statement, name=name).execute(cursor).fetchone()
    if row is None or row[0] is None:
        raise RuntimeError(f"no id key in {ID_KEY_TABLE}: run `manage.py migrate graph_memory`")
    return row[0]


@dataclass
class GraphChanges:
    """What one rebuild or sync did. `written` is the number of rows it wrote."""

    nodes_added: int = 0
    nodes_updated: int = 0
    nodes_removed: int = 0
    edges_added: int = 0
    edges_removed: int = 0
    unchanged: int = 0

    @property
    def added(self) -> int:
        return self.nodes_added + self.edges_added

    @property
    def removed(self) -> int:
        return self.nodes_removed + self.edges_removed

    @property
    def written(self) -> int:
        return self.added + self.nodes_updated + self.removed

    def __add__(self, other: GraphChanges) -> GraphChanges:
        return GraphChanges(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)} | {"written": self.written}

    def describe(self) -> str:
        """What it did, in words, for logs, commands and admin ("already up to date: 29 rows checked")."""
        if not self.written:
            return f"already up to date: {self.unchanged} rows checked, none written"
        return (
            f"{self.nodes_added} nodes and {self.edges_added} edges added, {self.nodes_updated} nodes relabelled, "
            f"{self.removed} rows removed, {self.unchanged} unchanged"
        )


N, E = Node._meta.db_table, Edge._meta.db_table


# HMAC-SHA256 (RFC 2104) in core SQL: no pgcrypto on the embedded server, but sha256() is
# built in. The key's two pads (key xor 0x36.., key xor 0x5c.., over 64 bytes) are computed
# once per statement in this CTE; each id then costs two sha256 calls.
_ID_PADS_CTE = f"""idk AS MATERIALIZED (
    SELECT decode(string_agg(lpad(to_hex(b # 54), 2, '0'), '' ORDER BY i), 'hex') AS ipad,
           decode(string_agg(lpad(to_hex(b # 92), 2, '0'), '' ORDER BY i), 'hex') AS opad
    FROM (SELECT i, CASE WHEN i < length(k.key) THEN get_byte(k.key, i) ELSE 0 END AS b
          FROM {ID_KEY_TABLE} k CROSS JOIN generate_series(0, 63) AS i) key_bytes
)"""


def _digest_sql(name: str) -> str:
    """SQL for the HMAC-SHA256 (hex) of <name>'s UTF-8 under the installation's key; needs `_ID_PADS_CTE`."""
    return (
        "encode(sha256((SELECT opad FROM idk) || sha256((SELECT ipad FROM idk) || "
        f"convert_to({name}, 'UTF8'))), 'hex')"
    )


def _uuid_sql(h: str) -> str:
    """SQL making a UUID of that digest's first 128 bits: version 8 (RFC 9562, custom) and variant bits set.

    <h> must be a column of a subquery fenced with OFFSET 0, so the digest is
    computed once, not in each of the four places that read it.
    """
    return (
        f"(substr({h}, 1, 12) || '8' || substr({h}, 14, 3) "
        f"|| translate(substr({h}, 17, 1), '0123456789abcdef', '89ab89ab89ab89ab') || substr({h}, 18, 15))::uuid"
    )


_EDGE_NAME = "'edge:' || we.case_id || ':' || we.kind || ':' || we.source_id || ':' || we.target_id"


# What the host records call for, over the source querysets, by natural key:
# wn (firm_id, kind, ref_id, label) and we (firm_id, case_id, kind, source_id,
# target_id), where an edge's ends are the nodes already stored (a rebuild
# stores missing nodes before it adds edges). Ids are computed only for rows
# being inserted, so a rebuild with nothing to do hashes nothing. `we` names the
# firm as a constant (`%(firm)s`), so the node lookups read that firm's
# rows only: a rebuild under `_bulk_planning` hashes whole inputs, and without it
# would hash every firm's nodes (issue 28). Statements joining `wn` or the edge
# table to the stored rows name the firm too, for the same reason.
_WANTED_SQL = f"""
WITH {_ID_PADS_CTE},
heads AS MATERIALIZED ({{heads}}), team AS MATERIALIZED ({{team}}), parties AS MATERIALIZED ({{parties}}),
wn AS (
    SELECT DISTINCT firm_id, kind, ref_id, left(label, {_LABEL_MAX}) AS label FROM (
        SELECT firm_ref AS firm_id, '{CASE}' AS kind, case_ref AS ref_id, case_label AS label FROM heads
        UNION ALL SELECT firm_ref, '{LAWYER}', owner_ref, owner_label FROM heads WHERE owner_ref IS NOT NULL
        UNION ALL SELECT firm_ref, '{CLIENT}', client_ref, client_label FROM heads WHERE client_ref IS NOT NULL
        UNION ALL SELECT h.firm_ref, '{LAWYER}', t.user_ref, t.user_label FROM team t JOIN heads h USING (case_ref)
        UNION ALL SELECT h.firm_ref, '{COUNTERPARTY}', p.party_ref, p.party_label FROM parties p JOIN heads h USING (case_ref)
    ) named
),
we_refs AS (
    SELECT firm_ref AS firm_id, case_ref AS case_id, '{WORKS_ON}' AS kind, '{LAWYER}' AS skind, owner_ref AS sref,
           '{CASE}' AS tkind, case_ref AS tref FROM heads WHERE owner_ref IS NOT NULL
    UNION ALL SELECT h.firm_ref, case_ref, '{WORKS_ON}', '{LAWYER}', t.user_ref, '{CASE}', case_ref
          FROM team t JOIN heads h USING (case_ref) WHERE t.user_ref IS DISTINCT FROM h.owner_ref
    UNION ALL SELECT firm_ref, case_ref, '{FOR_CLIENT}', '{CASE}', case_ref, '{CLIENT}', client_ref FROM heads
          WHERE client_ref IS NOT NULL
    UNION ALL SELECT h.firm_ref, case_ref, '{AGAINST}', '{CASE}', case_ref, '{COUNTERPARTY}', p.party_ref
          FROM parties p JOIN heads h USING (case_ref)
),
we AS (
    SELECT r.firm_id, r.case_id, r.kind, s.id AS source_id, t.id AS target_id FROM we_refs r
    JOIN {N} s ON s.firm_id = r.firm_id AND s.kind = r.skind AND s.ref_id = r.sref
    JOIN {N} t ON t.firm_id = r.firm_id AND t.kind = r.tkind AND t.ref_id = r.tref
    WHERE r.firm_id = %(firm)s
)
"""
_SAME_EDGE = "e.case_id = we.case_id AND e.kind = we.kind AND e.source_id = we.source_id AND e.target_id = we.target_id"


def _no_edge(firm: str) -> str:
    """SQL true for a node `n` no edge touches. An edge has its ends' firm (`firm`: SQL for it), so naming
    it lets PostgreSQL read that firm's edges only: as a constant where the test sits under an OR (a
    subplan, which would otherwise hash every edge), as n.firm_id elsewhere (an anti-join derives it)."""
    return (
        f"NOT EXISTS (SELECT 1 FROM {E} x WHERE x.firm_id = {firm} AND x.source_id = n.id) "
        f"AND NOT EXISTS (SELECT 1 FROM {E} x WHERE x.firm_id = {firm} AND x.target_id = n.id)"
    )


_NO_EDGE = _no_edge("n.firm_id")
# Every node of the firm that no edge touches.
_ORPHANS = f"DELETE FROM {N} n WHERE n.firm_id = %(firm)s AND {_NO_EDGE}"


def _wanted(*, firm_id: int, case_id: int | None) -> dict[str, Any]:
    """What a statement starting with `{wanted}` (the WITH clause defining wn and we for the firm, or for one
    case of it) needs: `wanted` itself, the host's querysets it reads, and `firm`."""
    scope = {"firm_id": None if case_id is not None else firm_id, "case_id": case_id}
    adapter = get_adapter()
    return {
        "wanted": _WANTED_SQL,
        "heads": Stmt(*queryset_sql(adapter.graph_case_headers(**scope))),
        "team": Stmt(*queryset_sql(adapter.graph_team_links(**scope))),
        "parties": Stmt(*queryset_sql(adapter.graph_counterparty_links(**scope))),
        "firm": firm_id,
    }


def _keys(kind: str, label: str) -> tuple[str, str]:
    name_key, party = name_keys(label)
    return name_key[:_LABEL_MAX], party[:_LABEL_MAX] if kind in (CLIENT, COUNTERPARTY) else ""


_NODE_NAME = "'node:' || w.firm_id || ':' || w.kind || ':' || w.ref_id"


def _write_nodes(cursor: Any, wanted: dict[str, Any], changes: GraphChanges) -> int:
    """Insert the wanted nodes that are missing and relabel those whose label or keys differ; returns how many are wanted.

    The name keys come from `names.py` (Python), so the wanted labels are read
    back beside the stored ones and only the differences go back, as one JSON
    parameter (PostgreSQL parses it far faster than psycopg quotes arrays).
    """
    rows = sql(
        "{wanted} SELECT wn.firm_id, wn.kind, wn.ref_id, wn.label, n.id, n.label, n.name_key, n.party_key "
        f"FROM wn LEFT JOIN {N} n ON n.firm_id = wn.firm_id AND n.kind = wn.kind AND n.ref_id = wn.ref_id "
        "WHERE wn.firm_id = %(firm)s",
        **wanted,
    ).execute(cursor).fetchall()
    new: list[list[Any]] = []
    changed: list[list[Any]] = []
    for firm_id, kind, ref_id, label, node_id, old_label, old_name_key, old_party_key in rows:
        name_key, party = _keys(kind, label)
        if node_id is None:
            new.append([firm_id, kind, ref_id, label, name_key, party])
        elif (label, name_key, party) != (old_label, old_name_key, old_party_key):
            changed.append([str(node_id), label, name_key, party])
    if new:
        sql(
            f"WITH {_ID_PADS_CTE} INSERT INTO {N} (id, firm_id, kind, ref_id, label, name_key, party_key) "
            f"SELECT {_uuid_sql('w.h')}, w.firm_id, w.kind, w.ref_id, w.label, w.name_key, w.party_key FROM ("
            f"SELECT w.*, {_digest_sql(_NODE_NAME)} AS h FROM json_to_recordset(%(rows)s::json) "
            "AS w(firm_id bigint, kind text, ref_id bigint, label text, name_key text, party_key text) OFFSET 0) w",
            rows=json.dumps([dict(zip(_NODE_COLUMNS, row, strict=True)) for row in new]),
        ).execute(cursor)
        changes.nodes_added = cursor.rowcount
    if changed:
        sql(
            f"UPDATE {N} n SET label = w.label, name_key = w.name_key, party_key = w.party_key "
            "FROM json_to_recordset(%(rows)s::json) AS w(id uuid, label text, name_key text, party_key text) "
            "WHERE n.id = w.id AND n.firm_id = %(firm)s",
            rows=json.dumps([dict(zip(("id", "label", "name_key", "party_key"), row, strict=True)) for row in changed]),
            firm=wanted["firm"],
        ).execute(cursor)
        changes.nodes_updated = cursor.rowcount
    return len(rows)


_NODE_COLUMNS = ("firm_id", "kind", "ref_id", "label", "name_key", "party_key")


def _apply(*, firm_id: int, case_id: int | None) -> GraphChanges:
    """Make the stored rows in scope (the firm, or one case's edges) what the host records call for.

    Each statement computes the wanted rows afresh from the host tables. A host
    change committed between two statements can want an edge whose node is
    not stored yet (the edge is skipped) or drop a node an edge still uses (the
    node is kept); that change's own sync, waiting on the firm's lock, then
    finishes the job.
    """
    changes = GraphChanges()
    wanted = {**_wanted(firm_id=firm_id, case_id=case_id), "case": case_id}
    # The firm always: the edge table is partitioned by it (migration 0020), so a case's edges are in its partition.
    wanted["edges"] = "e.firm_id = %(firm)s AND e.case_id = %(case)s" if case_id is not None else "e.firm_id = %(firm)s"
    with connection.cursor() as cursor:
        sql(
            f"{{wanted}} DELETE FROM {E} e WHERE {{edges}} AND NOT EXISTS (SELECT 1 FROM we WHERE {_SAME_EDGE}) "
            "RETURNING e.source_id, e.target_id",
            **wanted,
        ).execute(cursor)
        freed = sorted({node for row in cursor.fetchall() for node in row})
        changes.edges_removed = cursor.rowcount
        wanted_nodes = _write_nodes(cursor, wanted, changes)
        # No ON CONFLICT: the firm's lock and the NOT EXISTS leave nothing to conflict with.
        sql(
            f"{{wanted}} INSERT INTO {E} (id, firm_id, case_id, kind, source_id, target_id) "
            f"SELECT {_uuid_sql('d.h')}, d.firm_id, d.case_id, d.kind, d.source_id, d.target_id FROM ("
            f"SELECT we.*, {_digest_sql(_EDGE_NAME)} AS h FROM we "
            f"WHERE NOT EXISTS (SELECT 1 FROM {E} e WHERE e.firm_id = we.firm_id AND {_SAME_EDGE}) OFFSET 0) d",
            **wanted,
        ).execute(cursor)
        changes.edges_added = cursor.rowcount
        # The firm's edges are now the wanted ones, and every wanted node has an
        # edge: a node without one is not wanted.
        if case_id is None:
            changes.nodes_removed = sql(_ORPHANS, firm=firm_id).execute(cursor).rowcount
        elif freed:
            # Only nodes this case let go of can have become orphans.
            statement = f"DELETE FROM {N} n WHERE n.id = ANY(%(freed)s::uuid[]) AND n.firm_id = %(firm)s AND {_NO_EDGE}"
            changes.nodes_removed = sql(statement, freed=freed, firm=firm_id).execute(cursor).rowcount
        sql(f"SELECT count(*) FROM {E} e WHERE {{edges}}", **wanted).execute(cursor)
        changes.unchanged = wanted_nodes - changes.nodes_added - changes.nodes_updated + cursor.fetchone()[0] - changes.edges_added
    return changes


def _lock_firm(firm_id: int) -> None:
    """Serialise graph writes of one firm, so an orphan sweep never races an insert that needs the node."""
    locks.lock_for_transaction(locks.LockKind.GRAPH_FIRM, firm_id)


@contextmanager
def _bulk_planning() -> Iterator[None]:
    """Plan a firm-wide rebuild for bulk: hash joins in memory.

    The planner cannot count the rows of the CTEs above and would probe an
    index once per row for 60,000 edges; hashing is twice as fast. The old
    values come back afterwards, even inside a caller's transaction.
    """
    settings = {"work_mem": "64MB", "enable_nestloop": "off"}
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(f"current_setting('{name}')" for name in settings))
        previous = dict(zip(settings, cursor.fetchone(), strict=True))
        for name, value in settings.items():
            sql("SELECT set_config(%(name)s, %(value)s, true)", name=name, value=value).execute(cursor)
    # Not in a `finally`: after an error the transaction is aborted, a statement here would
    # replace that error with "current transaction is aborted", and the rollback of the
    # rebuild's atomic block undoes these set_config(..., true) anyway.
    yield
    with connection.cursor() as cursor:
        for name, value in previous.items():
            sql("SELECT set_config(%(name)s, %(value)s, true)", name=name, value=value).execute(cursor)


def graph_rebuild_firm(*, firm_id: int) -> GraphChanges:
    """Make the firm's nodes and edges exactly what its host records call for; one transaction.

    Deterministic and idempotent: unchanged rows keep their ids and are not
    written; a rebuild with nothing changed writes zero rows.
    """
    with transaction.atomic():
        _lock_firm(firm_id)
        with _bulk_planning():
            changes = _apply(firm_id=firm_id, case_id=None)
    logger.info("graph rebuild of firm %s: %s", firm_id, changes.describe())
    return changes


def _firm_of_case(case_id: int) -> int | None:
    firm_column = case_firm_attname()
    firm_id = case_model().objects.filter(pk=case_id).values_list(firm_column, flat=True).first()
    if firm_id is None:
        # The case is gone; its node (if the map ever had it) still knows the firm.
        firm_id = Node.objects.filter(kind=CASE, ref_id=case_id).values_list("firm_id", flat=True).first()
    return firm_id


def graph_sync_case(*, case_id: int) -> GraphChanges:
    """Bring one case's edges, and the nodes they touch, to what a full rebuild would write.

    A case that no longer exists loses its edges and its node, and any node
    left with no edge goes too.
    """
    firm_id = _firm_of_case(case_id)
    if firm_id is None:
        return GraphChanges()
    with transaction.atomic():
        _lock_firm(firm_id)
        changes = _apply(firm_id=firm_id, case_id=case_id)
        if not case_model().objects.filter(pk=case_id).exists():
            changes += _remove_orphans(firm_id=firm_id)
    return changes


def _remove_orphans(*, firm_id: int) -> GraphChanges:
    """Delete every node of the firm that no edge touches (after a case was deleted and its edges cascaded)."""
    with connection.cursor() as cursor:
        return GraphChanges(nodes_removed=sql(_ORPHANS, firm=firm_id).execute(cursor).rowcount)


def graph_refresh_label(*, kind: str, ref_id: int) -> int:
    """Re-read the label of the record behind one node (a renamed client, say); returns rows written (0 or 1)."""
    label = get_adapter().graph_label(kind=kind, ref_id=ref_id)
    if label is None:
        return 0
    label = label[:_LABEL_MAX]
    name_key, party_key = _keys(kind, label)
    with connection.cursor() as cursor:
        return sql(
            f"UPDATE {N} SET label = %(label)s, name_key = %(name_key)s, party_key = %(party_key)s "
            "WHERE kind = %(kind)s AND ref_id = %(ref_id)s "
            "AND (label, name_key, party_key) IS DISTINCT FROM (%(label)s, %(name_key)s, %(party_key)s)",
            label=label, name_key=name_key, party_key=party_key, kind=kind, ref_id=ref_id,
        ).execute(cursor).rowcount


def graph_firms(*, slugs: Iterable[str] | None = None) -> list[tuple[int, str]]:
    """(id, slug) of the firms to rebuild: all, or those with these slugs (for the command)."""
    slug = get_adapter().firm_slug_field
    firms = firm_model().objects.order_by("pk")
    if slugs is not None:
        firms = firms.filter(**{f"{slug}__in": list(slugs)})
    return list(firms.values_list("pk", slug))


@dataclass
class GraphDrift:
    """What `graph_rebuild_firm` would change, found without writing (the lint's dry run).

    Nodes are (id or None, kind, ref_id, label); a relabel carries the label a rebuild
    would write; edges are (id or None, case_id, kind, source, target) with each end
    as (kind, ref_id) (None when a stored edge's end node is gone).
    """

    nodes_missing: list[tuple[Any, ...]]
    nodes_relabelled: list[tuple[Any, ...]]
    nodes_extra: list[tuple[Any, ...]]
    orphans: list[tuple[Any, ...]]
    edges_missing: list[tuple[Any, ...]]
    edges_extra: list[tuple[Any, ...]]


_STORED_EDGES = f"""
se AS (
    SELECT e.id, e.case_id, e.kind, s.kind AS skind, s.ref_id AS sref, t.kind AS tkind, t.ref_id AS tref
    FROM {E} e LEFT JOIN {N} s ON s.id = e.source_id AND s.firm_id = e.firm_id
    LEFT JOIN {N} t ON t.id = e.target_id AND t.firm_id = e.firm_id WHERE e.firm_id = %(firm)s
)
"""
_SAME_REFS = (
    "se.case_id = r.case_id AND se.kind = r.kind AND se.skind = r.skind AND se.sref = r.sref "
    "AND se.tkind = r.tkind AND se.tref = r.tref"
)


def graph_drift_firm(*, firm_id: int) -> GraphDrift:
    """The difference between the firm's stored map and what its host records call for; writes nothing.

    Three statements, whatever the size of the firm: the wanted nodes beside the
    stored ones, the stored nodes nobody wants (and those no edge touches), and
    the edges on either side only, compared by what they stand for (case, kind,
    ends by kind and host id), so a wanted edge whose end is not stored yet
    still shows as missing.
    """
    wanted = _wanted(firm_id=firm_id, case_id=None)
    missing, relabelled = [], []
    with transaction.atomic(), _bulk_planning(), connection.cursor() as cursor:
        sql(
            "{wanted} SELECT wn.kind, wn.ref_id, wn.label, n.id, n.label, n.name_key, n.party_key "
            f"FROM wn LEFT JOIN {N} n ON n.firm_id = wn.firm_id AND n.kind = wn.kind AND n.ref_id = wn.ref_id "
            "WHERE wn.firm_id = %(firm)s ORDER BY wn.kind, wn.ref_id",
            **wanted,
        ).execute(cursor)
        for kind, ref_id, label, node_id, old_label, old_name_key, old_party_key in cursor.fetchall():
            if node_id is None:
                missing.append((None, kind, ref_id, label))
            elif (label, *_keys(kind, label)) != (old_label, old_name_key, old_party_key):
                relabelled.append((node_id, kind, ref_id, old_label, label))
        nodes = sql(
            f"{{wanted}} SELECT n.id, n.kind, n.ref_id, n.label, {_no_edge('%(firm)s')} AS orphan FROM {N} n "
            "WHERE n.firm_id = %(firm)s "
            "AND (NOT EXISTS (SELECT 1 FROM wn WHERE wn.kind = n.kind AND wn.ref_id = n.ref_id) OR "
            f"{_no_edge('%(firm)s')}) ORDER BY n.kind, n.ref_id",
            **wanted,
        ).execute(cursor).fetchall()
        edges = sql(
            f"{{wanted}}, {_STORED_EDGES} "
            "SELECT NULL::uuid, r.case_id, r.kind, r.skind, r.sref, r.tkind, r.tref FROM we_refs r "
            f"WHERE NOT EXISTS (SELECT 1 FROM se WHERE {_SAME_REFS}) "
            "UNION ALL SELECT se.id, se.case_id, se.kind, se.skind, se.sref, se.tkind, se.tref FROM se "
            f"WHERE NOT EXISTS (SELECT 1 FROM we_refs r WHERE {_SAME_REFS}) ORDER BY 2, 3, 4, 5, 6, 7",
            **wanted,
        ).execute(cursor).fetchall()

    def end(kind: str | None, ref: int | None) -> tuple[str, int] | None:
        return (kind, ref) if kind is not None and ref is not None else None

    return GraphDrift(
        nodes_missing=missing,
        nodes_relabelled=relabelled,
        nodes_extra=[row[:4] for row in nodes if not row[4]],
        orphans=[row[:4] for row in nodes if row[4]],
        edges_missing=[(None, c, k, end(sk, sr), end(tk, tr)) for i, c, k, sk, sr, tk, tr in edges if i is None],
        edges_extra=[(i, c, k, end(sk, sr), end(tk, tr)) for i, c, k, sk, sr, tk, tr in edges if i is not None],
    )
