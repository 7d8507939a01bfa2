"""Stale flags from the second host's records (its adapter's `changes()`), and the nightly per-office rewrite."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from graph_memory.models import AICall, CaseSummary, RefreshRun, SummaryVersion
from graph_memory.refresh import mark_stale, refresh_firm
from graph_memory.tasks import refresh_all_firms_task
from tests.openai_server import OpenAIServer
from tests.second_host.factories import (
    AttorneyFactory,
    BillFactory,
    DueDateFactory,
    FilingFactory,
    LawOfficeFactory,
    MatterFactory,
    MemoFactory,
    PartyFactory,
    TimeEntryFactory,
)
from tests.second_host.matters.models import Assignment, Engagement, Filing, FilingPage, Matter, Party
from tests.second_host.world import ACQ, LEASE, TERM, Office, build_office

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def refresh_settings(settings: Any) -> Any:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "extractive", "EMBEDDER": "none"}
    return settings


def generation(matter: Matter) -> int:
    return CaseSummary.objects.filter(case=matter).values_list("generation", flat=True).first() or 0


def settle(*matters: Matter) -> None:
    """As if a rewrite just succeeded: flag down, counter kept."""
    CaseSummary.objects.filter(case__in=matters).update(stale=False, stale_since=None)


def flagged(matter: Matter) -> bool:
    return CaseSummary.objects.filter(case=matter, stale=True).exists()


def test_marking_is_one_statement_and_creates_rows_with_the_matters_office(django_assert_num_queries) -> None:
    matters = MatterFactory.create_batch(3)
    CaseSummary.objects.all().delete()
    with django_assert_num_queries(1):
        assert mark_stale(case_ids=[m.pk for m in matters] + [999_999_999]) == 3
    for matter in matters:
        row = CaseSummary.objects.get(case=matter)
        assert (row.firm_id, row.stale, row.generation, row.text) == (matter.office_id, True, 1, "")
    with django_assert_num_queries(1):
        assert mark_stale(case_ids=Matter.objects.filter(pk=matters[0].pk)) == 1


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda m: MemoFactory(matter=m), id="memo"),
        pytest.param(lambda m: DueDateFactory(matter=m), id="due-date"),
        pytest.param(lambda m: BillFactory(matter=m), id="bill"),
        pytest.param(lambda m: TimeEntryFactory(matter=m), id="time-entry"),
        pytest.param(lambda m: FilingPage.objects.create(filing=FilingFactory(matter=m, pages=[]), number=1), id="page"),
    ],
)
def test_records_flag_on_add_change_and_delete(make: Any) -> None:
    matter = MatterFactory()
    settle(matter)
    record = make(matter)
    assert flagged(matter)
    settle(matter)
    before = generation(matter)
    record.save()
    assert flagged(matter) and generation(matter) == before + 1
    settle(matter)
    record.delete()
    assert flagged(matter) and generation(matter) == before + 2


def test_a_time_entry_moved_onto_a_bill_flags_the_matter() -> None:
    bill = BillFactory(entries=[("1", "100")])
    entry = TimeEntryFactory(matter=bill.matter, hours=Decimal("3"))
    settle(bill.matter)
    entry.bill = bill
    entry.save()
    assert flagged(bill.matter)


def test_filings_flag_only_when_processed_or_leaving_processed() -> None:
    matter = MatterFactory()
    filing = FilingFactory(matter=matter, state=Filing.State.RECEIVED, pages=[])
    settle(matter)
    filing.state = Filing.State.SCANNING
    filing.save()
    assert not flagged(matter)  # nothing a summary reads has changed
    filing.state = Filing.State.PROCESSED
    filing.save()
    assert flagged(matter)
    settle(matter)
    filing.state = Filing.State.REJECTED
    filing.save()
    assert flagged(matter)  # a processed filing left the slice
    settle(matter)
    FilingFactory(matter=matter, state=Filing.State.RECEIVED, pages=[]).delete()
    assert not flagged(matter)


def test_header_changes_flag_and_other_saves_do_not(personas: Any) -> None:
    matter = personas.matter
    settle(matter)
    matter.save()  # nothing changed
    matter.lead = personas.teammate  # the lead is the map's business, not the summary's
    matter.save()
    assert not flagged(matter)
    for field, value in (("stage", Matter.Stage.DORMANT), ("name", "Renamed"), ("synopsis", "New synopsis."),
                         ("opened_on", dt.date(2025, 1, 1)), ("reference", "M/NEW")):  # fmt: skip
        setattr(matter, field, value)
        matter.save()
        assert flagged(matter), field
        settle(matter)


def test_parties_added_by_m2m_changed_and_removed_flag(personas: Any) -> None:
    matter, office = personas.matter, personas.office
    settle(matter)
    party = PartyFactory(office=office)
    matter.parties.add(party, through_defaults={"role": Engagement.Role.ADVERSE})  # bulk insert: m2m_changed only
    assert flagged(matter)
    settle(matter)
    matter.parties.remove(party)
    assert flagged(matter)
    settle(matter)
    Engagement.objects.create(matter=matter, party=party)
    assert flagged(matter)
    settle(matter)
    party.matters.clear()  # from the party's side
    assert flagged(matter)


def test_renaming_a_party_flags_every_matter_it_is_engaged_on() -> None:
    office = LawOfficeFactory()
    party = PartyFactory(office=office, name="Old Name AG")
    client_of = MatterFactory(office=office, client=party)
    against = MatterFactory(office=office, adverse=[party])
    untouched = MatterFactory(office=office)
    settle(client_of, against, untouched)
    party.form = Party.Form.PERSON
    party.save()
    assert not flagged(client_of)  # only the name is quoted
    party.name = "New Name AG"
    party.save()
    assert flagged(client_of) and flagged(against) and not flagged(untouched)


def test_team_changes_do_not_flag_the_summary(personas: Any) -> None:
    matter = personas.matter
    settle(matter)
    matter.team.add(personas.outsider)
    Assignment.objects.create(matter=matter, attorney=AttorneyFactory(office=personas.office))
    matter.team.remove(personas.teammate)
    assert not flagged(matter)


def test_deleting_a_matter_leaves_no_summary_behind(personas: Any) -> None:
    matter = personas.matter
    MemoFactory(matter=matter)
    FilingFactory(matter=matter)
    BillFactory(matter=matter, entries=[("1", "1")])
    matter.delete()
    assert not CaseSummary.objects.filter(case_id=matter.pk).exists()


def test_marking_never_calls_a_model(openai_server: OpenAIServer) -> None:
    matter = MatterFactory()
    for n in range(20):
        MemoFactory(matter=matter, body=f"Note {n}.")
    assert openai_server.calls() == 0 and not AICall.objects.exists()
    assert generation(matter) == 22  # the new matter, its client engagement, then 20 memos


# --- the nightly rewrite ----------------------------------------------------------------------------


def test_the_nightly_refresh_rewrites_each_flagged_matter_once(settings: Any) -> None:
    world = build_office()
    for reference in (ACQ, LEASE):
        memo = MemoFactory(matter=world.matters[reference])
        for n in range(10):
            memo.body = f"Revision {n}."
            memo.save()
    run = refresh_firm(firm_id=world.office.pk)
    nord = Matter.objects.filter(office=world.office).count()
    assert (run.status, run.claimed, run.rewritten, run.failed, run.skipped) == ("done", nord, nord, 0, 0)
    assert not CaseSummary.objects.filter(firm_id=world.office.pk, stale=True).exists()
    assert SummaryVersion.objects.filter(case=world.matters[ACQ]).count() == 1  # eleven edits, one rewrite
    assert CaseSummary.objects.get(case=world.matters["S/001"]).stale  # another office: its own run
    assert RefreshRun.objects.filter(firm=world.other).count() == 0
    again = refresh_firm(firm_id=world.office.pk)
    assert (again.claimed, again.rewritten) == (0, 0)
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "NIGHTLY_BATCH_SIZE": 1}
    MemoFactory(matter=world.matters[TERM])
    MemoFactory(matter=world.matters[LEASE])
    capped = refresh_firm(firm_id=world.office.pk)
    assert (capped.claimed, capped.rewritten, capped.skipped) == (1, 1, 1)


def test_the_nightly_entry_point_runs_one_refresh_per_office(django_capture_on_commit_callbacks) -> None:
    world = build_office()
    with django_capture_on_commit_callbacks(execute=True):
        assert refresh_all_firms_task() == sorted([world.office.pk, world.other.pk])
    assert set(RefreshRun.objects.values_list("firm_id", "status")) == {(world.office.pk, "done"), (world.other.pk, "done")}
    assert not CaseSummary.objects.filter(stale=True).exists()


def test_the_refresh_command_takes_the_office_code(capsys) -> None:
    world: Office = build_office()
    call_command("refresh_summaries", "--firm", "kanzlei-sued")
    out = capsys.readouterr().out
    assert out.startswith("kanzlei-sued: run ") and "rewritten=1" in out
    assert CaseSummary.objects.filter(firm_id=world.office.pk, stale=True).count() == 4
    with pytest.raises(CommandError, match="no firm named 'nope'"):
        call_command("refresh_summaries", "--firm", "nope")
