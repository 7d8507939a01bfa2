"""The connection map: derived from the host's records, rebuilt deterministically.

Four node kinds (lawyer, case, client, counterparty) and three edge kinds
(lawyer works_on case, case for_client client, case against counterparty);
every edge belongs to one case. Nothing here reasons about viewers: the reads
that do live in `selectors.py`.

Every row's id is a UUID derived from what it stands for, so the same host
records always give the same rows, and a rebuild only has to compare sets:
it computes the wanted rows, then deletes, updates and inserts the
difference in a handful of set-based statements, inside one transaction. A
rebuild with nothing changed writes nothing. A sync of one case runs the same
code scoped to that case's edges, so it ends exactly where a full rebuild
would.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any

from django.apps import apps
from django.db import connection, transaction

from graph_memory import conf, source
from graph_memory.models import Edge, Node
from graph_memory.names import lookup_key, party_key

logger = logging.getLogger(__name__)

# Fixed forever: changing it would give every node and edge a new id.
ID_NAMESPACE = uuid.UUID("5b0f6c1e-9a43-4d0e-8f3a-2c7d1e6a9b44")
# First half of the advisory-lock key that serialises graph writes per firm.
_LOCK_CLASS = 0x474D  # "GM"
_LABEL_MAX = Node._meta.get_field("label").max_length or 300

LAWYER, CASE, CLIENT, COUNTERPARTY = (k.value for k in Node.Kind)
WORKS_ON, FOR_CLIENT, AGAINST = (k.value for k in Edge.Kind)


def node_uuid(*, firm_id: int, kind: str, ref_id: int) -> uuid.UUID:
    return uuid.uuid5(ID_NAMESPACE, f"node:{firm_id}:{kind}:{ref_id}")


def edge_uuid(*, case_id: int, kind: str, source_id: uuid.UUID, target_id: uuid.UUID) -> uuid.UUID:
    return uuid.uuid5(ID_NAMESPACE, f"edge:{case_id}:{kind}:{source_id}:{target_id}")


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


@dataclass
class _Wanted:
    """The rows the host records call for, keyed by their derived ids."""

    nodes: dict[uuid.UUID, tuple[Any, ...]] = field(default_factory=dict)
    edges: dict[uuid.UUID, tuple[Any, ...]] = field(default_factory=dict)
    case_nodes: dict[int, tuple[int, uuid.UUID]] = field(default_factory=dict)

    def node(self, firm_id: int, kind: str, ref_id: int, label: str) -> uuid.UUID:
        node_id = node_uuid(firm_id=firm_id, kind=kind, ref_id=ref_id)
        if node_id not in self.nodes:
            label = label[:_LABEL_MAX]
            party = party_key(label)[:_LABEL_MAX] if kind in (CLIENT, COUNTERPARTY) else ""
            self.nodes[node_id] = (firm_id, kind, ref_id, label, lookup_key(label)[:_LABEL_MAX], party)
        return node_id

    def edge(self, firm_id: int, case_id: int, kind: str, source_id: uuid.UUID, target_id: uuid.UUID) -> None:
        edge_id = edge_uuid(case_id=case_id, kind=kind, source_id=source_id, target_id=target_id)
        self.edges[edge_id] = (firm_id, case_id, kind, source_id, target_id)


def _wanted(*, firm_id: int | None = None, case_id: int | None = None) -> _Wanted:
    scope = {"firm_id": firm_id, "case_id": case_id}
    wanted = _Wanted()
    for case, firm, label, owner, owner_label, client, client_label in source.graph_case_rows(**scope):
        case_node = wanted.node(firm, CASE, case, label)
        wanted.case_nodes[case] = (firm, case_node)
        wanted.edge(firm, case, WORKS_ON, wanted.node(firm, LAWYER, owner, owner_label), case_node)
        wanted.edge(firm, case, FOR_CLIENT, case_node, wanted.node(firm, CLIENT, client, client_label))
    # Links of a case that is not in the rows above (created after they were
    # read) are left to that case's own sync.
    for case, user, user_label in source.graph_team_rows(**scope):
        if case in wanted.case_nodes:
            firm, case_node = wanted.case_nodes[case]
            wanted.edge(firm, case, WORKS_ON, wanted.node(firm, LAWYER, user, user_label), case_node)
    for case, counterparty, name in source.graph_counterparty_rows(**scope):
        if case in wanted.case_nodes:
            firm, case_node = wanted.case_nodes[case]
            wanted.edge(firm, case, AGAINST, case_node, wanted.node(firm, COUNTERPARTY, counterparty, name))
    return wanted


N, E = Node._meta.db_table, Edge._meta.db_table
_WANT_NODES = "SELECT * FROM unnest(%s::uuid[], %s::bigint[], %s::text[], %s::bigint[], %s::text[], %s::text[], %s::text[]) AS w(id, firm_id, kind, ref_id, label, name_key, party_key)"
_NO_EDGE = f"NOT EXISTS (SELECT 1 FROM {E} e WHERE e.source_id = n.id) AND NOT EXISTS (SELECT 1 FROM {E} e WHERE e.target_id = n.id)"
_WANT_EDGES = "SELECT * FROM unnest(%s::uuid[], %s::bigint[], %s::bigint[], %s::text[], %s::uuid[], %s::uuid[]) AS w(id, firm_id, case_id, kind, source_id, target_id)"


def _columns(rows: dict[uuid.UUID, tuple[Any, ...]], width: int) -> list[list[Any]]:
    """{id: (a, b, ...)} as column arrays [ids, as, bs, ...] for unnest()."""
    columns: list[list[Any]] = [list(rows)] + [[] for _ in range(width)]
    for values in rows.values():
        for column, value in zip(columns[1:], values, strict=True):
            column.append(value)
    return columns


def _apply(wanted: _Wanted, *, firm_id: int, case_id: int | None) -> GraphChanges:
    """Make the stored rows in scope (the firm, or one case's edges) equal to `wanted`."""
    changes = GraphChanges()
    node_columns, edge_columns = _columns(wanted.nodes, 6), _columns(wanted.edges, 5)
    edge_scope = "e.case_id = %s" if case_id is not None else "e.firm_id = %s"
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {E} e WHERE {edge_scope} AND e.id NOT IN (SELECT unnest(%s::uuid[])) "
            "RETURNING e.source_id, e.target_id",
            [case_id if case_id is not None else firm_id, edge_columns[0]],
        )
        freed = {node for row in cursor.fetchall() for node in row}
        changes.edges_removed = cursor.rowcount
        cursor.execute(
            f"UPDATE {N} n SET label = w.label, name_key = w.name_key, party_key = w.party_key FROM ({_WANT_NODES}) w "
            "WHERE n.id = w.id AND (n.label, n.name_key, n.party_key) IS DISTINCT FROM (w.label, w.name_key, w.party_key)",
            node_columns,
        )
        changes.nodes_updated = cursor.rowcount
        # ON CONFLICT: a node another firm-wide writer added meanwhile is the same row.
        cursor.execute(
            f"INSERT INTO {N} (id, firm_id, kind, ref_id, label, name_key, party_key) "
            f"SELECT * FROM ({_WANT_NODES}) w WHERE NOT EXISTS (SELECT 1 FROM {N} n WHERE n.id = w.id) "
            "ON CONFLICT DO NOTHING",
            node_columns,
        )
        changes.nodes_added = cursor.rowcount
        cursor.execute(
            f"INSERT INTO {E} (id, firm_id, case_id, kind, source_id, target_id) "
            f"SELECT * FROM ({_WANT_EDGES}) w WHERE NOT EXISTS (SELECT 1 FROM {E} e WHERE e.id = w.id) "
            "ON CONFLICT DO NOTHING",
            edge_columns,
        )
        changes.edges_added = cursor.rowcount
        if case_id is None:
            cursor.execute(
                f"DELETE FROM {N} n WHERE n.firm_id = %s AND n.id NOT IN (SELECT unnest(%s::uuid[]))",
                [firm_id, node_columns[0]],
            )
        else:
            # Only nodes this case let go of can have become orphans.
            cursor.execute(
                f"DELETE FROM {N} n WHERE n.id = ANY(%s::uuid[]) AND {_NO_EDGE}",
                [sorted(freed - wanted.nodes.keys())],
            )
        changes.nodes_removed = cursor.rowcount
    changes.unchanged = len(wanted.nodes) + len(wanted.edges) - changes.nodes_added - changes.nodes_updated - changes.edges_added
    return changes


def _lock_firm(firm_id: int) -> None:
    """Serialise graph writes of one firm, so an orphan sweep never races an insert that needs the node."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_LOCK_CLASS, firm_id % 2_147_483_647])


def graph_rebuild_firm(*, firm_id: int) -> GraphChanges:
    """Make the firm's nodes and edges exactly what its host records call for; one transaction.

    Deterministic and idempotent: unchanged rows keep their ids and are not
    written; a rebuild with nothing changed writes zero rows.
    """
    with transaction.atomic():
        _lock_firm(firm_id)
        changes = _apply(_wanted(firm_id=firm_id), firm_id=firm_id, case_id=None)
    logger.info("graph rebuild of firm %s: %s", firm_id, changes.as_dict())
    return changes


def _firm_of_case(case_id: int) -> int | None:
    firm_id = source.Case.objects.filter(pk=case_id).values_list("firm_id", flat=True).first()
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
        wanted = _wanted(case_id=case_id)
        changes = _apply(wanted, firm_id=firm_id, case_id=case_id)
        if not wanted.case_nodes:
            changes += _remove_orphans(firm_id=firm_id)
    return changes


def _remove_orphans(*, firm_id: int) -> GraphChanges:
    """Delete every node of the firm that no edge touches (after a case was deleted and its edges cascaded)."""
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {N} n WHERE n.firm_id = %s AND {_NO_EDGE}", [firm_id])
        return GraphChanges(nodes_removed=cursor.rowcount)


def graph_refresh_label(*, kind: str, ref_id: int) -> int:
    """Re-read the label of the record behind one node (a renamed client, say); returns rows written (0 or 1)."""
    label = source.graph_label(kind=kind, ref_id=ref_id)
    if label is None:
        return 0
    label = label[:_LABEL_MAX]
    party = party_key(label)[:_LABEL_MAX] if kind in (CLIENT, COUNTERPARTY) else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {N} SET label = %s, name_key = %s, party_key = %s WHERE kind = %s AND ref_id = %s "
            "AND (label, name_key, party_key) IS DISTINCT FROM (%s, %s, %s)",
            [label, lookup_key(label)[:_LABEL_MAX], party, kind, ref_id, label, lookup_key(label)[:_LABEL_MAX], party],
        )
        return cursor.rowcount


def graph_firms(*, slugs: Iterable[str] | None = None) -> list[tuple[int, str]]:
    """(id, slug) of the firms to rebuild: all, or those with these slugs (for the command)."""
    firms = apps.get_model(conf.get("FIRM_MODEL")).objects.order_by("pk")
    if slugs is not None:
        firms = firms.filter(slug__in=list(slugs))
    return list(firms.values_list("pk", "slug"))
