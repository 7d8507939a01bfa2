"""Each firm's rows in one partition, and every read and the nightly run read one partition (issue 28, item 3).

The sight and the map's edges are hash-partitioned by firm (migration 0020). A
statement that names the firm as a constant (Django binds parameters on the
client, so PostgreSQL plans with the value) reads the firm's partition only:
the planner prunes the others, or the executor does at startup ("Subplans
Removed"). That is the property Citus needs to route a statement to one shard.

Our firm sits beside two others holding the same names. Every read of a firm
admin and of a lawyer (from their sight, and from their cases with the sight
off), and one firm's nightly refresh with a map rebuild in it, run with every
statement captured; each statement that names a partitioned table is planned
again under `EXPLAIN (FORMAT JSON)`, and the plan may scan at most one partition
of each table, our firm's. A statement whose partitions are pruned only per
rescan of a nested loop lists them all in its plan, and fails. Assertions read
the plan, never a time.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from graph_memory import services
from graph_memory.models import CaseSummary, Edge, MissedChange, Node, RefreshRun, Sight
from graph_memory.vectors.embeddings import vector_dimensions
from graph_memory.viewer.memory_index import memory_index
from practice.models import Case, CaseCounterparty, Client
from tests import plans
from tests.contracts.test_firm_plans import _firm
from tests.factories import DocumentFactory
from tests.long_documents import long_agreement
from tests.search_support import MODEL, FixedEmbedder

pytestmark = pytest.mark.django_db

PARTITIONED = (Node._meta.db_table, Edge._meta.db_table, Sight._meta.db_table)
PARTITIONS = 16
_NAMED = re.compile(rf"\b({'|'.join(PARTITIONED)})\b")
_PARTITION = re.compile(rf"^({'|'.join(PARTITIONED)})_p\d+$")
OFFLINE = {"WRITER": "extractive", "EMBEDDER": "none", "THROTTLE_RATE": None}
QUESTION = "When is the escrow amount released to the sellers?"


@pytest.fixture
def world(settings: Any) -> dict[str, Any]:
    """Our firm (30 cases, written summaries with vectors, a long agreement on the lawyer's case) beside two
    firms holding the same names, one larger."""
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **OFFLINE}
    firm, admin, (lawyer, *_), cases = _firm("ours", 30, 4)
    _firm("theirs", 60, 8, copies=3)
    _firm("third", 10, 2)
    case = next(c for c in cases if c.owner_id == lawyer.pk)
    DocumentFactory(case=case, key="spa", title="Share Purchase Agreement", pages=long_agreement(articles=6, pages_per_article=3)[0])
    services.mark_stale(case_ids=[c.pk for c in cases])
    assert services.refresh_firm(firm_id=firm.pk).status == RefreshRun.Status.DONE
    vector = [1.0] + [0.0] * (vector_dimensions() - 1)
    assert CaseSummary.objects.filter(firm=firm).update(embedding=vector, embedding_model=MODEL) == len(cases)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return {"firm": firm, "admin": admin, "lawyer": lawyer, "case": case, "cases": cases, "vector": vector}


def partitions_scanned(plan: dict[str, Any]) -> dict[str, set[str]]:
    """{partitioned table: the partitions of it the plan keeps}, after plan-time and startup pruning."""
    found: dict[str, set[str]] = defaultdict(set)
    for node in plans.nodes(plan):
        if match := _PARTITION.match(node.get("Relation Name", "")):
            found[match.group(1)].add(node["Relation Name"])
    return found


def statements_of(run: Callable[[], Any]) -> list[str]:
    """The statements `run` sends that name a partitioned table."""
    with CaptureQueriesContext(connection) as captured:
        run()
    return [q["sql"] for q in captured.captured_queries if _NAMED.search(q["sql"])]


def explain(sql: str) -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}")
        return cursor.fetchone()[0][0]["Plan"]


def our_partitions(firm_id: int) -> dict[str, str]:
    """{partitioned table: the partition holding the firm's rows}."""
    with connection.cursor() as cursor:
        found = {}
        for table in PARTITIONED:
            cursor.execute(f"SELECT DISTINCT tableoid::regclass::text FROM {table} WHERE firm_id = %s", [firm_id])
            [(found[table],)] = cursor.fetchall()
        return found


def unpruned(statements: list[str], firm_id: int) -> list[str]:
    """Each statement whose plan keeps more than one partition of a table, or another firm's partition."""
    ours = our_partitions(firm_id)
    bad = []
    for sql in statements:
        for table, kept in partitions_scanned(explain(sql)).items():
            if kept - {ours[table]}:
                bad.append(f"{table}: {sorted(kept)} in {sql[:3000]}")
    return bad


# --- the tables -----------------------------------------------------------------------------------


def test_the_tables_are_hash_partitioned_by_firm_and_each_firms_rows_are_in_one_partition(world: dict[str, Any]) -> None:
    with connection.cursor() as cursor:
        for table in PARTITIONED:
            cursor.execute(
                "SELECT pg_get_partkeydef(p.partrelid), (SELECT count(*) FROM pg_inherits i WHERE i.inhparent = p.partrelid) "
                "FROM pg_partitioned_table p WHERE p.partrelid = %s::regclass",
                [table],
            )
            assert cursor.fetchall() == [("HASH (firm_id)", PARTITIONS)], table
            cursor.execute(f"SELECT firm_id, count(DISTINCT tableoid), count(*) FROM {table} GROUP BY firm_id")
            rows = cursor.fetchall()
            assert len(rows) == 3 and all(partitions == 1 and count > 0 for _, partitions, count in rows), (table, rows)
            # The indexes are the partitions' own: each partition has each of the parent's.
            cursor.execute(
                "SELECT count(*) FROM pg_inherits i JOIN pg_index x ON x.indrelid = i.inhrelid WHERE i.inhparent = %s::regclass",
                [table],
            )
            per_partition = cursor.fetchone()[0]
            cursor.execute("SELECT count(*) FROM pg_index WHERE indrelid = %s::regclass", [table])
            assert per_partition == PARTITIONS * cursor.fetchone()[0]


def test_the_sights_triggers_stand_on_the_partitioned_edges(world: dict[str, Any]) -> None:
    """A statement trigger with transition tables on the partitioned parent sees rows of every partition: a
    new edge of our firm reaches its holders' sight."""
    firm, case = world["firm"], world["case"]
    party = Node.objects.get(firm=firm, kind="client", ref_id=case.client_id)
    before = Sight.objects.filter(firm_id=firm.pk, cases__contains=[case.pk]).count()
    Client.objects.filter(pk=case.client_id).update(name="Zephyr Trading AG")
    services.graph_sync_case(case_id=case.pk)
    assert Sight.objects.filter(firm_id=firm.pk, cases__contains=[case.pk], node_id=party.pk, label="Zephyr Trading AG").exists()
    assert Sight.objects.filter(firm_id=firm.pk, cases__contains=[case.pk]).count() == before


# --- the reads ------------------------------------------------------------------------------------


def _reads(world: dict[str, Any], viewer: User) -> dict[str, Callable[[], Any]]:
    firm, case = world["firm"], world["case"]
    node = Node.objects.filter(firm=firm)
    case_node = node.get(kind="case", ref_id=case.pk).pk
    client = node.get(kind="client", ref_id=case.client_id).pk
    party = CaseCounterparty.objects.filter(case=case).values_list("counterparty_id", flat=True).first()
    counterparty = node.get(kind="counterparty", ref_id=party).pk
    lawyer = node.get(kind="lawyer", ref_id=case.owner_id).pk
    embedder = FixedEmbedder(world["vector"])
    return {
        "node": lambda: services.node_get(viewer=viewer, node_id=case_node),
        "walk from the case": lambda: services.node_neighbors(viewer=viewer, node_id=case_node),
        "walk from the client": lambda: services.node_neighbors(viewer=viewer, node_id=client),
        "walk, one kind": lambda: services.node_neighbors(viewer=viewer, node_id=client, kind="case"),
        "lookup": lambda: services.nodes_lookup(viewer=viewer, q="northwind"),
        "lookup inside a word": lambda: services.nodes_lookup(viewer=viewer, q="wind hold", kind="client"),
        "lookup by case number": lambda: services.nodes_lookup(viewer=viewer, q=case.key),
        "conflict check": lambda: services.conflicts_check(viewer=viewer, name="Northwind Holdings"),
        "conflict check, typo": lambda: services.conflicts_check(viewer=viewer, name="Nortwind Holdngs"),
        "conflict check, person": lambda: services.conflicts_check(viewer=viewer, name="Shaw, Daniel"),
        "brief of the case": lambda: services.node_brief(viewer=viewer, node_id=case_node),
        "brief of the client": lambda: services.node_brief(viewer=viewer, node_id=client),
        "brief of the counterparty": lambda: services.node_brief(viewer=viewer, node_id=counterparty),
        "brief of the lawyer": lambda: services.node_brief(viewer=viewer, node_id=lawyer, statements=True),
        "search, hybrid": lambda: services.search_cases(viewer=viewer, q="northwind", embedder=embedder),
        "search, keyword": lambda: services.search_cases(viewer=viewer, q="northwind"),
        "memory index": lambda: memory_index(viewer=viewer),
        "ask the documents": lambda: services.ask_documents(viewer=viewer, node_id=case_node, question=QUESTION),
    }


@pytest.mark.parametrize("who", ["admin", "lawyer, sight", "lawyer, cases"])
def test_every_read_scans_one_partition(world: dict[str, Any], who: str) -> None:
    viewer = world["admin" if who == "admin" else "lawyer"]
    with override_settings(GRAPH_MEMORY={**settings.GRAPH_MEMORY, "LAWYER_SIGHT": who != "lawyer, cases"}):
        reads = _reads(world, viewer)
        answers = {name: read() for name, read in reads.items()}  # warm (permission ids), and something found
        assert answers["walk from the client"].results and answers["lookup"].results
        assert answers["conflict check"].matches and answers["brief of the client"].cases
        assert answers["search, hybrid"].mode == "hybrid" and answers["search, hybrid"].results
        assert answers["search, keyword"].results and answers["ask the documents"].quotes
        failures, named = [], set()
        for name, read in reads.items():
            statements = statements_of(read)
            assert statements, name  # every read names the nodes at least (a search, its hits' case nodes)
            named.update(_NAMED.findall(" ".join(statements)))
            failures += [f"{name}: {bad}" for bad in unpruned(statements, world["firm"].pk)]
    assert named == set(PARTITIONED) if who == "lawyer, sight" else named == {Node._meta.db_table, Edge._meta.db_table}
    assert not failures, "\n\n".join(failures)


# --- the nightly run ------------------------------------------------------------------------------


def test_a_firms_nightly_refresh_scans_one_partition(world: dict[str, Any]) -> None:
    """The nightly run of one firm: missed changes repaired (a map rebuild, with something to write), stale
    summaries rewritten, document indexes and embeddings seen to."""
    firm, cases = world["firm"], world["cases"]
    Client.objects.filter(firm=firm, key="c0").update(name="Northwind Holdings International")
    Case.objects.filter(pk=cases[-1].pk).delete()
    MissedChange.objects.create(firm=firm, work=MissedChange.Work.GRAPH, model="practice.client", error="test")
    services.mark_stale(case_ids=[c.pk for c in cases[:5]])
    runs: list[RefreshRun] = []
    statements = statements_of(lambda: runs.append(services.refresh_firm(firm_id=firm.pk)))
    [run] = runs
    assert run.status == RefreshRun.Status.DONE and run.claimed >= 1
    assert not MissedChange.objects.filter(repaired_at=None)
    assert Node.objects.filter(firm=firm, label="Northwind Holdings International").exists()
    assert _NAMED.search(" ".join(statements))  # the rebuild's statements are among them
    assert not (bad := unpruned(statements, firm.pk)), "\n\n".join(bad)
