"""Reads of the map in the second host: walk, lookup, conflict check; each one query, whatever the size."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest

from graph_memory import services
from graph_memory.models import Node
from graph_memory.wall import access
from tests.second_host.conftest import Personas
from tests.second_host.factories import PartyFactory
from tests.second_host.matters.models import Assignment, Engagement, Matter
from tests.second_host.world import ACQ, LEASE, SUED, TERM, Office

pytestmark = pytest.mark.django_db


def labels(page: services.NeighborPage) -> set[tuple[str, str, str]]:
    return {(n.node.kind, n.node.label, n.edge) for n in page.results}


def ref(case: services.NodeRef) -> str:
    """The matter reference of a case node ("2026/014" of "2026/014: Nordwind / Castell acquisition")."""
    return case.label.split(":")[0]


def test_walks_follow_only_visible_matters(memory: Office) -> None:
    meridian = Node.objects.get(firm_id=memory.office.pk, kind="client", label="Meridian Foods Corp.")
    owner = services.node_neighbors(viewer=memory.people["owner"], node_id=meridian.pk)
    assert labels(owner) == {("case", "2025/088: Meridian Foods — lease dispute (Parkside)", "for_client")}
    admin = services.node_neighbors(viewer=memory.people["firm_admin"], node_id=meridian.pk)
    assert len(admin.results) == 2
    case = Node.objects.get(kind="case", ref_id=memory.matters[TERM].pk)
    reviewer = services.node_neighbors(viewer=memory.people["reviewer"], node_id=case.pk)
    assert labels(reviewer) == {("lawyer", "Otto Outsider", "works_on"), ("client", "Meridian Foods Corp.", "for_client"),
                                ("counterparty", "Jordan Lee", "against")}  # fmt: skip
    errors = set()
    for viewer, node_id in ((memory.people["teammate"], meridian.pk), (memory.people["other_admin"], case.pk),
                            (memory.people["owner"], uuid.uuid4()), (memory.people["owner"], "nope")):  # fmt: skip
        with pytest.raises(access.NotFound) as info:
            services.node_neighbors(viewer=viewer, node_id=node_id)
        errors.add((type(info.value), str(info.value)))
    assert len(errors) == 1


def test_lookup_and_conflicts(memory: Office) -> None:
    owner, admin, other = memory.people["owner"], memory.people["firm_admin"], memory.people["other_admin"]
    # Names that start with the query come first.
    assert [n.label for n in services.nodes_lookup(viewer=owner, q="meridian").results] == [
        "Meridian Foods Corp.", "2025/088: Meridian Foods — lease dispute (Parkside)",
    ]  # fmt: skip
    assert services.nodes_lookup(viewer=owner, q="jordan").results == []
    report = services.conflicts_check(viewer=admin, name="MERIDIAN FOODS CORPORATION")
    assert sorted((ref(m.case), m.role) for m in report.matches) == [(LEASE, "client"), (TERM, "client")]
    assert [ref(m.case) for m in services.conflicts_check(viewer=owner, name="meridian foods").matches] == [LEASE]
    assert services.conflicts_check(viewer=memory.people["teammate"], name="Meridian Foods Corp.").matches == []
    # The same name in another office: each office's admin sees only their own matter.
    nord = services.conflicts_check(viewer=admin, name="Nordwind Holdings")
    assert [(ref(m.case), m.role) for m in nord.matches] == [(ACQ, "client")]
    sued = services.conflicts_check(viewer=other, name="Nordwind Holdings")
    assert [(ref(m.case), m.role) for m in sued.matches] == [(SUED, "client")]
    # One Party engaged as client on one matter and adverse on another: two matches, two roles.
    castell = Engagement.objects.get(matter=memory.matters[ACQ], role="adverse").party
    Engagement.objects.create(matter=memory.matters[LEASE], party=castell, role="adverse")
    services.graph_rebuild_firm(firm_id=memory.office.pk)
    again = services.conflicts_check(viewer=owner, name="Castell Components")
    assert sorted((ref(m.case), m.role) for m in again.matches) == [(LEASE, "counterparty"), (ACQ, "counterparty")]


def grow_office(p: Personas, cases: int) -> None:
    client, shared = PartyFactory(office=p.office), PartyFactory(office=p.office, name="Shared Party Ltd")
    made = Matter.objects.bulk_create(
        Matter(office=p.office, reference=f"bulk-{i}", name=f"Bulk {i}", opened_on=dt.date(2026, 1, 1), lead=p.owner)
        for i in range(cases)
    )
    Engagement.objects.bulk_create(Engagement(matter=m, party=client, role="client") for m in made)
    Engagement.objects.bulk_create(Engagement(matter=m, party=shared, role="adverse") for m in made)
    Assignment.objects.bulk_create(Assignment(matter=m, attorney=p.teammate) for m in made)
    services.graph_rebuild_firm(firm_id=p.office.pk)


@pytest.mark.parametrize("cases", [10, 300])
def test_reads_are_a_fixed_number_of_queries(personas: Personas, cases: int, django_assert_num_queries) -> None:
    p = personas
    grow_office(p, cases)
    owner_node = Node.objects.get(kind="lawyer", ref_id=p.owner.pk).pk
    # The same counts as in the reference host (tests/viewer/test_graph_reads.py).
    for viewer in (p.owner, p.teammate, p.firm_admin):
        with django_assert_num_queries(1):
            page = services.node_neighbors(viewer=viewer, node_id=owner_node, limit=5)
        assert len(page.results) == 5 and page.has_more
        with django_assert_num_queries(1):
            assert services.nodes_lookup(viewer=viewer, q="bulk", limit=100).results
        with django_assert_num_queries(1):
            assert len(services.conflicts_check(viewer=viewer, name="SHARED PARTY LIMITED").matches) == min(cases, 100)
    for viewer in (p.outsider, p.other_firm_admin):
        with django_assert_num_queries(1), pytest.raises(access.NotFound):
            services.node_neighbors(viewer=viewer, node_id=owner_node)
