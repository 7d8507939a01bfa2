"""Reads of the connection map, always for one viewer: walk, name lookup, conflict check.

Each read starts from `access.visible_case_ids(viewer)` and keeps only edges
of those cases, inside the SQL: a node exists for a viewer only if an edge of
a case they may open touches it. What they may not see is indistinguishable
from what does not exist: the same `NotFound`, and no `has_more` that counts
a hidden row. Each read is a fixed number of queries, whatever the graph's size.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.db.models import Case, Exists, F, IntegerField, OuterRef, Q, QuerySet, Value, When

from graph_memory import access, conf
from graph_memory.models import Edge, Node
from graph_memory.names import lookup_key, party_key


@dataclass(frozen=True)
class NodeRef:
    """A node as the reads return it: opaque id, kind and label only."""

    id: str
    kind: str
    label: str

    @classmethod
    def of(cls, node: Node) -> NodeRef:
        return cls(id=str(node.pk), kind=node.kind, label=node.label)


@dataclass(frozen=True)
class Neighbor:
    node: NodeRef
    edge: str
    case: NodeRef


@dataclass(frozen=True)
class NeighborPage:
    node: NodeRef
    results: list[Neighbor]
    has_more: bool


@dataclass(frozen=True)
class NodePage:
    results: list[NodeRef]
    has_more: bool


@dataclass(frozen=True)
class ConflictMatch:
    case: NodeRef
    party: NodeRef
    role: str  # "client" or "counterparty"


@dataclass(frozen=True)
class ConflictReport:
    name: str
    matches: list[ConflictMatch]
    has_more: bool


def _limit(limit: int | None) -> int:
    """The page size; out of range is the caller's error, never a silent cut."""
    if limit is None:
        return int(conf.get("PAGE_DEFAULT"))
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= int(conf.get("PAGE_MAX")):
        raise ValueError(f"limit must be an integer from 1 to {conf.get('PAGE_MAX')}")
    return limit


def _kind(kind: str | None) -> str | None:
    if kind is not None and kind not in Node.Kind.values:
        raise ValueError(f"kind must be one of {', '.join(Node.Kind.values)}")
    return kind


def _visible_edges(viewer: Any) -> QuerySet[Edge]:
    """Edges of the cases this viewer may open (lazy; used inside other queries)."""
    return Edge.objects.filter(case_id__in=access.visible_case_ids(viewer))


def _reachable(viewer: Any) -> Exists:
    """True for a node some visible edge touches. Every edge has its case node at one end."""
    return Exists(_visible_edges(viewer).filter(Q(source_id=OuterRef("pk")) | Q(target_id=OuterRef("pk"))))


def _parse_node_id(node_id: Any) -> uuid.UUID:
    try:
        return node_id if isinstance(node_id, uuid.UUID) else uuid.UUID(str(node_id))
    except (TypeError, ValueError, AttributeError):
        raise access.NotFound from None


def node_get(*, viewer: Any, node_id: Any) -> Node:
    """The node if this viewer reaches it through a case they may open; `NotFound` otherwise.

    Hidden, non-existent and malformed ids raise the same `NotFound`. One query.
    """
    pk = _parse_node_id(node_id)
    firm_id = getattr(viewer, "firm_id", None)
    node = Node.objects.filter(pk=pk, firm_id=firm_id).filter(_reachable(viewer)).first() if firm_id else None
    if node is None:
        raise access.NotFound
    return node


def node_neighbors(*, viewer: Any, node_id: Any, kind: str | None = None, limit: int | None = None) -> NeighborPage:
    """One step from a node, only along edges of cases the viewer may open. Two queries.

    `kind` keeps neighbours of that kind. Ordered by neighbour kind, label and
    id; `has_more` looks one row past the page among visible rows only.
    """
    kind, limit = _kind(kind), _limit(limit)
    node = node_get(viewer=viewer, node_id=node_id)
    outgoing, incoming = Q(source_id=node.pk), Q(target_id=node.pk)
    if kind is not None:
        outgoing &= Q(target__kind=kind)
        incoming &= Q(source__kind=kind)
    edges = (
        _visible_edges(viewer)
        .filter(outgoing | incoming)
        .select_related("source", "target")
        .annotate(
            n_kind=Case(When(source_id=node.pk, then=F("target__kind")), default=F("source__kind")),
            n_label=Case(When(source_id=node.pk, then=F("target__label")), default=F("source__label")),
            n_id=Case(When(source_id=node.pk, then=F("target_id")), default=F("source_id")),
        )
        .order_by("n_kind", "n_label", "n_id", "kind")[: limit + 1]
    )
    rows = list(edges)
    results = []
    for edge in rows[:limit]:
        neighbor = edge.target if edge.source_id == node.pk else edge.source
        case_node = edge.source if edge.source.kind == Node.Kind.CASE else edge.target
        results.append(Neighbor(node=NodeRef.of(neighbor), edge=edge.kind, case=NodeRef.of(case_node)))
    return NeighborPage(node=NodeRef.of(node), results=results, has_more=len(rows) > limit)


def nodes_lookup(*, viewer: Any, q: str, kind: str | None = None, limit: int | None = None) -> NodePage:
    """Nodes whose name contains `q` (case-, accent- and punctuation-insensitive), visible ones only. One query.

    Names that start with `q` come first, then by label and id. A `q` with
    no letter or digit finds nothing.
    """
    kind, limit = _kind(kind), _limit(limit)
    key = lookup_key(q)
    firm_id = getattr(viewer, "firm_id", None)
    if not key or not firm_id:
        return NodePage(results=[], has_more=False)
    nodes = Node.objects.filter(firm_id=firm_id, name_key__contains=key)
    if kind is not None:
        nodes = nodes.filter(kind=kind)
    nodes = (
        nodes.filter(_reachable(viewer))
        .annotate(prefix=Case(When(name_key__startswith=key, then=Value(0)), default=Value(1), output_field=IntegerField()))
        .only("id", "kind", "label")
        .order_by("prefix", "label", "id")[: limit + 1]
    )
    rows = list(nodes)
    return NodePage(results=[NodeRef.of(n) for n in rows[:limit]], has_more=len(rows) > limit)


_ROLE = {Edge.Kind.FOR_CLIENT: "client", Edge.Kind.AGAINST: "counterparty"}


def conflicts_check(*, viewer: Any, name: str, limit: int | None = None) -> ConflictReport:
    """The viewer's cases where a client or counterparty has this name after normalisation. One query.

    Case, accents, punctuation, a leading "the" and trailing legal forms
    (Inc., LLC, Corp., GmbH, S.A., plc, ...) are ignored. A firm admin's check
    covers the whole firm; anyone else's covers the cases they may open.
    Ordered by case label, then role, then party label; capped at `limit`
    (default PAGE_MAX) with `has_more`.
    """
    limit = int(conf.get("PAGE_MAX")) if limit is None else _limit(limit)
    key = party_key(name)
    firm_id = getattr(viewer, "firm_id", None)
    if not key or not firm_id:
        return ConflictReport(name=name, matches=[], has_more=False)
    edges = (
        _visible_edges(viewer)
        .filter(
            firm_id=firm_id,
            kind__in=list(_ROLE),
            target__firm_id=firm_id,
            target__party_key=key,
        )
        .select_related("source", "target")
        .order_by("source__label", "source_id", "kind", "target__label", "target_id")[: limit + 1]
    )
    rows = list(edges)
    matches = [ConflictMatch(case=NodeRef.of(e.source), party=NodeRef.of(e.target), role=_ROLE[e.kind]) for e in rows[:limit]]
    return ConflictReport(name=name, matches=matches, has_more=len(rows) > limit)
