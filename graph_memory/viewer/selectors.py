"""Reads of the connection map, always for one viewer: a node, a walk, name lookup, conflict check.

Each read decides the viewer's scope once (`scope.scope_of`) and runs its
statements through `scope.rows` (declared in `wall/reads.py`), which keep only
edges of cases the viewer may open, inside the SQL: a node exists for a viewer
only if an edge of a case they may open touches it. What they may not see is
indistinguishable from what does not exist: the same `NotFound`, and no
`has_more` that counts a hidden row. Each read is a fixed number of queries,
whatever the graph's size.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.db import connection

from graph_memory import conf
from graph_memory.adapter import Viewer
from graph_memory.map import names
from graph_memory.map.names import lookup_key, lookup_query
from graph_memory.models import Edge, Node
from graph_memory.models.graph import PARTY_VARIANTS_COLUMN
from graph_memory.plumbing.stmt import Stmt, sql
from graph_memory.wall import access, reads
from graph_memory.wall.scope import Scope, columns_and_rows, rows, scope_of

N = Node._meta.db_table
_ROLE = {Edge.Kind.FOR_CLIENT.value: "client", Edge.Kind.AGAINST.value: "counterparty"}
# Candidates scored in Python (names.conflict_match) at most: past it, `has_more`.
CONFLICT_CANDIDATES = 200


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
    match: str = "exact"  # names.KINDS: exact, words, reordered, similar
    similarity: float = 1.0  # names.NameMatch.similarity


@dataclass(frozen=True)
class ConflictReport:
    name: str
    matches: list[ConflictMatch]
    has_more: bool


def _kind(kind: str | None) -> str | None:
    if kind is not None and kind not in Node.Kind.values:
        raise ValueError(f"kind must be one of {', '.join(Node.Kind.values)}")
    return kind


def _parse_node_id(node_id: Any) -> uuid.UUID:
    try:
        return node_id if isinstance(node_id, uuid.UUID) else uuid.UUID(str(node_id))
    except (TypeError, ValueError, AttributeError):
        raise access.NotFound from None


def node_get(*, viewer: Viewer, node_id: Any) -> Node:
    """The node if this viewer reaches it through a case they may open; `NotFound` otherwise.

    Hidden, non-existent and malformed ids raise the same `NotFound`. One query.
    """
    return node_in_scope(scope_of(viewer), node_id=node_id)


def node_in_scope(scope: Scope, *, node_id: Any) -> Node:
    """`node_get` for a scope decided already (a brief decides it once for its two statements)."""
    columns, found = columns_and_rows(scope, reads.NODE, node=_parse_node_id(node_id))
    if not found:
        raise access.NotFound
    return Node.from_db(connection.alias, columns, found[0])


def node_neighbors(*, viewer: Viewer, node_id: Any, kind: str | None = None, limit: int | None = None) -> NeighborPage:
    """One step from a node, only along edges of cases the viewer may open. One query.

    `kind` keeps neighbours of that kind. Ordered by neighbour kind, label and
    id; `has_more` looks one row past the page among visible rows only. A node
    the viewer reaches through no such edge raises `NotFound`, exactly like a
    malformed or unknown id.
    """
    kind, limit = _kind(kind), conf.page_size(limit)
    pk = _parse_node_id(node_id)
    found = rows(scope_of(viewer), reads.WALK, node=pk, kind=kind, fetch=limit + 1)
    if not found:
        raise access.NotFound
    me = NodeRef(id=str(found[0][0]), kind=found[0][1], label=found[0][2])
    results = []
    for *_, other_id, other_kind, other_label, edge in found[:limit]:
        if other_id is None:  # the node is reachable, but has no neighbour of this kind
            continue
        other = NodeRef(id=str(other_id), kind=other_kind, label=other_label)
        # Every edge joins its own case's node to something: one of the two ends is the case.
        results.append(Neighbor(node=other, edge=edge, case=me if me.kind == Node.Kind.CASE else other))
    return NeighborPage(node=me, results=results, has_more=len(found) > limit)


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def nodes_lookup(*, viewer: Viewer, q: str, kind: str | None = None, limit: int | None = None) -> NodePage:
    """Nodes whose name contains `q` (case-, accent- and punctuation-insensitive), visible ones only. One query.

    Names that start with `q` come first, then by label and id. A `q` with
    no letter or digit finds nothing.
    """
    kind, limit = _kind(kind), conf.page_size(limit)
    key = lookup_key(q)
    scope = scope_of(viewer)
    if not key or scope.empty or scope.firm_id is None:
        return NodePage(results=[], has_more=False)
    pattern = _like_escape(key)
    found = rows(
        scope, reads.LOOKUP, prefix=f"{pattern}%", pattern=f"%{pattern}%", kind=kind, fetch=limit + 1,
        firm_words=lookup_query(scope.firm_id, key), holder_words=lookup_query(names.HOLDER_MARK, key),
    )  # fmt: skip
    results = [NodeRef(id=str(pk), kind=node_kind, label=label) for pk, node_kind, label in found[:limit]]
    return NodePage(results=results, has_more=len(found) > limit)


def _conflict_probes(groups: list[list[list[str]]], firm_id: int) -> Stmt:
    """The statement of the parties that hold a string of every word of some reading (`index_groups`),
    one GIN probe per reading. Each reading's strings come into its probe from outside (LATERAL,
    OFFSET 0), so the planner cannot weigh them: given them as constants, it may judge a word's
    initial ("^n") so common that reading every node is cheaper, as it did on a small firm. The
    VALUES row sits behind an OFFSET 0 of its own: a one-row VALUES is otherwise folded into the probe as
    constants all the same (bench_scale: a firm admin's check read 70,000 nodes, 572 ms, in a database
    holding that firm alone, where the node table was small enough for a scan to look cheaper). Each probe
    names the firm, for its partition of the nodes (migration 0030)."""
    if not groups:
        return Stmt("SELECT NULL::uuid AS id WHERE false")
    probes = []
    strings: dict[str, list[str]] = {}
    for r, reading in enumerate(groups):
        strings.update({f"w{r}_{i}": variants for i, variants in enumerate(reading)})
        words = ", ".join(f"%(w{r}_{i})s::text[]" for i in range(len(reading)))
        tests = " AND ".join(f"p.{PARTY_VARIANTS_COLUMN} && w.w{i}" for i in range(len(reading)))
        columns = ", ".join(f"w{i}" for i in range(len(reading)))
        probes.append(
            f"SELECT p.id FROM (SELECT * FROM (VALUES ({words})) v({columns}) OFFSET 0) w "
            f"CROSS JOIN LATERAL (SELECT p.id FROM {N} p WHERE p.firm_id = %(firm)s AND {tests} OFFSET 0) p"
        )
    return sql(" UNION ".join(probes), firm=firm_id, **strings)


def _wanted(query: names.ConflictQuery, firm_id: int) -> tuple[list[str], list[int], list[int]]:
    """The index strings the query needs, each with its reading and its word within the reading."""
    variants: list[str] = []
    readings: list[int] = []
    words: list[int] = []
    for r, lists in enumerate(query.index_groups(firm_id)):
        for w, strings in enumerate(lists):
            variants += strings
            readings += [r] * len(strings)
            words += [w] * len(strings)
    return variants, readings, words


def conflicts_check(*, viewer: Viewer, name: str, limit: int | None = None) -> ConflictReport:
    """The viewer's cases where a client or counterparty matches this name, best match first. One query.

    A match is, best first: the same name once case, accents, punctuation, a
    leading "the" and trailing legal forms (Inc., LLC, Corp., GmbH, S.A., plc,
    ...) are ignored (`exact`); the words asked among the name's words, in
    order (`words`: "Northwind" finds "Northwind Holdings, Inc."); the same
    words reordered or as initials (`reordered`: "Lee, Jordan", "J. Lee");
    within a few typing errors (`similar`: names.py has the thresholds). Each
    carries its kind and a similarity; ties go by party label, then case label.
    A firm admin's check covers the whole firm; anyone else's only the cases
    they may open, so an empty answer is no clearance, and nothing of another
    case (no party, no count, no `has_more`) shows through. Capped at `limit`
    (default PAGE_MAX) with `has_more`.
    """
    limit = int(conf.get("PAGE_MAX")) if limit is None else conf.page_size(limit)
    query = names.conflict_query(name)
    scope = scope_of(viewer)
    if not query.key or scope.empty or scope.firm_id is None:
        return ConflictReport(name=name, matches=[], has_more=False)
    variants, readings, word_ids = _wanted(query, scope.firm_id)
    found_rows = rows(
        scope, reads.CONFLICTS,
        found=_conflict_probes(query.index_groups(scope.firm_id), scope.firm_id), key=query.key,
        words=sorted({f"% {_like_escape(w)} %" for w in query.words}),
        candidates=CONFLICT_CANDIDATES + 1, fetch=limit + 1,
        variants=variants, readings=readings, word_ids=word_ids, few=int(conf.get("VISIBLE_FIRST_MAX")), than="%(few)s",
        **scope.grants_past(),
    )  # fmt: skip
    parties: dict[Any, tuple[NodeRef, names.NameMatch | None, list[tuple[NodeRef, str]]]] = {}
    for p_id, p_kind, p_label, p_key, p_lookup, c_id, c_kind, c_label, edge in found_rows:
        if p_id not in parties:
            parties[p_id] = (NodeRef(str(p_id), p_kind, p_label), names.conflict_match(query, p_key, p_lookup), [])
        parties[p_id][2].append((NodeRef(str(c_id), c_kind, c_label), _ROLE[edge]))
    rank = {kind: i for i, kind in enumerate(names.KINDS)}
    found = sorted(
        ((party, how, cases) for party, how, cases in parties.values() if how is not None),
        key=lambda e: (rank[e[1].kind], -e[1].similarity, e[0].label, e[0].id),
    )
    matches = [
        ConflictMatch(case=case, party=party, role=role, match=how.kind, similarity=how.similarity)
        for party, how, cases in found
        for case, role in cases
    ]
    more = len(matches) > limit or len(parties) > CONFLICT_CANDIDATES
    return ConflictReport(name=name, matches=matches[:limit], has_more=more)
