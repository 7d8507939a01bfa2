"""The connection map from the second host's records: rebuilds, incremental syncs from its receivers, deletions."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import CommandError, call_command

from graph_memory import services
from graph_memory.models import Edge, Node
from graph_memory.tasks import graph_rebuild_firm_task
from tests.second_host.factories import AttorneyFactory, PartyFactory
from tests.second_host.matters.models import Assignment, Engagement, Matter, Party
from tests.second_host.world import ACQ, ENQ, LEASE, SUED, TERM, Office, build_office

pytestmark = pytest.mark.django_db

MAP = {
    ("2026/014: Nordwind / Castell acquisition", "Olga Owner", "works_on"),
    ("2026/014: Nordwind / Castell acquisition", "Tariq Teammate", "works_on"),
    ("2026/014: Nordwind / Castell acquisition", "Nordwind Holdings AG", "for_client"),
    ("2026/014: Nordwind / Castell acquisition", "Castell Components GmbH", "against"),
    ("2025/088: Meridian Foods — lease dispute (Parkside)", "Olga Owner", "works_on"),
    ("2025/088: Meridian Foods — lease dispute (Parkside)", "Meridian Foods Corp.", "for_client"),
    ("2025/088: Meridian Foods — lease dispute (Parkside)", "Parkside Realty Partners", "against"),
    ("2026/047: Lee v. Meridian Foods (wrongful termination)", "Otto Outsider", "works_on"),
    ("2026/047: Lee v. Meridian Foods (wrongful termination)", "Meridian Foods Corp.", "for_client"),
    ("2026/047: Lee v. Meridian Foods (wrongful termination)", "Jordan Lee", "against"),
    # An enquiry with no client yet: on the map through its lead, with no "is for" edge.
    ("2026/099: New enquiry", "Tariq Teammate", "works_on"),
}


@pytest.fixture
def world() -> Office:
    world = build_office()
    services.graph_rebuild_firm(firm_id=world.office.pk)
    return world


def edges(office_id: int) -> set[tuple[str, str, str]]:
    """(case label, the other end's label, edge kind) for every edge of the office."""
    found = set()
    for kind, source, target, source_kind in Edge.objects.filter(firm_id=office_id).values_list(
        "kind", "source__label", "target__label", "source__kind"
    ):
        case, other = (target, source) if source_kind == "lawyer" else (source, target)
        found.add((case, other, kind))
    return found


def snapshot(office_id: int) -> tuple[list[Any], list[Any]]:
    return (
        list(Node.objects.filter(firm_id=office_id).order_by("id").values_list("id", "kind", "ref_id", "label", "party_key")),
        list(Edge.objects.filter(firm_id=office_id).order_by("id").values_list("id", "case_id", "kind", "source_id", "target_id")),
    )


def test_the_office_map(world: Office) -> None:
    assert edges(world.office.pk) == MAP
    kinds = sorted(Node.objects.filter(firm_id=world.office.pk).values_list("kind", flat=True))
    assert kinds == ["case"] * 4 + ["client"] * 2 + ["counterparty"] * 3 + ["lawyer"] * 3
    # The reviewer opens a matter but is on no team, so no node.
    assert not Node.objects.filter(kind="lawyer", ref_id=world.people["reviewer"].pk).exists()
    # The other office's same-named client is its own node, in its own firm.
    services.graph_rebuild_firm(firm_id=world.other.pk)
    assert Node.objects.filter(label="Nordwind Holdings AG").values_list("firm_id", flat=True).distinct().count() == 2


def test_rebuild_is_idempotent_and_deterministic(world: Office) -> None:
    before = snapshot(world.office.pk)
    assert services.graph_rebuild_firm(firm_id=world.office.pk).written == 0
    Edge.objects.all().delete()
    Node.objects.all().delete()
    services.graph_rebuild_firm(firm_id=world.office.pk)
    assert snapshot(world.office.pk) == before


def test_the_receivers_alone_build_the_same_map_as_a_rebuild(db: None, django_capture_on_commit_callbacks) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        world = build_office()
    assert edges(world.office.pk) == MAP
    assert services.graph_rebuild_firm(firm_id=world.office.pk).written == 0


def test_links_added_and_removed_from_either_side_resync(world: Office, django_capture_on_commit_callbacks) -> None:
    enquiry, office = world.matters[ENQ], world.office
    supplier = PartyFactory(office=office, name="Baltic Supplies Oy")
    rival = PartyFactory(office=office, name="Rival Trading Ltd")
    with django_capture_on_commit_callbacks(execute=True):
        enquiry.parties.add(supplier, through_defaults={"role": Engagement.Role.CLIENT})  # m2m add: no post_save
        rival.matters.add(enquiry, world.matters[LEASE])  # from the party's side, as adverse (the default role)
    assert {("2026/099: New enquiry", "Baltic Supplies Oy", "for_client"),
            ("2026/099: New enquiry", "Rival Trading Ltd", "against"),
            ("2025/088: Meridian Foods — lease dispute (Parkside)", "Rival Trading Ltd", "against")} <= edges(office.pk)  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        rival.matters.clear()  # names no matter: the adapter lists them before the links go
        enquiry.team.add(world.people["owner"])
    got = edges(office.pk)
    assert not {e for e in got if e[1] == "Rival Trading Ltd"}
    assert ("2026/099: New enquiry", "Olga Owner", "works_on") in got
    assert services.graph_rebuild_firm(firm_id=office.pk).written == 0


def test_assignments_and_renames(world: Office, django_capture_on_commit_callbacks) -> None:
    office, reviewer = world.office, world.people["reviewer"]
    castell = Party.objects.get(name="Castell Components GmbH")
    meridian = Party.objects.get(name="Meridian Foods Corp.")
    with django_capture_on_commit_callbacks(execute=True):
        Assignment.objects.filter(attorney=reviewer).get().delete()
        Assignment.objects.create(matter=world.matters[TERM], attorney=reviewer)  # now on the team
        castell.name = "Castell Components SE"
        castell.save()
        meridian.name = "Meridian Foods plc"
        meridian.save()
        owner = world.people["owner"]
        owner.full_name = "Olga Renamed"
        owner.save(update_fields=["full_name"])
        world.people["teammate"].save(update_fields=["last_login"])  # a login changes no label
    got = edges(office.pk)
    assert ("2026/047: Lee v. Meridian Foods (wrongful termination)", "Rita Reviewer", "works_on") in got
    # One Party model stands for clients and counterparties: both kinds of node are relabelled.
    assert Node.objects.get(kind="counterparty", ref_id=castell.pk).party_key == "castell components"
    # Party nodes only: a matter or an attorney may share the party's primary key.
    meridian_nodes = Node.objects.filter(kind__in=["client", "counterparty"], ref_id=meridian.pk)
    assert set(meridian_nodes.values_list("kind", "label")) == {("client", "Meridian Foods plc")}
    assert Node.objects.get(kind="lawyer", ref_id=owner.pk).label == "Olga Renamed"
    assert services.graph_rebuild_firm(firm_id=office.pk).written == 0


def test_deleting_a_matter_removes_its_edges_and_its_orphans_only(world: Office, django_capture_on_commit_callbacks) -> None:
    office, term = world.office, world.matters[TERM]
    with django_capture_on_commit_callbacks(execute=True):
        term.delete()
    refs = set(Node.objects.filter(firm_id=office.pk).values_list("kind", "label"))
    assert not {("case", "2026/047: Lee v. Meridian Foods (wrongful termination)"), ("counterparty", "Jordan Lee"),
                ("lawyer", "Otto Outsider")} & refs  # fmt: skip
    assert ("client", "Meridian Foods Corp.") in refs  # still the lease matter's client
    assert not Edge.objects.filter(case_id=term.pk).exists()
    assert services.graph_rebuild_firm(firm_id=office.pk).written == 0


def test_a_new_lead_moves_the_works_on_edge(world: Office, django_capture_on_commit_callbacks) -> None:
    lease = world.matters[LEASE]
    newcomer = AttorneyFactory(office=world.office, username="newcomer", full_name="Nina Newcomer")
    with django_capture_on_commit_callbacks(execute=True):
        lease.lead = newcomer
        lease.save()
    got = edges(world.office.pk)
    assert ("2025/088: Meridian Foods — lease dispute (Parkside)", "Nina Newcomer", "works_on") in got
    assert ("2025/088: Meridian Foods — lease dispute (Parkside)", "Olga Owner", "works_on") not in got


def test_rebuild_command_takes_the_office_code_and_the_task_works(world: Office, capsys) -> None:
    call_command("rebuild_graph", "--firm", "kanzlei-sued")
    assert "1 firm(s): 5 row(s) added, 0 removed, 0 relabelled, 0 unchanged" in capsys.readouterr().out
    call_command("rebuild_graph")
    assert "2 firm(s): 0 row(s) added" in capsys.readouterr().out
    with pytest.raises(CommandError, match="unknown firm: nope"):
        call_command("rebuild_graph", "--firm", "nope")
    assert graph_rebuild_firm_task(world.other.pk)["written"] == 0
    assert Matter.objects.get(reference=SUED).office == world.other
    assert ACQ in {m.reference for m in Matter.objects.filter(office=world.office)}
