"""Timing side channels, proved by structure rather than by a stopwatch (issue 15, item 1).

A lawyer's lookup, conflict check, walk and brief must cost what they may see,
never what is hidden from them. Timing that in a unit test would be flaky, so
these tests count instead: each read's own SQL is run again under
`EXPLAIN (ANALYZE, FORMAT JSON)` and the table rows its plan read (kept or
filtered out) are added up. Adding many hidden cases whose parties and names
match the query (hidden-heavy) must leave that count exactly where it was
without them (hidden rows absent). The reads used to find matches first and
check the wall after, so there the count grew with every hidden match.
bench/bench_timing.py measures the same worlds with a stopwatch.

Each test runs twice: with the lawyer's sight current (graph_memory.wall.sight: the
reads answer from their own rows) and with it stale (the reads answer from the
cases they may open, in a second statement).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from graph_memory import services
from graph_memory.models import Edge, Node, Sight
from graph_memory.wall import access, sight
from practice.models import Case, CaseCounterparty, Client
from tests import plans
from tests.factories import CaseFactory, ClientFactory, CounterpartyFactory, FirmFactory, UserFactory

pytestmark = pytest.mark.django_db

HIDDEN = 40  # hidden cases, each for the "Hub" client and against a "Hub" counterparty


def _plan_rows(plan: dict[str, Any]) -> float:
    """Rows read from tables by this plan node and those under it: kept or filtered out, every loop."""
    return sum(
        (n.get("Actual Rows", 0) + n.get("Rows Removed by Filter", 0) + n.get("Rows Removed by Index Recheck", 0))
        * (n.get("Actual Loops", 1) or 0)
        for n in plans.nodes(plan)
        if "Relation Name" in n
    )


def rows_touched(read: Callable[[], Any]) -> float:
    """The table rows the read's statements read (kept or filtered out), summed over their plans."""
    with CaptureQueriesContext(connection) as captured:
        try:
            read()
        except access.NotFound:
            pass
    total = 0.0
    with connection.cursor() as cursor:
        # The tables here fit in a page or two, where a sequential scan of everything is the
        # planner's cheapest choice; at any real size it takes the indexes. Plan as it would there.
        # (Bitmap scans stay on: a GIN index, such as the sight's words and party strings, has no other.)
        cursor.execute("SET LOCAL enable_seqscan = off")
        for query in captured.captured_queries:
            cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + query["sql"])
            plan = cursor.fetchone()[0]
            total += _plan_rows((json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"])
        cursor.execute("SET LOCAL enable_seqscan = on")
    return total


def _settle(world: dict[str, Any]) -> None:
    """After a change: the lawyer's reads from the sight (built, by the world's mode) or from their cases, then ANALYZE."""
    assert sight.uses_sight(world["lawyer"]) == (world["mode"] == "sight")
    assert sight.current()
    with connection.cursor() as cursor:
        # And the GIN indexes' pending lists flushed, as (auto)vacuum does: the tables are partitioned by firm
        # (migration 0020), so the sight's primary key holds the firm, and a partition of a few hundred rows
        # read whole through it looks cheaper than a GIN probe that must also read a fresh pending list. At
        # any real size it never is (docs/SCALE.md); planned as it would be there, as with sequential scans.
        cursor.execute(
            "SELECT gin_clean_pending_list(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'gin' AND c.relkind = 'i'"
        )
        cursor.execute("ANALYZE")


@pytest.fixture(params=["sight", "cases"])
def firm_world(request: pytest.FixtureRequest, settings: Any) -> dict[str, Any]:
    """A lawyer on three cases of a firm; a colleague whose cases will be hidden from the lawyer.
    Mode "cases": the sight switched off, so the lawyer's reads start from the cases they may open."""
    if request.param == "cases":
        settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "LAWYER_SIGHT": False}
    firm = FirmFactory(slug="side-channels")
    # Named here, not by Faker: a generated name holding "hub" ("Jason Hubbard") is a visible lawyer node
    # the lookup for "hub" rightly finds.
    lawyer = UserFactory(firm=firm, username="few-cases", name="Lena Ortiz")
    colleague = UserFactory(firm=firm, username="colleague", name="Marco Velde")
    admin = UserFactory(firm=firm, username="side-admin", name="Dana Price", role=User.Role.ADMIN)
    for i in range(3):
        case = CaseFactory(firm=firm, owner=lawyer, title=f"Visible matter {i}", client=ClientFactory(firm=firm, name=f"Visible Client {i} Ltd"))
        CaseCounterparty.objects.create(firm=firm, case=case, counterparty=CounterpartyFactory(firm=firm, name=f"Visible Opponent {i} LLC"))
    CaseFactory(firm=firm, owner=colleague, title="Unrelated hidden matter")
    services.graph_rebuild_firm(firm_id=firm.pk)
    return {"firm": firm, "lawyer": lawyer, "colleague": colleague, "admin": admin, "mode": request.param}


def _add_hidden(world: dict[str, Any], count: int = HIDDEN) -> str:
    """`count` more cases of the colleague's, all for "Hub Holdings" and each against a "Hub ..." party;
    the hub's node id."""
    firm, colleague = world["firm"], world["colleague"]
    hub = Client.objects.filter(firm=firm, key="hub").first() or ClientFactory(firm=firm, key="hub", name="Hub Holdings, Inc.")
    start = Case.objects.filter(firm=firm, client=hub).count()
    for i in range(start, start + count):
        case = CaseFactory(firm=firm, owner=colleague, title=f"Hub matter {i}", client=hub)
        CaseCounterparty.objects.create(firm=firm, case=case, counterparty=CounterpartyFactory(firm=firm, name=f"Hub Partners {i} LLC"))
    services.graph_rebuild_firm(firm_id=firm.pk)
    return str(Node.objects.get(firm=firm, kind=Node.Kind.CLIENT, ref_id=hub.pk).pk)


def _reads(viewer: User, node_id: str) -> dict[str, Callable[[], Any]]:
    return {
        "lookup": lambda: services.nodes_lookup(viewer=viewer, q="hub"),
        "conflicts": lambda: services.conflicts_check(viewer=viewer, name="Hub Holdings"),
        "walk": lambda: services.node_neighbors(viewer=viewer, node_id=node_id),
        "brief": lambda: services.node_brief(viewer=viewer, node_id=node_id),
    }


def test_a_lawyers_reads_touch_no_more_rows_as_hidden_matches_grow(firm_world: dict[str, Any]) -> None:
    world = firm_world
    lawyer = world["lawyer"]
    hub_id = _add_hidden(world, 5)
    _settle(world)
    few = {name: rows_touched(read) for name, read in _reads(lawyer, hub_id).items()}
    _add_hidden(world, HIDDEN)
    _settle(world)
    many = {name: rows_touched(read) for name, read in _reads(lawyer, hub_id).items()}
    # The answers are the same (nothing), and so is the work done to give them.
    assert services.nodes_lookup(viewer=lawyer, q="hub").results == []
    assert services.conflicts_check(viewer=lawyer, name="Hub Holdings").matches == []
    with pytest.raises(access.NotFound):
        services.node_neighbors(viewer=lawyer, node_id=hub_id)
    # No more, but for the lawyer's own rows: a plan may change with the tables' statistics, which count
    # hidden rows too (docs/SECURITY.md, "Timing side channels"), and read the lawyer's own cases' rows
    # through another index (measured: a walk from 7 rows to 16, its three cases' edges read by case
    # rather than by node). Those rows do not grow with what is hidden; the 40 hidden cases added here
    # would add at least 40 to any plan that read them.
    own = _own_rows(world)
    assert own < HIDDEN
    assert all(many[name] <= few[name] + own for name in few), (
        f"rows touched with {HIDDEN + 5} hidden matching cases: {many}; with 5: {few}; the lawyer's own rows: {own}"
    )


def _own_rows(world: dict[str, Any]) -> int:
    """The rows the lawyer's own cases hold in the map and in their sight: what any plan of their reads may read."""
    lawyer = world["lawyer"]
    cases = access.visible_case_ids(lawyer)
    return Edge.objects.filter(case_id__in=cases).count() + Sight.objects.filter(holder=lawyer.pk).count()


def test_a_hidden_node_and_an_unknown_id_cost_the_same_walk(firm_world: dict[str, Any]) -> None:
    """Walk and brief of a hidden node probe the viewer's cases, as for an id that names nothing;
    only reading the node's own row (one row) tells them apart."""
    world = firm_world
    hub_id = _add_hidden(world)
    _settle(world)
    for name in ("walk", "brief"):
        hidden = rows_touched(_reads(world["lawyer"], hub_id)[name])
        unknown = rows_touched(_reads(world["lawyer"], str(uuid.uuid4()))[name])
        assert hidden - unknown <= 2, (name, hidden, unknown)


def test_the_count_is_sensitive_the_same_reads_see_a_visible_match(firm_world: dict[str, Any]) -> None:
    """The measure is not blind: giving the lawyer one hub case makes the same reads touch more rows."""
    world = firm_world
    lawyer = world["lawyer"]
    hub_id = _add_hidden(world)
    _settle(world)
    before = {name: rows_touched(read) for name, read in _reads(lawyer, hub_id).items()}
    hub = Node.objects.get(pk=hub_id)
    CaseFactory(firm=world["firm"], owner=lawyer, title="Matter the lawyer runs", client_id=hub.ref_id)
    services.graph_rebuild_firm(firm_id=world["firm"].pk)
    _settle(world)
    after = {name: rows_touched(read) for name, read in _reads(lawyer, hub_id).items()}
    assert [r.label for r in services.nodes_lookup(viewer=lawyer, q="hub").results] == ["Hub Holdings, Inc."]
    assert all(after[name] > before[name] for name in before), (before, after)


def test_a_firm_admin_sees_every_hub_case(firm_world: dict[str, Any]) -> None:
    """The admin's statements start from what matches (nothing is hidden from them): still the whole answer."""
    world = firm_world
    hub_id = _add_hidden(world)
    admin = world["admin"]
    assert services.conflicts_check(viewer=admin, name="Hub Holdings").matches
    assert len(services.node_neighbors(viewer=admin, node_id=hub_id, limit=100).results) == HIDDEN
    assert services.node_brief(viewer=admin, node_id=hub_id, limit=100).has_more is False
