"""One firm's statements never read another firm's rows of the map (issue 28), shown on their plans.

Two firms share the database: ours, small, and theirs, ten times larger and
holding the same names (the same clients, counterparties and case titles), so
a statement that were not bounded by the firm would have plenty of their rows
to read. Every statement a read or a rebuild runs is captured as it runs and
planned again under `EXPLAIN (FORMAT JSON)`, with the settings it ran under
(a firm-wide rebuild plans for bulk). Assertions read the plan, never a time.

The rule for a scan of the node, edge or sight table: an index scan (never a
sequential one) whose index condition
- names firm_id (the sight's rows are also keyed by holder, and always by firm), or
- probes an index whose every key starts with the firm: the conflict check's
  variant strings (migration 0005) and the lookup's words (migration 0016),
  both proven firm-prefixed below, in the stored rows and in the queries, or
- looks rows up by the key of a row already reached (a node's id, an edge's
  case or end, a sight row's node): those belong to one firm, and the scan
  that reached them is held to the same rule.
Small tables would plan as sequential scans whatever the statement says, so
sequential scans are disabled while planning: one that remains is one no
index of the firm could replace.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from accounts.models import Firm, User
from graph_memory import services
from graph_memory.map import graph, names
from graph_memory.models import Edge, Node, Sight
from graph_memory.models.graph import LOOKUP_WORDS_EXPRESSION, PARTY_VARIANTS_COLUMN
from graph_memory.viewer import selectors
from practice.models import Case, CaseCounterparty, CaseTeamMember, CaseUserObjectPermission, Client, Counterparty
from practice.permissions import view_case_permission
from tests import plans
from tests.factories import FirmFactory, UserFactory

pytestmark = pytest.mark.django_db

N, E, S = Node._meta.db_table, Edge._meta.db_table, Sight._meta.db_table
FIRM_KEYED_INDEXES = {"gm_node_party_variants", "gm_node_lookup_words"}
# The sight's: each key combines the holder, and a holder's rows are of one firm.
HOLDER_KEYED_INDEXES = {"gm_sight_lookup_words"}
_BY_KEY = re.compile(r"^\(*(?:\w+\.)?(?:id|case_id|source_id|target_id|node_id) = ")
_FIRM_CONSTANT = re.compile(r"\bfirm_id = '?(\d+)")

COMPANIES = ["Northwind Holdings, Inc.", "Brightline Logistics LLC", "Meridian Foods Corp.", "Castell Components GmbH",
             "Parkside Realty Partners", "Harbor Capital Ltd", "Granite Energy plc", "Juniper Media S.A."]  # fmt: skip
PEOPLE = ["Jordan Lee", "Maria Okafor", "Daniel Shaw", "Aisha Hale"]
OURS, THEIRS = 40, 400  # cases


def _firm(slug: str, cases: int, lawyers: int, copies: int = 1) -> tuple[Firm, User, list[User], list[Case]]:
    """A firm whose parties carry the shared names (`copies` parties of each), bulk-inserted (no signal
    fires: the map starts empty)."""
    firm = FirmFactory(slug=slug)
    admin = UserFactory(firm=firm, username=f"{slug}-admin", role=User.Role.ADMIN)
    team = [UserFactory(firm=firm, username=f"{slug}-lawyer{i}", name=f"{PEOPLE[i % 4]} {i}") for i in range(lawyers)]
    clients = Client.objects.bulk_create(Client(firm=firm, key=f"c{i}", name=n) for i, n in enumerate(COMPANIES * copies))
    parties = Counterparty.objects.bulk_create(
        Counterparty(firm=firm, key=f"p{i}", name=n) for i, n in enumerate((COMPANIES + PEOPLE) * copies)
    )
    made = Case.objects.bulk_create(
        Case(firm=firm, key=f"2026-{i:04d}", title=f"{COMPANIES[i % 8].split()[0]} v. {PEOPLE[i % 4]}",
             opened=dt.date(2026, 1, 1), client=clients[i % len(clients)], owner=team[i % lawyers])
        for i in range(cases)
    )  # fmt: skip
    CaseTeamMember.objects.bulk_create(
        CaseTeamMember(firm=firm, case=c, user=team[(i + 1) % lawyers]) for i, c in enumerate(made)
    )
    CaseCounterparty.objects.bulk_create(
        CaseCounterparty(firm=firm, case=c, counterparty=parties[(i + 3) % len(parties)]) for i, c in enumerate(made)
    )
    view_case = view_case_permission()
    CaseUserObjectPermission.objects.bulk_create(
        CaseUserObjectPermission(content_object=c, user=u, permission=view_case)
        for i, c in enumerate(made) for u in {team[i % lawyers], team[(i + 1) % lawyers]}
    )  # fmt: skip
    services.graph_rebuild_firm(firm_id=firm.pk)
    return firm, admin, team, made


@pytest.fixture
def world() -> dict[str, Any]:
    ours, admin, (lawyer, *_), cases = _firm("ours", OURS, 4)
    theirs, *_ = _firm("theirs", THEIRS, 12, copies=10)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {N}; ANALYZE {E}")
    return {"firm": ours, "theirs": theirs, "admin": admin, "lawyer": lawyer, "cases": cases}


# --- reading plans --------------------------------------------------------------------------------


def _probe_bounded(table: str, index: str, cond: str) -> bool:
    if table == S and ("holder" in cond or index in HOLDER_KEYED_INDEXES):
        return True
    return "firm_id" in cond or index in FIRM_KEYED_INDEXES or bool(_BY_KEY.match(cond))


def _bitmap_bounded(table: str, node: dict[str, Any]) -> bool:
    kind, children = node["Node Type"], node.get("Plans", [])
    if kind == "BitmapAnd":
        return any(_bitmap_bounded(table, child) for child in children)
    if kind == "BitmapOr":
        return all(_bitmap_bounded(table, child) for child in children)
    return _probe_bounded(table, node["Index Name"], node.get("Index Cond", ""))


def _parents() -> dict[str, str]:
    """{a partition or a partition's index: the partitioned table or index it belongs to} (the map's tables
    are partitioned by firm, migrations 0020 and 0030: a plan names the partition and the partition's index)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT inhrelid::regclass::text, inhparent::regclass::text FROM pg_inherits")
        return dict(cursor.fetchall())


def by_parent(plan: dict[str, Any]) -> dict[str, Any]:
    """`plan` with each partition and partition's index named as its parent."""
    parents = _parents()

    def named(node: dict[str, Any]) -> dict[str, Any]:
        node = dict(node)
        for key in ("Relation Name", "Index Name"):
            if key in node:
                node[key] = parents.get(node[key], node[key])
        if "Plans" in node:
            node["Plans"] = [named(child) for child in node["Plans"]]
        return node

    return named(plan)


def unbounded_scans(plan: dict[str, Any]) -> list[str]:
    """The scans of the map's tables in `plan` that could read another firm's rows (empty when none)."""
    found = []
    for node in plans.nodes(by_parent(plan)):
        table, kind = node.get("Relation Name"), node["Node Type"]
        if table not in (N, E, S) or kind == "ModifyTable":  # a write, of the rows its scans found
            continue
        if kind in ("Index Scan", "Index Only Scan"):
            ok = _probe_bounded(table, node["Index Name"], node.get("Index Cond", ""))
        elif kind == "Bitmap Heap Scan":  # its bitmap is its outer child (its subplans come along too)
            ok = _bitmap_bounded(table, next(c for c in node["Plans"] if c.get("Parent Relationship") == "Outer"))
        else:
            ok = False
        if not ok:
            found.append(f"{kind} on {table} ({node.get('Index Name')}: {node.get('Index Cond') or node.get('Filter')})")
    return found


def explain(sql: str, *, analyze: bool = False) -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON{', ANALYZE' if analyze else ''}) {sql}")
        return cursor.fetchone()[0][0]["Plan"]


def plans_of(run: Callable[[], Any], *, bulk: bool = False, analyze: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """(statement, plan) for every statement `run` sends that touches the map, planned as it ran
    (and run again with `analyze`: reads only)."""
    with CaptureQueriesContext(connection) as captured:
        run()
    statements = [q["sql"] for q in captured.captured_queries if re.search(rf"\b({N}|{E}|{S})\b", q["sql"])]
    assert statements
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('enable_seqscan', 'off', true)")
        if bulk:
            with graph._bulk_planning():
                plans = [(sql, explain(sql)) for sql in statements]
        else:
            plans = [(sql, explain(sql, analyze=analyze)) for sql in statements]
        cursor.execute("SELECT set_config('enable_seqscan', 'on', true)")
    return plans


def assert_firm_bounded(plans: list[tuple[str, dict[str, Any]]], firm: Firm) -> None:
    for sql, plan in plans:
        assert not (found := unbounded_scans(plan)), (found, sql)
        text = repr(plan)
        assert {int(f) for f in _FIRM_CONSTANT.findall(text)} <= {firm.pk}, sql


def scans_of(plan: dict[str, Any], table: str) -> list[dict[str, Any]]:
    return [node for node in plans.nodes(by_parent(plan)) if node.get("Relation Name") == table]


def index_names(plan: dict[str, Any]) -> set[str]:
    return {node["Index Name"] for node in plans.nodes(by_parent(plan)) if "Index Name" in node}


# --- the reads ------------------------------------------------------------------------------------

READS: dict[str, Callable[[User, Case, Any], Any]] = {  # (viewer, a case of the viewer's, its node id)
    "conflict check": lambda v, c, node: services.conflicts_check(viewer=v, name="Northwind Holdings"),
    "conflict check, typo": lambda v, c, node: services.conflicts_check(viewer=v, name="Nortwind Holdngs"),
    "conflict check, person": lambda v, c, node: services.conflicts_check(viewer=v, name="Shaw, Daniel"),
    "lookup": lambda v, c, node: services.nodes_lookup(viewer=v, q="northwind"),
    "lookup inside a word": lambda v, c, node: services.nodes_lookup(viewer=v, q="wind hold", kind="client"),
    "lookup by case number": lambda v, c, node: services.nodes_lookup(viewer=v, q=c.key),
    "walk": lambda v, c, node: services.node_neighbors(viewer=v, node_id=node),
}


@pytest.mark.parametrize("read", list(READS))
@pytest.mark.parametrize("who", ["admin", "lawyer, sight", "lawyer, cases"])
def test_reads_scan_only_the_firms_rows(world: dict[str, Any], read: str, who: str) -> None:
    viewer = world["admin" if who == "admin" else "lawyer"]
    case = next(c for c in world["cases"] if c.owner_id == viewer.pk) if who != "admin" else world["cases"][0]
    node = Node.objects.get(kind="case", ref_id=case.pk).pk
    use_sight = who == "lawyer, sight"
    with override_settings(GRAPH_MEMORY={**settings.GRAPH_MEMORY, "LAWYER_SIGHT": use_sight}):
        answer = READS[read](viewer, case, node)
        assert getattr(answer, "matches", None) or answer.results  # something found: the plan is not a shortcut
        plans = plans_of(lambda: READS[read](viewer, case, node))
    assert len(plans) == 1  # the sight was built: one statement
    assert_firm_bounded(plans, world["firm"])


@pytest.mark.parametrize("q", ["northwind", "wind hold", "2026-0007", "lee"])
def test_a_firm_admins_lookup_probes_the_words_index(world: dict[str, Any], q: str) -> None:
    admin = world["admin"]
    [(_, plan)] = plans_of(lambda: services.nodes_lookup(viewer=admin, q=q))
    assert "gm_node_lookup_words" in index_names(plan)
    assert all(node["Node Type"] != "Seq Scan" for node in scans_of(plan, N))
    # The words' keys hold the firm: no other index of the nodes is read beside them (beside a larger firm,
    # ours looks selective enough for PostgreSQL to AND in a bitmap of all its nodes from the firm's index).
    assert index_names(plan) & _node_indexes() == {"gm_node_lookup_words"}


def _node_indexes() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s", [N])
        return {row[0] for row in cursor.fetchall()}


# --- the index keys carry the firm ----------------------------------------------------------------


def test_every_index_key_of_a_node_starts_with_its_firm(world: dict[str, Any]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*), count(*) FILTER (WHERE NOT starts_with(v, n.firm_id || ':')) "
            f"FROM {N} n, unnest(n.{PARTY_VARIANTS_COLUMN}) v"
        )
        variants, foreign = cursor.fetchone()
        cursor.execute(
            f"SELECT count(*), count(*) FILTER (WHERE NOT starts_with(v, n.firm_id || ':')) "
            f"FROM {N} n, unnest(tsvector_to_array({LOOKUP_WORDS_EXPRESSION.format(alias='n.')})) v"
        )
        words, foreign_words = cursor.fetchone()
    assert variants > 1000 and foreign == 0
    assert words > 1000 and foreign_words == 0


@pytest.mark.parametrize("name", ["Northwind Holdings", "Nortwind", "J. Lee", "Granite Energy plc"])
def test_what_a_check_and_a_lookup_probe_starts_with_the_viewers_firm(world: dict[str, Any], name: str) -> None:
    firm = world["firm"].pk
    variants, _, _ = selectors._wanted(names.conflict_query(name), firm)
    assert variants and all(v.startswith(f"{firm}:") for v in variants)
    lexemes = re.findall(r"'((?:[^']|'')*)'", names.lookup_query(firm, names.lookup_key(name)))
    assert lexemes and all(lexeme.startswith(f"{firm}:") for lexeme in lexemes)


def test_the_variant_index_hands_over_none_of_their_parties(world: dict[str, Any]) -> None:
    """Measured, not only planned: the firm admin's check reads no map row but in our firm's partition, and
    its variant probes return no more than our parties' entries, though theirs hold the same names ten times
    over. (On our small partition the planner may answer a reading through the firm's key index and a filter
    instead of the variant index: the same rows, fewer of them through the variant index.)"""
    firm, admin = world["firm"], world["admin"]
    [(_, plan)] = plans_of(lambda: services.conflicts_check(viewer=admin, name="Northwind Holdings"), analyze=True)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT DISTINCT tableoid::regclass::text FROM {N} WHERE firm_id = %s", [firm.pk])
        ours = {row[0] for row in cursor.fetchall()}
    read_from = {n["Relation Name"] for n in plans.nodes(plan) if _parents().get(n.get("Relation Name", "")) == N}
    assert len(ours) == 1 and read_from == ours
    probes = [n for n in plans.nodes(by_parent(plan)) if n.get("Index Name") == "gm_node_party_variants"]
    read = sum(round(p["Actual Rows"] * p["Actual Loops"]) for p in probes)  # per loop, rounded to two decimals

    def entries(firm_id: int) -> int:
        """How many of this firm's parties the same probes would hand over: per reading, those holding a
        string of every word (the probes' own test, on every node)."""
        found = 0
        for reading in names.conflict_query("Northwind Holdings").index_groups(firm.pk):
            lists = [[f"{firm_id}:{v.split(':', 1)[1]}" for v in strings] for strings in reading]
            with connection.cursor() as cursor:
                tests = " AND ".join([f"n.{PARTY_VARIANTS_COLUMN} && %s::text[]"] * len(lists))
                cursor.execute(f"SELECT count(*) FROM {N} n WHERE {tests}", lists)
                found += cursor.fetchone()[0]
        return found

    assert entries(firm.pk) > 0 and read <= entries(firm.pk)
    assert entries(world["theirs"].pk) >= 5 * entries(firm.pk)


# --- the rebuild ----------------------------------------------------------------------------------


def test_a_rebuild_scans_only_the_firms_rows(world: dict[str, Any]) -> None:
    firm = world["firm"]
    assert_firm_bounded(plans_of(lambda: services.graph_rebuild_firm(firm_id=firm.pk), bulk=True), firm)  # no-op
    # Something for every statement to do: a renamed client, a case gone, a new party on a case.
    Client.objects.filter(firm=firm, key="c0").update(name="Northwind Holdings International")
    Case.objects.filter(pk=world["cases"][-1].pk).delete()
    newcomer = Counterparty.objects.create(firm=firm, key="new", name="Zephyr Trading AG")
    CaseCounterparty.objects.create(firm=firm, case=world["cases"][0], counterparty=newcomer)
    changes: list[graph.GraphChanges] = []
    plans = plans_of(lambda: changes.append(services.graph_rebuild_firm(firm_id=firm.pk)), bulk=True)
    assert changes[0].nodes_added and changes[0].nodes_updated and changes[0].edges_added and changes[0].removed
    assert_firm_bounded(plans, firm)


def test_a_case_sync_and_the_drift_scan_only_the_firms_rows(world: dict[str, Any]) -> None:
    firm, case = world["firm"], world["cases"][1]
    CaseCounterparty.objects.filter(case=case).delete()
    assert_firm_bounded(plans_of(lambda: services.graph_sync_case(case_id=case.pk)), firm)
    Client.objects.filter(firm=firm, key="c1").update(name="Brightline Logistics Group")
    assert_firm_bounded(plans_of(lambda: graph.graph_drift_firm(firm_id=firm.pk), bulk=True), firm)
