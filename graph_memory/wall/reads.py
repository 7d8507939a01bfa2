"""Every viewer read of the connection map, declared once: a firm admin's, a walled and a sighted statement.

Each `Read` (scope.Read) holds a read's statements side by side, and
`scope.rows` runs the one that fits the viewer:

- **whole_firm**, a firm admin's: nothing of the firm is hidden from them, so
  it starts from what matches, with the wall probed per candidate row
  (`scope.may_open`).
- **walled**, anyone else's: it starts from the cases the viewer may open
  (`{visible}`, the access statement, which itself starts from their grants)
  and reaches nodes and edges from there, never the other way round: so its
  cost follows what the viewer may see, and a case, node or edge they may not
  see costs nothing, however many of them match (issue 15: hidden rows must
  not show through the time of an answer).
- **sighted**, the same reads from the rows of graph_memory_sight that the
  viewer's grants hold (`{holders}`: their own and their groups'), which
  triggers keep current (graph_memory.wall.sight): their cost follows what
  the viewer finds, not how many cases they may open (issues 14 and 28).
  `scope.rows` runs them only while the sight is built.

Every join to a table whose hidden rows could be scanned is a LATERAL
subquery with OFFSET 0: PostgreSQL must run it as a nested loop driven by the
visible side, whatever its statistics say about the size of the firm. Every
scan of the edge and sight tables names the viewer's firm (`%(firm)s`, a
constant by the time PostgreSQL plans it), so it reads the firm's partition
only (migration 0020; tests/contracts/test_partitions.py). Values are named
(`%(node)s`), statements spliced in braces (`{visible}`): scope.sql puts
the parameters in order.
"""

from __future__ import annotations

from graph_memory.map.names import HOLDER_MARK
from graph_memory.models import Edge, Node, Sight
from graph_memory.models.graph import LOOKUP_WORDS_EXPRESSION, PARTY_VARIANTS_COLUMN
from graph_memory.wall.scope import VISIBLE_ONCE, Read, may_open

N, E = Node._meta.db_table, Edge._meta.db_table
CASE = Node.Kind.CASE.value
PARTY_KINDS = f"('{Node.Kind.CLIENT.value}', '{Node.Kind.COUNTERPARTY.value}')"
PARTY_EDGES = f"('{Edge.Kind.FOR_CLIENT.value}', '{Edge.Kind.AGAINST.value}')"

# The edges between the node and the viewer's cases: per visible case, one probe for the edges leaving the
# node and one for those reaching it (no edge joins a node to itself), whether or not the node exists. Two
# exact probes rather than one `source OR target`, which the planner may answer by reading every edge of
# the case instead, or not, as the firm's statistics (hidden rows included) lean: in a partition of its own
# they lean more.
_EDGES_OF_NODE = f"""
    SELECT e.kind, e.case_id, e.target_id AS other FROM {E} e WHERE e.case_id = vis.id AND e.source_id = %(node)s AND e.firm_id = %(firm)s
    UNION ALL
    SELECT e.kind, e.case_id, e.source_id FROM {E} e WHERE e.case_id = vis.id AND e.target_id = %(node)s AND e.firm_id = %(firm)s
    OFFSET 0
"""

# A walk's answer from `me` (the node) and `mine` (its edges the viewer reaches, with the node at
# their other end): one row per neighbour on the page, sorted; one row with no neighbour when none is
# of the kind asked; none at all when the viewer reaches no edge. `fetch`: the page's size + 1.
_WALK_PAGE = f"""
SELECT me.id, me.kind, me.label, page.id, page.kind, page.label, page.edge
FROM me LEFT JOIN LATERAL (
    SELECT o.id, o.kind, o.label, m.kind AS edge
    FROM mine m CROSS JOIN LATERAL (SELECT id, kind, label FROM {N} WHERE id = m.other AND firm_id = %(firm)s OFFSET 0) o
    WHERE %(kind)s::text IS NULL OR o.kind = %(kind)s
    ORDER BY o.kind, o.label, o.id, m.kind LIMIT %(fetch)s
) page ON true
WHERE EXISTS (SELECT 1 FROM mine)
"""

# A walk. From a case node the viewer may open, its own edges (every edge touching a case node
# belongs to that case): one probe of the wall. From any other id (another kind of node, a case
# node they may not open, or no node at all) the edges between it and each visible case: the
# same work whether the id is hidden or unknown. Then the page, sorted.
_WALK = f"""
WITH me AS (SELECT id, kind, label, ref_id FROM {N} WHERE id = %(node)s AND firm_id = %(firm)s),
open_case AS (
    SELECT me.id, me.ref_id FROM me
    WHERE me.kind = '{CASE}' AND EXISTS (SELECT 1 FROM ({{visible}}) v(id) WHERE v.id = me.ref_id)
),
{VISIBLE_ONCE},
mine AS (
    SELECT e.kind, e.case_id, CASE WHEN e.source_id = oc.id THEN e.target_id ELSE e.source_id END AS other
    FROM open_case oc CROSS JOIN LATERAL (SELECT * FROM {E} e WHERE e.case_id = oc.ref_id AND e.firm_id = %(firm)s OFFSET 0) e
    UNION ALL
    SELECT e.kind, e.case_id, e.other FROM vis CROSS JOIN LATERAL ({_EDGES_OF_NODE}) e
    WHERE NOT EXISTS (SELECT 1 FROM open_case)
)
{_WALK_PAGE}"""

# A node if the viewer reaches it, by the walk's rule (stopping at the first visible edge).
# The reachability test is uncorrelated, so PostgreSQL runs it before it reads the node:
# a hidden node and an unknown id cost the same.
_NODE = f"""
WITH me AS (SELECT * FROM {N} WHERE id = %(node)s AND firm_id = %(firm)s),
open_case AS (
    SELECT me.id FROM me
    WHERE me.kind = '{CASE}' AND EXISTS (SELECT 1 FROM ({{visible}}) v(id) WHERE v.id = me.ref_id)
),
{VISIBLE_ONCE},
reached AS (
    SELECT 1 FROM open_case
    UNION ALL
    (SELECT 1 FROM vis CROSS JOIN LATERAL ({_EDGES_OF_NODE}) e WHERE NOT EXISTS (SELECT 1 FROM open_case) LIMIT 1)
)
SELECT me.* FROM me WHERE EXISTS (SELECT 1 FROM reached)
"""

# The ids of the viewer's cases with an edge to the node (a brief's cases).
_CASES_OF_NODE = f"""
WITH {VISIBLE_ONCE}
SELECT DISTINCT e.case_id FROM vis CROSS JOIN LATERAL ({_EDGES_OF_NODE}) e
"""

# Name lookup: the nodes at either end of the visible cases' edges, then the name test.
# `prefix`, `pattern`: LIKE patterns of the key asked, as a prefix and anywhere.
_LOOKUP = f"""
WITH {VISIBLE_ONCE},
ends AS MATERIALIZED (
    SELECT DISTINCT x.id FROM vis
    CROSS JOIN LATERAL (SELECT e.source_id, e.target_id FROM {E} e WHERE e.case_id = vis.id AND e.firm_id = %(firm)s OFFSET 0) e
    CROSS JOIN LATERAL (VALUES (e.source_id), (e.target_id)) x(id)
)
SELECT n.id, n.kind, n.label FROM ends CROSS JOIN LATERAL (
    SELECT n.id, n.kind, n.label, n.name_key LIKE %(prefix)s AS prefix FROM {N} n
    WHERE n.id = ends.id AND n.firm_id = %(firm)s AND n.name_key LIKE %(pattern)s AND (%(kind)s::text IS NULL OR n.kind = %(kind)s)
    OFFSET 0
) n
ORDER BY n.prefix DESC, n.label, n.id
LIMIT %(fetch)s
"""

# The conflict check's parts both statements share. The query's index strings, with the number of
# words each reading needs (`{type}`: text, or int for the sight's numbers):
_WANTED = """
wanted AS (SELECT * FROM unnest(%(variants)s::{type}[], %(readings)s::int[], %(word_ids)s::int[]) AS w(variant, reading, word)),
needed AS (SELECT reading, count(DISTINCT word) AS words FROM wanted GROUP BY reading)
"""
# One party's row, by id (`{id}`).
_PARTY_ROW = f"""
        SELECT p.id, p.kind, p.label, p.party_key, p.name_key, p.{PARTY_VARIANTS_COLUMN} AS variants FROM {N} p
        WHERE p.id = {{id}} AND p.firm_id = %(firm)s AND p.kind IN {PARTY_KINDS} OFFSET 0
"""
# The parties found (`{found}`, rows `p`), the exact key and the words asked first, capped.
# `key`: the name's key; `words`: LIKE patterns of its words; `candidates`: the cap + 1.
_SEEN = """
seen AS MATERIALIZED (
    SELECT p.id, p.kind, p.label, p.party_key, p.name_key, p.party_key = %(key)s AS exact,
           ' ' || p.party_key || ' ' LIKE ALL (%(words)s::text[]) AS words
    FROM {found}
    ORDER BY exact DESC, words DESC, p.label, p.id
    LIMIT %(candidates)s
)
"""
# The parties (CTE `party`) that hold a string of every word of a reading, or the exact key; the
# best first, capped.
_MATCHED = f"""
held AS (
    SELECT x.id, w.reading, count(DISTINCT w.word) AS words
    FROM (SELECT p.id, unnest(p.variants) AS variant FROM party p) x
    JOIN wanted w ON w.variant = x.variant
    WHERE x.variant = ANY(%(variants)s::text[])
    GROUP BY x.id, w.reading
),
found AS (
    SELECT h.id FROM held h JOIN needed n ON n.reading = h.reading AND n.words = h.words
    UNION
    SELECT p.id FROM party p WHERE p.party_key = %(key)s
),
{_SEEN.format(found="found f JOIN party p ON p.id = f.id").strip()}
"""
# The page: each party found with its cases through `link`, at most `fetch` each.
_CONFLICT_PAGE = f"""
SELECT s.id, s.kind, s.label, s.party_key, s.name_key, m.id, m.kind, m.label, m.edge FROM (
    SELECT s.id, c.id AS case_id, c.kind, c.label, l.edge,
           row_number() OVER (PARTITION BY s.id ORDER BY c.label, c.id, l.edge) AS n
    FROM seen s JOIN link l ON l.party = s.id
    CROSS JOIN LATERAL (SELECT id, kind, label FROM {N} WHERE id = l.case_node AND firm_id = %(firm)s OFFSET 0) c
) m (party, id, kind, label, edge, n) JOIN seen s ON s.id = m.party
WHERE m.n <= %(fetch)s
ORDER BY m.party, m.n
"""

# Conflict check: the clients and counterparties of the visible cases, each tested against the
# query's index strings (`wanted`, as in selectors): each party's own variants are unnested and
# looked up in the query's strings as a constant array (which PostgreSQL hashes once), and only
# the hits are joined to their readings. The GIN index over the whole firm is not used: it would
# hand over hidden parties.
_CONFLICTS = f"""
WITH {_WANTED.format(type="text").strip()},
{VISIBLE_ONCE},
link AS MATERIALIZED (
    SELECT e.target_id AS party, e.source_id AS case_node, e.kind AS edge FROM vis CROSS JOIN LATERAL (
        SELECT e.target_id, e.source_id, e.kind FROM {E} e
        WHERE e.case_id = vis.id AND e.kind IN {PARTY_EDGES} AND e.firm_id = %(firm)s OFFSET 0
    ) e
),
party AS MATERIALIZED (
    SELECT p.* FROM (SELECT DISTINCT party FROM link) l CROSS JOIN LATERAL ({_PARTY_ROW.format(id="l.party")}) p
),
{_MATCHED.strip()}
{_CONFLICT_PAGE.strip()}
"""


# --- the same reads from the sight (graph_memory.wall.sight) ------------------------------------------
# Each reads the rows of the viewer's holders (`{holders}`: themselves and their groups, graph_memory.wall.sight)
# in their firm, through an index that starts with the holder, so its cost follows what they may see;
# `sight.answer` runs it only while the sight is built, and every row it returns is checked once more
# against the wall itself (`may_open`). A (node, case) pair two holders share is read once. Same columns as above.
S = Sight._meta.db_table
# The viewer's rows of the sight (alias `s`).
_MINE = "s.holder = ANY(ARRAY({holders})) AND s.firm_id = %(firm)s"
# The cases of the node in the viewer's rows, each once (alias `s`: node_id, case_id).
_NODE_CASES = (
    f"(SELECT DISTINCT s.node_id, c.case_id FROM {S} s CROSS JOIN LATERAL unnest(s.cases) c(case_id) "
    f"WHERE {_MINE} AND s.node_id = %(node)s OFFSET 0) s"
)

# A node if the viewer reaches it: a case node they may open (one probe of the wall, as in NODE:
# the case need not have edges yet), or any node in their rows.
_SIGHT_NODE = f"""
WITH me AS (SELECT * FROM {N} WHERE id = %(node)s AND firm_id = %(firm)s)
SELECT me.* FROM me
WHERE (me.kind = '{CASE}' AND EXISTS (SELECT 1 FROM ({{visible}}) v(id) WHERE v.id = me.ref_id))
   OR EXISTS (SELECT 1 FROM {_NODE_CASES} {may_open("s.case_id")})
"""

# The wall is probed once per case of the node, before its edges are read: a case node's walk
# reads one row and its several edges.
_SIGHT_WALK = f"""
WITH me AS (SELECT id, kind, label FROM {N} WHERE id = %(node)s AND firm_id = %(firm)s),
mine AS (
    SELECT e.kind, e.case_id, CASE WHEN e.source_id = s.node_id THEN e.target_id ELSE e.source_id END AS other
    FROM {_NODE_CASES} {may_open("s.case_id")} CROSS JOIN LATERAL (
        SELECT * FROM {E} e
        WHERE e.case_id = s.case_id AND (e.source_id = s.node_id OR e.target_id = s.node_id) AND e.firm_id = %(firm)s
        OFFSET 0
    ) e
)
{_WALK_PAGE}"""

_SIGHT_CASES_OF_NODE = f"SELECT s.case_id FROM {_NODE_CASES} {may_open('s.case_id')}"

# Names are found holder by holder, through the holders' words index (migration 0017: graph_memory_lookup_words
# keyed by holder; `names.lookup_query` with the holder in its place) and the LIKE keeps the exact ones; the
# wall is checked lazily, in order, until the page is full. (`holder + 0`: the primary key would hand over
# every row of the holder, which PostgreSQL may think cheaper when the holders are few; the words index
# hands over the matches, and its keys hold the holder already. The same in the conflict check.)
# `holder_words`: the tsquery with names.HOLDER_MARK in the holder's place.
_SIGHT_LOOKUP = f"""
SELECT n.node_id, n.kind, n.label FROM (
    SELECT * FROM (
        SELECT DISTINCT ON (s.node_id) s.node_id, s.kind, s.label, s.cases[1] AS case_id, s.name_key LIKE %(prefix)s AS prefix
        FROM ({{holders}}) h(h) CROSS JOIN LATERAL (
            SELECT s.* FROM {S} s
            WHERE graph_memory_lookup_words(s.holder, s.name_key) @@ replace(%(holder_words)s, '{HOLDER_MARK}', h.h::text)::tsquery
              AND s.holder + 0 = h.h AND s.firm_id = %(firm)s AND s.name_key LIKE %(pattern)s
              AND (%(kind)s::text IS NULL OR s.kind = %(kind)s) OFFSET 0
        ) s
        ORDER BY s.node_id, s.cases[1]
    ) d ORDER BY d.prefix DESC, d.label, d.node_id OFFSET 0
) n {may_open("n.case_id")}
ORDER BY n.prefix DESC, n.label, n.node_id
LIMIT %(fetch)s
"""


# --- a firm admin's: from what matches --------------------------------------------------------------------

# A node if an edge of a case the viewer may open touches it.
_FIRM_NODE = f"""
SELECT n.* FROM {N} n WHERE n.id = %(node)s AND n.firm_id = %(firm)s AND EXISTS (
    SELECT 1 FROM {E} e
    WHERE e.firm_id = %(firm)s AND (e.source_id = n.id OR e.target_id = n.id) AND e.case_id IN ({{visible}})
)
"""

# Neighbours are sorted first and checked against the wall lazily, in that
# order, until the page is full: about one access probe per row on the page.
_FIRM_WALK = f"""
WITH me AS (SELECT id, kind, label FROM {N} WHERE id = %(node)s AND firm_id = %(firm)s),
mine AS (
    SELECT e.kind, e.case_id, e.target_id AS other FROM me JOIN {E} e ON e.source_id = me.id AND e.firm_id = %(firm)s
    UNION ALL
    SELECT e.kind, e.case_id, e.source_id FROM me JOIN {E} e ON e.target_id = me.id AND e.firm_id = %(firm)s
)
SELECT me.id, me.kind, me.label, page.id, page.kind, page.label, page.edge
FROM me
LEFT JOIN LATERAL (
    SELECT sorted.* FROM (
        SELECT o.id, o.kind, o.label, m.kind AS edge, m.case_id FROM mine m JOIN {N} o ON o.id = m.other AND o.firm_id = %(firm)s
        WHERE %(kind)s::text IS NULL OR o.kind = %(kind)s
        ORDER BY o.kind, o.label, o.id, m.kind OFFSET 0
    ) sorted {may_open("sorted.case_id")}
    ORDER BY sorted.kind, sorted.label, sorted.id, sorted.edge LIMIT %(fetch)s
) page ON true
WHERE EXISTS (SELECT 1 FROM mine m {may_open("m.case_id")})
"""

# The ids of the cases with an edge to the node (a brief's cases: nothing is hidden from a firm admin).
_FIRM_CASES_OF_NODE = f"""
SELECT DISTINCT e.case_id FROM {E} e WHERE (e.source_id = %(node)s OR e.target_id = %(node)s) AND e.firm_id = %(firm)s
"""

# Candidates come from the firm's entries of the words index (migration 0016, `firm_words`: names.lookup_query),
# the LIKE keeps those that hold the text asked; they are sorted first and checked against the wall lazily.
# The words find them (every key of that index starts with the firm); the firm's own condition picks the
# firm's partition (migration 0030). Before the nodes were partitioned, that condition sat past a fence:
# PostgreSQL ANDed in a bitmap of every node of the firm from the firm_id index when other firms made the
# firm look selective (70,000 entries for a 50,000-case firm; a firm admin's lookup 8.1 ms beside other firms
# against 5.9 alone, issue 28). Within its partition the condition is cheap either way: a big firm is most of
# the partition's rows (no bitmap of them is worth building), a small firm's bitmap is small.
_FIRM_LOOKUP = f"""
SELECT n.id, n.kind, n.label FROM (
    SELECT id, kind, label, name_key LIKE %(prefix)s AS prefix FROM {N}
    WHERE firm_id = %(firm)s
      AND {LOOKUP_WORDS_EXPRESSION.format(alias="")} @@ %(firm_words)s::tsquery
      AND name_key LIKE %(pattern)s AND (%(kind)s::text IS NULL OR kind = %(kind)s)
    ORDER BY prefix DESC, label, id OFFSET 0
) n
CROSS JOIN LATERAL (
    SELECT 1 FROM {E} e {may_open("e.case_id")}
    WHERE (e.source_id = n.id OR e.target_id = n.id) AND e.firm_id = %(firm)s LIMIT 1
) seen
ORDER BY n.prefix DESC, n.label, n.id
LIMIT %(fetch)s
"""

# Candidates come from the GIN index of the parties' word variants (names.party_variants): per
# reading of the query, one probe that asks for a string of every word at once (`{found}`:
# selectors._conflict_probes). Candidates must be parties of a case the viewer may open before they
# count towards the cap; the exact key and the words asked come first, so a flood of near spellings
# cannot crowd them out.
_FIRM_CONFLICTS = f"""
WITH found AS (
    {{found}}
    UNION
    SELECT p.id FROM {N} p WHERE p.firm_id = %(firm)s AND p.party_key = %(key)s
),
candidate AS (
    -- LATERAL (OFFSET 0 keeps it one): each found party is read by its id, never by a scan of the
    -- nodes that a merge join would make when the planner expects many found parties.
    SELECT p.id, p.kind, p.label, p.party_key, p.name_key, p.party_key = %(key)s AS exact,
           ' ' || p.party_key || ' ' LIKE ALL (%(words)s::text[]) AS words
    FROM found f CROSS JOIN LATERAL (
        SELECT * FROM {N} p WHERE p.id = f.id AND p.firm_id = %(firm)s AND p.kind IN {PARTY_KINDS} OFFSET 0
    ) p
),
seen AS (
    -- One probe of the edges per candidate (LATERAL, LIMIT 1): as a semi-join, an estimate of thousands
    -- of candidates (the planner cannot weigh the probes' strings) once hashed every edge of the firm.
    SELECT c.* FROM candidate c CROSS JOIN LATERAL (
        SELECT 1 FROM {E} e {may_open("e.case_id")}
        WHERE e.target_id = c.id AND e.kind IN {PARTY_EDGES} AND e.firm_id = %(firm)s LIMIT 1
    ) one_case
    ORDER BY c.exact DESC, c.words DESC, c.label, c.id
    LIMIT %(candidates)s
)
SELECT s.id, s.kind, s.label, s.party_key, s.name_key, m.id, m.kind, m.label, m.edge
FROM seen s CROSS JOIN LATERAL (
    SELECT c.id, c.kind, c.label, e.kind AS edge FROM {E} e {may_open("e.case_id")}
    CROSS JOIN LATERAL (SELECT c.id, c.kind, c.label FROM {N} c WHERE c.id = e.source_id AND c.firm_id = %(firm)s OFFSET 0) c
    WHERE e.target_id = s.id AND e.kind IN {PARTY_EDGES} AND e.firm_id = %(firm)s
    ORDER BY c.label, c.id, e.kind LIMIT %(fetch)s
) m
"""

# A lawyer's conflict check: from the parties of their cases while they may open at most `few` (the
# setting VISIBLE_FIRST_MAX), so hidden ones cost nothing; past it, from the firm's matches as for a
# firm admin, each probed against the wall (docs/SECURITY.md, "Timing side channels"). Exactly one
# runs: each is gated on `gm_few` (a one-time filter), which counts their cases no further than `few`,
# after asking one source of their grants (`{grants_past}`; `than`: `few`), which settles it for a
# partner without listing all their cases.
_GATED_CONFLICTS = f"""
WITH gm_few AS MATERIALIZED (
    SELECT CASE WHEN {{grants_past}} THEN false
           ELSE (SELECT count(*) <= %(few)s FROM (SELECT 1 FROM ({{visible}}) v LIMIT %(few)s + 1) x) END AS few
)
SELECT * FROM ({_CONFLICTS}) w WHERE (SELECT few FROM gm_few)
UNION ALL SELECT * FROM ({_FIRM_CONFLICTS}) p WHERE NOT (SELECT few FROM gm_few)
"""


# --- the reads -------------------------------------------------------------------------------------------

_NODE_COLUMNS = ", ".join(field.column for field in Node._meta.concrete_fields)  # the node table has one more

# A node, if the viewer reaches it (its model's columns). Names: node.
NODE = Read(
    name="node",
    columns=len(Node._meta.concrete_fields),
    whole_firm=f"SELECT {_NODE_COLUMNS} FROM ({_FIRM_NODE}) n",
    walled=f"SELECT {_NODE_COLUMNS} FROM ({_NODE}) n",
    sighted=f"SELECT {_NODE_COLUMNS} FROM ({_SIGHT_NODE}) n",
)
# One step from a node: (node id, kind, label, neighbour id, kind, label, edge). Names: node, kind, fetch.
WALK = Read(name="walk", columns=7, whole_firm=_FIRM_WALK, walled=_WALK, sighted=_SIGHT_WALK)
# Nodes by name: (id, kind, label). Names: prefix, pattern, kind, fetch, firm_words, holder_words.
LOOKUP = Read(name="lookup", columns=3, whole_firm=_FIRM_LOOKUP, walled=_LOOKUP, sighted=_SIGHT_LOOKUP)
# The cases of a node a brief draws on: (case id). Names: node.
CASES_OF_NODE = Read(
    name="cases_of_node", columns=1, whole_firm=_FIRM_CASES_OF_NODE, walled=_CASES_OF_NODE, sighted=_SIGHT_CASES_OF_NODE
)
# Parties matching a name, with their cases: (party id, kind, label, party key, name key, case id, kind, label,
# edge). Names: found, key, words, candidates, fetch, and for the walled statement variants, readings, word_ids, few.
CONFLICTS = Read(
    name="conflicts", columns=9, whole_firm=_FIRM_CONFLICTS, walled=_GATED_CONFLICTS,
    unsighted="the sight keeps no party strings (issue 28: they were most of its size); a lawyer's check starts "
    "from the parties of their cases, or past VISIBLE_FIRST_MAX from the firm's matches probed against the wall",
)  # fmt: skip

READS = (NODE, WALK, LOOKUP, CASES_OF_NODE, CONFLICTS)
