"""Reads of the connection map, always for one viewer: walk, name lookup, conflict check.

Each read starts from `access.visible_case_ids(viewer)` and keeps only edges
of those cases, inside the SQL (the access query is embedded as a subquery): a node exists for a viewer only if an edge of
a case they may open touches it. What they may not see is indistinguishable
from what does not exist: the same `NotFound`, and no `has_more` that counts
a hidden row. Each read is a fixed number of queries, whatever the graph's size.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet

from graph_memory import conf
from graph_memory.map import names
from graph_memory.map.names import lookup_key, lookup_query
from graph_memory.models import Edge, Node
from graph_memory.models.graph import LOOKUP_WORDS_EXPRESSION, PARTY_VARIANTS_COLUMN
from graph_memory.wall import access, sight, walled_reads


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


def _visible_edges(viewer: Any) -> QuerySet[Edge]:
    """Edges of the cases this viewer may open (lazy; used inside other queries), in their firm's partition."""
    return Edge.objects.filter(firm_id=access.viewer_firm_id(viewer), case_id__in=access.visible_case_ids(viewer))


def _reachable(viewer: Any) -> Exists:
    """True for a node some visible edge touches. Every edge has its case node at one end."""
    return Exists(_visible_edges(viewer).filter(Q(source_id=OuterRef("pk")) | Q(target_id=OuterRef("pk"))))


def _parse_node_id(node_id: Any) -> uuid.UUID:
    try:
        return node_id if isinstance(node_id, uuid.UUID) else uuid.UUID(str(node_id))
    except (TypeError, ValueError, AttributeError):
        raise access.NotFound from None


_NODE_COLUMNS = [field.column for field in Node._meta.concrete_fields]


def node_get(*, viewer: Any, node_id: Any) -> Node:
    """The node if this viewer reaches it through a case they may open; `NotFound` otherwise.

    Hidden, non-existent and malformed ids raise the same `NotFound`. One query.
    """
    pk = _parse_node_id(node_id)
    firm_id = access.viewer_firm_id(viewer)
    if firm_id is None:
        raise access.NotFound
    if access.sees_whole_firm(viewer):
        node = Node.objects.filter(pk=pk, firm_id=firm_id).filter(_reachable(viewer)).first()
    else:  # from the viewer's cases: a hidden node costs what an unknown id does
        visible_sql, visible_params = access.visible_case_ids_sql(viewer)
        sql, params = walled_reads.NODE, [pk, firm_id, *visible_params, *visible_params, pk, firm_id, pk, firm_id]
        if sight.enabled():  # from their sight while it is current (graph_memory.wall.sight)
            columns = ", ".join(_NODE_COLUMNS)  # the model's own (the node table has one more)
            sighted = (f"SELECT {columns} FROM ({walled_reads.SIGHT_NODE}) n", [pk, firm_id, *visible_params, firm_id, pk, *visible_params])
            walled = (f"SELECT {columns} FROM ({sql}) n", params)
            rows, read = sight.answer(viewer, sighted=sighted, walled=walled, columns=len(_NODE_COLUMNS),
                                      visible_sql=visible_sql)  # fmt: skip
            node = Node.from_db(connection.alias, read, rows[0]) if rows else None
        else:
            node = next(iter(Node.objects.raw(sql.format(visible=visible_sql), params)), None)
    if node is None:
        raise access.NotFound
    return node


# The reads below are raw SQL around the access module's own query (embedded
# as a subquery, so the wall is the same): building them with the ORM cost
# more time in Python than PostgreSQL spends answering them. These start from
# what matches and are a firm admin's (nothing of the firm is hidden from them);
# anyone else's start from their own cases (walled_reads), so that hidden rows
# cost no time.
N, E = Node._meta.db_table, Edge._meta.db_table


def _visible(case_id: str) -> str:
    """A join that keeps a row only if the viewer may open case `case_id`.

    LATERAL with LIMIT 1 makes PostgreSQL probe the access query once per
    candidate row (an index lookup or two) instead of first listing every
    case the viewer may open: a walk or a lookup touches far fewer cases than
    a large firm holds.
    """
    return f"CROSS JOIN LATERAL (SELECT 1 FROM ({{visible}}) v(case_id) WHERE v.case_id = {case_id} LIMIT 1) ok"


# Neighbours are sorted first and checked against the wall lazily, in that
# order, until the page is full: a lawyer on 1,000 cases costs a sort of
# 1,000 small rows and about one access probe per row on the page.
_WALK_SQL = f"""
WITH me AS (SELECT id, kind, label FROM {N} WHERE id = %s AND firm_id = %s),
mine AS (
    SELECT e.kind, e.case_id, e.target_id AS other FROM me JOIN {E} e ON e.source_id = me.id AND e.firm_id = %s
    UNION ALL
    SELECT e.kind, e.case_id, e.source_id FROM me JOIN {E} e ON e.target_id = me.id AND e.firm_id = %s
)
SELECT me.id, me.kind, me.label, page.id, page.kind, page.label, page.edge
FROM me
LEFT JOIN LATERAL (
    SELECT sorted.* FROM (
        SELECT o.id, o.kind, o.label, m.kind AS edge, m.case_id FROM mine m JOIN {N} o ON o.id = m.other
        WHERE %s::text IS NULL OR o.kind = %s
        ORDER BY o.kind, o.label, o.id, m.kind OFFSET 0
    ) sorted {_visible("sorted.case_id")}
    ORDER BY sorted.kind, sorted.label, sorted.id, sorted.edge LIMIT %s
) page ON true
WHERE EXISTS (SELECT 1 FROM mine m {_visible("m.case_id")})
"""


def node_neighbors(*, viewer: Any, node_id: Any, kind: str | None = None, limit: int | None = None) -> NeighborPage:
    """One step from a node, only along edges of cases the viewer may open. One query.

    `kind` keeps neighbours of that kind. Ordered by neighbour kind, label and
    id; `has_more` looks one row past the page among visible rows only. A node
    the viewer reaches through no such edge raises `NotFound`, exactly like a
    malformed or unknown id.
    """
    kind, limit = _kind(kind), conf.page_size(limit)
    pk = _parse_node_id(node_id)
    visible = access.visible_case_ids_sql(viewer)
    if visible is None:
        raise access.NotFound
    visible_sql, visible_params = visible
    firm_id = access.viewer_firm_id(viewer)
    sighted = None
    if access.sees_whole_firm(viewer):
        sql, params = _WALK_SQL, [pk, firm_id, firm_id, firm_id, kind, kind, *visible_params, limit + 1, *visible_params]
    else:  # from the viewer's cases (walled_reads)
        sql = walled_reads.WALK
        params = [pk, firm_id, *visible_params, *visible_params, firm_id, pk, firm_id, pk, firm_id, kind, kind, limit + 1]
        if sight.enabled():  # or from their sight while it is current
            sighted = (walled_reads.SIGHT_WALK, [pk, firm_id, firm_id, pk, *visible_params, firm_id, kind, kind, limit + 1])
    rows = _rows(viewer, (sql, params), sighted, columns=7, visible_sql=visible_sql)
    if not rows:
        raise access.NotFound
    me = NodeRef(id=str(rows[0][0]), kind=rows[0][1], label=rows[0][2])
    results = []
    for *_, other_id, other_kind, other_label, edge in rows[:limit]:
        if other_id is None:  # the node is reachable, but has no neighbour of this kind
            continue
        other = NodeRef(id=str(other_id), kind=other_kind, label=other_label)
        # Every edge joins its own case's node to something: one of the two ends is the case.
        results.append(Neighbor(node=other, edge=edge, case=me if me.kind == Node.Kind.CASE else other))
    return NeighborPage(node=me, results=results, has_more=len(rows) > limit)


def _rows(
    viewer: Any, walled: tuple[str, list[Any]], sighted: tuple[str, list[Any]] | None, *, columns: int, visible_sql: str
) -> list[tuple]:
    """The rows of a read: from the viewer's sight when there is a `sighted` statement (graph_memory.wall.sight,
    which falls back to `walled` while the sight is not current), else of `walled` itself."""
    if sighted is not None:
        return sight.answer(viewer, sighted=sighted, walled=walled, columns=columns, visible_sql=visible_sql)[0]
    with connection.cursor() as cursor:
        cursor.execute(walled[0].format(visible=visible_sql), walled[1])
        return cursor.fetchall()


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# Candidates come from the firm's entries of the words index (migration 0016), the LIKE keeps those
# that hold the text asked; they are sorted first and checked against the wall lazily (see the walk).
_LOOKUP_SQL = f"""
SELECT n.id, n.kind, n.label FROM (
    SELECT id, kind, label, name_key LIKE %s AS prefix FROM {N}
    WHERE firm_id = %s AND {LOOKUP_WORDS_EXPRESSION.format(alias="")} @@ %s::tsquery AND name_key LIKE %s
      AND (%s::text IS NULL OR kind = %s)
    ORDER BY prefix DESC, label, id OFFSET 0
) n
CROSS JOIN LATERAL (
    SELECT 1 FROM {E} e {_visible("e.case_id")} WHERE (e.source_id = n.id OR e.target_id = n.id) AND e.firm_id = %s LIMIT 1
) seen
ORDER BY n.prefix DESC, n.label, n.id
LIMIT %s
"""


def nodes_lookup(*, viewer: Any, q: str, kind: str | None = None, limit: int | None = None) -> NodePage:
    """Nodes whose name contains `q` (case-, accent- and punctuation-insensitive), visible ones only. One query.

    Names that start with `q` come first, then by label and id. A `q` with
    no letter or digit finds nothing.
    """
    kind, limit = _kind(kind), conf.page_size(limit)
    key = lookup_key(q)
    visible = access.visible_case_ids_sql(viewer)
    if not key or visible is None:
        return NodePage(results=[], has_more=False)
    visible_sql, visible_params = visible
    pattern, firm_id = _like_escape(key), access.viewer_firm_id(viewer)
    sighted = None
    if access.sees_whole_firm(viewer):
        sql = _LOOKUP_SQL
        params = [f"{pattern}%", firm_id, lookup_query(firm_id, key), f"%{pattern}%", kind, kind, *visible_params, firm_id,
                  limit + 1]
    else:  # from the viewer's cases (walled_reads)
        sql = walled_reads.LOOKUP
        params = [*visible_params, firm_id, f"{pattern}%", firm_id, f"%{pattern}%", kind, kind, limit + 1]
        if sight.enabled():  # or from their sight while it is current
            sighted = (walled_reads.SIGHT_LOOKUP, [f"{pattern}%", lookup_query(names.HOLDER_MARK, key), firm_id,
                                                   f"%{pattern}%", kind, kind, *visible_params, limit + 1])  # fmt: skip
    rows = _rows(viewer, (sql, params), sighted, columns=3, visible_sql=visible_sql)
    results = [NodeRef(id=str(pk), kind=node_kind, label=label) for pk, node_kind, label in rows[:limit]]
    return NodePage(results=results, has_more=len(rows) > limit)


_ROLE = {Edge.Kind.FOR_CLIENT.value: "client", Edge.Kind.AGAINST.value: "counterparty"}
# Candidates scored in Python (names.conflict_match) at most: past it, `has_more`.
CONFLICT_CANDIDATES = 200
# Candidates come from the GIN index of the parties' word variants (names.party_variants): per
# reading of the query, one probe that asks for a string of every word at once (an `&&` per word,
# which the index intersects itself), so it hands over only the parties that hold every word, never
# each party that holds one of them (a word's initial, "^b", is held by thousands of parties).
# Candidates must be parties of a case the viewer may open before they count towards the cap; the
# exact key and the words asked come first, so a flood of near spellings cannot crowd them out.
# `{found}`: the probes (`_conflict_probes`).
_CONFLICT_SQL = f"""
WITH found AS (
    {{found}}
    UNION
    SELECT p.id FROM {N} p WHERE p.firm_id = %s AND p.party_key = %s
),
candidate AS (
    -- LATERAL (OFFSET 0 keeps it one): each found party is read by its id, never by a scan of the
    -- nodes that a merge join would make when the planner expects many found parties.
    SELECT p.id, p.kind, p.label, p.party_key, p.name_key, p.party_key = %s AS exact,
           ' ' || p.party_key || ' ' LIKE ALL (%s::text[]) AS words
    FROM found f CROSS JOIN LATERAL (
        SELECT * FROM {N} p WHERE p.id = f.id AND p.firm_id = %s AND p.kind IN {walled_reads.PARTY_KINDS} OFFSET 0
    ) p
),
seen AS (
    -- One probe of the edges per candidate (LATERAL, LIMIT 1): as a semi-join, an estimate of thousands
    -- of candidates (the planner cannot weigh the probes' strings) once hashed every edge of the firm.
    SELECT c.* FROM candidate c CROSS JOIN LATERAL (
        SELECT 1 FROM {E} e {_visible("e.case_id")}
        WHERE e.target_id = c.id AND e.kind IN {walled_reads.PARTY_EDGES} AND e.firm_id = %s LIMIT 1
    ) one_case
    ORDER BY c.exact DESC, c.words DESC, c.label, c.id
    LIMIT %s
)
SELECT s.id, s.kind, s.label, s.party_key, s.name_key, m.id, m.kind, m.label, m.edge
FROM seen s CROSS JOIN LATERAL (
    SELECT c.id, c.kind, c.label, e.kind AS edge FROM {E} e {_visible("e.case_id")}
    CROSS JOIN LATERAL (SELECT c.id, c.kind, c.label FROM {N} c WHERE c.id = e.source_id OFFSET 0) c
    WHERE e.target_id = s.id AND e.kind IN {walled_reads.PARTY_EDGES} AND e.firm_id = %s
    ORDER BY c.label, c.id, e.kind LIMIT %s
) m
"""


def _conflict_probes(groups: list[list[list[str]]]) -> tuple[str, list[Any]]:
    """The statement of the parties that hold a string of every word of some reading (`index_groups`),
    one GIN probe per reading, and its params. Each reading's strings come into its probe from outside
    (LATERAL, OFFSET 0), so the planner cannot weigh them: given them as constants, it may judge a
    word's initial ("^n") so common that reading every node is cheaper, as it did on a small firm. The
    VALUES row sits behind an OFFSET 0 of its own: a one-row VALUES is otherwise folded into the probe as
    constants all the same (bench_scale: a firm admin's check read 70,000 nodes, 572 ms, in a database
    holding that firm alone, where the node table was small enough for a scan to look cheaper)."""
    if not groups:
        return "SELECT NULL::uuid AS id WHERE false", []
    probes = []
    for reading in groups:
        words = ", ".join(["%s::text[]"] * len(reading))
        tests = " AND ".join(f"p.{PARTY_VARIANTS_COLUMN} && w.w{i}" for i in range(len(reading)))
        columns = ", ".join(f"w{i}" for i in range(len(reading)))
        probes.append(
            f"SELECT p.id FROM (SELECT * FROM (VALUES ({words})) v({columns}) OFFSET 0) w "
            f"CROSS JOIN LATERAL (SELECT p.id FROM {N} p WHERE {tests} OFFSET 0) p"
        )
    return " UNION ".join(probes), [strings for reading in groups for strings in reading]


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


def conflicts_check(*, viewer: Any, name: str, limit: int | None = None) -> ConflictReport:
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
    visible = access.visible_case_ids_sql(viewer)
    firm_id = access.viewer_firm_id(viewer)
    if not query.key or visible is None or firm_id is None:
        return ConflictReport(name=name, matches=[], has_more=False)
    visible_sql, visible_params = visible
    words = sorted({f"% {_like_escape(w)} %" for w in query.words})
    found, found_params = _conflict_probes(query.index_groups(firm_id))
    probed = _CONFLICT_SQL.replace("{found}", found)
    probed_params = [*found_params, firm_id, query.key, query.key, words, firm_id,
                     *visible_params, firm_id, CONFLICT_CANDIDATES + 1, *visible_params, firm_id, limit + 1]  # fmt: skip
    if access.sees_whole_firm(viewer):
        sql, params = probed, probed_params
    else:
        # A lawyer who may open few cases: from the parties of their cases (walled_reads), so hidden ones cost
        # nothing. Past VISIBLE_FIRST_MAX, from the firm's matches as for a firm admin, each probed against the
        # wall (docs/SECURITY.md, "Timing side channels"). Exactly one runs: each is gated on `gm_few` (a
        # one-time filter), which counts their cases no further than the cap.
        wanted = _wanted(query, firm_id)
        walled = walled_reads.CONFLICTS
        walled_params = [*wanted, *visible_params, firm_id, firm_id, wanted[0], query.key, query.key, words,
                         CONFLICT_CANDIDATES + 1, limit + 1]  # fmt: skip
        cap = int(conf.get("VISIBLE_FIRST_MAX"))
        sql = (
            "WITH gm_few AS MATERIALIZED (SELECT count(*) <= %s AS few FROM (SELECT 1 FROM ({visible}) v LIMIT %s) x) "
            f"SELECT * FROM ({walled}) w WHERE (SELECT few FROM gm_few) "
            f"UNION ALL SELECT * FROM ({probed}) p WHERE NOT (SELECT few FROM gm_few)"
        )
        params = [cap, *visible_params, cap + 1, *walled_params, *probed_params]
    rows = _rows(viewer, (sql, params), None, columns=9, visible_sql=visible_sql)
    parties: dict[Any, tuple[NodeRef, names.NameMatch | None, list[tuple[NodeRef, str]]]] = {}
    for p_id, p_kind, p_label, p_key, p_lookup, c_id, c_kind, c_label, edge in rows:
        if p_id not in parties:
            parties[p_id] = (NodeRef(str(p_id), p_kind, p_label), names.conflict_match(query, p_key, p_lookup), [])
        parties[p_id][2].append((NodeRef(str(c_id), c_kind, c_label), _ROLE[edge]))
    rank = {kind: i for i, kind in enumerate(names.KINDS)}
    found = sorted(
        (entry for entry in parties.values() if entry[1] is not None),
        key=lambda e: (rank[e[1].kind], -e[1].similarity, e[0].label, e[0].id),
    )
    matches = [
        ConflictMatch(case=case, party=party, role=role, match=how.kind, similarity=how.similarity)
        for party, how, cases in found
        for case, role in cases
    ]
    more = len(matches) > limit or len(parties) > CONFLICT_CANDIDATES
    return ConflictReport(name=name, matches=matches[:limit], has_more=more)
