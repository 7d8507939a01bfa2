"""Briefs in the second host: a matter's stored summary, or a party's or attorney's brief assembled per viewer."""

from __future__ import annotations

import uuid

import pytest
from django.apps import apps
from django.db import connection

from graph_memory import services
from graph_memory.models import CaseSummary, Node
from graph_memory.viewer import briefs
from graph_memory.wall import access
from tests.second_host.factories import AttorneyFactory, MatterFactory, PartyFactory
from tests.second_host.matters.models import Assignment, Bill, DueDate, Matter
from tests.second_host.world import ACQ, ENQ, LEASE, LEASE_FACTS, SUED, TERM, TERMINATION_FACTS, Office

pytestmark = pytest.mark.django_db


def node(kind: str, label: str, office: Office) -> Node:
    return Node.objects.get(firm_id=office.office.pk, kind=kind, label=label)


def test_client_brief_holds_only_the_matters_this_viewer_may_open(memory: Office) -> None:
    meridian = node("client", "Meridian Foods Corp.", memory)
    owner = services.node_brief(viewer=memory.people["owner"], node_id=meridian.pk)
    assert [c.key for c in owner.cases] == [LEASE] and not owner.has_more
    assert all(fact in owner.text for fact in LEASE_FACTS)
    assert not any(fact in owner.text + repr(owner) for fact in TERMINATION_FACTS)
    for viewer in ("firm_admin",):
        brief = services.node_brief(viewer=memory.people[viewer], node_id=meridian.pk)
        assert sorted(c.key for c in brief.cases) == [LEASE, TERM]
        assert all(fact in brief.text for fact in LEASE_FACTS + TERMINATION_FACTS)
    # The reviewer opens the termination matter without being on its team: the client's brief holds it.
    reviewer = services.node_brief(viewer=memory.people["reviewer"], node_id=meridian.pk)
    assert [c.key for c in reviewer.cases] == [TERM]
    for viewer in ("teammate", "other_admin"):
        with pytest.raises(access.NotFound):
            services.node_brief(viewer=memory.people[viewer], node_id=meridian.pk)


def test_attorney_brief_covers_the_attorneys_matters_the_viewer_may_open(memory: Office) -> None:
    owner_node = Node.objects.get(kind="lawyer", ref_id=memory.people["owner"].pk)
    teammate_view = services.node_brief(viewer=memory.people["teammate"], node_id=owner_node.pk)
    assert [c.key for c in teammate_view.cases] == [ACQ]
    assert not any(fact in teammate_view.text for fact in LEASE_FACTS)
    admin_view = services.node_brief(viewer=memory.people["firm_admin"], node_id=owner_node.pk)
    assert sorted(c.key for c in admin_view.cases) == [LEASE, ACQ]
    assert "the summaries of 2 cases you may open" in admin_view.text


def test_case_brief_is_the_stored_summary_with_its_state_and_header(memory: Office) -> None:
    acq = memory.matters[ACQ]
    case_node = Node.objects.get(kind="case", ref_id=acq.pk)
    brief = services.node_brief(viewer=memory.people["teammate"], node_id=case_node.pk)
    (entry,) = brief.cases
    summary = CaseSummary.objects.get(case=acq)
    assert entry.summary == summary.text and not entry.stale and entry.key == ACQ
    assert entry.header == (
        "2026/014 — Nordwind / Castell acquisition · status Active · opened 2026-03-02 · client Nordwind Holdings AG"
        " · against Castell Components GmbH"
    )
    CaseSummary.objects.filter(case=acq).update(stale=True)
    assert services.node_brief(viewer=memory.people["teammate"], node_id=case_node.pk).cases[0].stale


def test_hidden_unknown_malformed_and_foreign_ids_are_the_same_not_found(memory: Office) -> None:
    hidden = Node.objects.get(kind="case", ref_id=memory.matters[TERM].pk)
    foreign = Node.objects.get(kind="case", ref_id=memory.matters[SUED].pk)
    errors = set()
    for node_id in (hidden.pk, foreign.pk, uuid.uuid4(), "not-a-uuid", None, 42):
        with pytest.raises(access.NotFound) as info:
            services.node_brief(viewer=memory.people["owner"], node_id=node_id)
        errors.add((type(info.value), str(info.value), info.value.args))
    assert len(errors) == 1


def test_a_matter_without_a_summary_gets_one_on_the_spot_or_header_facts(memory: Office, monkeypatch) -> None:
    owner = memory.people["owner"]
    fresh = MatterFactory(office=memory.office, lead=owner, reference="2026/900", name="New matter",
                          synopsis="Fresh intake.", client=PartyFactory(office=memory.office))  # fmt: skip
    services.graph_sync_case(case_id=fresh.pk)
    fresh_node = Node.objects.get(kind="case", ref_id=fresh.pk)
    monkeypatch.setattr("graph_memory.viewer.briefs.ensure_summary", lambda **kwargs: None)
    bare = services.node_brief(viewer=owner, node_id=fresh_node.pk)
    assert bare.cases[0].summary == "" and briefs.NO_SUMMARY in bare.text
    assert "2026/900 — New matter" in bare.text and "Fresh intake." in bare.text
    monkeypatch.undo()
    written = services.node_brief(viewer=owner, node_id=fresh_node.pk)
    assert written.cases[0].summary == CaseSummary.objects.get(case=fresh).text != ""


def row_counts() -> dict[str, int]:
    tables = sorted(m._meta.db_table for m in apps.get_models(include_auto_created=True))
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(f"SELECT '{t}', count(*) FROM {t}" for t in tables))
        return dict(cursor.fetchall())


def test_a_brief_writes_no_rows_anywhere(memory: Office) -> None:
    nodes = [node("client", "Meridian Foods Corp.", memory), node("counterparty", "Jordan Lee", memory),
             Node.objects.get(kind="lawyer", ref_id=memory.people["owner"].pk)]  # fmt: skip
    before = row_counts()
    for viewer in memory.people.values():
        for n in nodes:
            try:
                services.node_brief(viewer=viewer, node_id=n.pk)
            except access.NotFound:
                pass
    assert row_counts() == before


def test_order_is_most_recently_active_first_and_has_more_counts_visible_matters_only(memory: Office) -> None:
    office = memory.office
    client = PartyFactory(office=office, name="Quayside Ltd")
    lawyer = AttorneyFactory(office=office, username="lawyer-q")
    mine = [MatterFactory(office=office, client=client, lead=lawyer, reference=f"Q-{i}") for i in range(3)]
    hidden = [MatterFactory(office=office, client=client, reference=f"H-{i}") for i in range(5)]
    services.graph_rebuild_firm(firm_id=office.pk)
    later = mine[1].last_touched.replace(year=2029)
    Matter.objects.filter(pk__in=[mine[0].pk, mine[2].pk]).update(last_touched=later)
    Matter.objects.filter(pk=mine[1].pk).update(last_touched=later.replace(year=2030))
    quayside = node("client", "Quayside Ltd", memory)
    brief = services.node_brief(viewer=lawyer, node_id=quayside.pk, limit=2)
    assert [c.key for c in brief.cases] == ["Q-1", "Q-0"] and brief.has_more
    full = services.node_brief(viewer=lawyer, node_id=quayside.pk, limit=3)
    assert [c.key for c in full.cases] == ["Q-1", "Q-0", "Q-2"] and not full.has_more
    assert all(m.reference not in full.text for m in hidden)
    assert services.node_brief(viewer=memory.people["firm_admin"], node_id=quayside.pk, limit=3).has_more


@pytest.mark.parametrize("cases", [3, 40])
def test_brief_query_count_does_not_grow_with_matters(memory: Office, cases: int, django_assert_num_queries) -> None:
    office = memory.office
    client = PartyFactory(office=office, name="Countable GmbH")
    lawyer = AttorneyFactory(office=office, username="counter")
    for i in range(cases):
        matter = MatterFactory(office=office, client=client, reference=f"C-{i:03d}")
        Assignment.objects.create(matter=matter, attorney=lawyer)
        CaseSummary.objects.update_or_create(case=matter, defaults={"firm": office, "text": f"Summary {i}.", "stale": False})
    services.graph_rebuild_firm(firm_id=office.pk)
    target = node("client", "Countable GmbH", memory)
    with django_assert_num_queries(2):  # as in the reference host (tests/viewer/test_briefs.py)
        brief = services.node_brief(viewer=lawyer, node_id=target.pk, limit=100)
    assert len(brief.cases) == cases
    enquiry = Matter.objects.get(reference=ENQ)
    # No client yet: the matter is on the map all the same, with no "is for" edge.
    enquiry_node = Node.objects.get(kind="case", ref_id=enquiry.pk)
    assert not enquiry_node.out_edges.filter(kind="for_client").exists()


def test_a_matters_brief_shows_its_live_due_dates_and_unpaid_bills(memory: Office) -> None:
    """The worked example's `live_fact_annotations`: read now, beside last night's summary."""
    acq = memory.matters[ACQ]
    case_node = Node.objects.get(kind="case", ref_id=acq.pk)
    Bill.objects.filter(matter=acq, number="RE-0057").update(state=Bill.State.ISSUED)
    brief = services.node_brief(viewer=memory.people["teammate"], node_id=case_node.pk)
    # 10.5 h at 300 and 2 h at 250; the met kick-off call is no open deadline.
    assert brief.cases[0].live_facts == ("open deadline “Target signing” due 2026-12-15", "unpaid bill RE-0057: EUR 3,650.00")
    assert "Live from the records now: open deadline “Target signing” due 2026-12-15" in brief.text
    DueDate.objects.filter(matter=acq, label="Target signing").update(state=DueDate.State.MET)
    after = services.node_brief(viewer=memory.people["teammate"], node_id=case_node.pk)
    assert after.cases[0].live_facts == ("unpaid bill RE-0057: EUR 3,650.00",)
