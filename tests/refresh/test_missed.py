"""A failure of the memory never fails the host's write; the next nightly run redoes what it missed.

graph_memory/receivers.py (the receivers) and graph_memory/refresh/missed.py (the record and the repair).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.db import ProgrammingError, connection, transaction
from django.test import Client as HttpClient
from django.urls import reverse

from graph_memory import services
from graph_memory.map.graph import graph_drift_firm
from graph_memory.models import CaseSummary, Edge, MissedChange, Node
from practice.memory_adapter import PracticeMemoryAdapter
from practice.models import Case, CaseTeamMember, Note
from tests.conftest import Personas
from tests.factories import NoteFactory


def works_on(personas: Personas, user: Any) -> bool:
    return Edge.objects.filter(case_id=personas.case.pk, kind="works_on", source__ref_id=user.pk).exists()


def failure_logged(caplog: pytest.LogCaptureFixture, exc_type: type[BaseException], text: str) -> logging.LogRecord:
    [record] = [r for r in caplog.records if r.name == "graph_memory.refresh.missed" and r.levelno == logging.ERROR]
    assert record.exc_info is not None and record.exc_info[0] is exc_type, record.exc_info  # its own exception
    assert text in record.getMessage()
    return record


def health(user: Any) -> str:
    http = HttpClient()
    http.force_login(user)
    response = http.get(reverse("admin:graph_memory_health"))
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.django_db
def test_an_adapter_method_that_raises_after_a_save_never_reaches_the_host_and_the_night_repairs_the_map(
    personas: Personas, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
    django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    services.graph_rebuild_firm(firm_id=personas.firm.pk)

    def unreadable(self: Any, **scope: Any) -> Any:
        raise RuntimeError("team table unreadable")

    monkeypatch.setattr(PracticeMemoryAdapter, "graph_team_links", unreadable)
    with django_capture_on_commit_callbacks(execute=True):
        member = CaseTeamMember.objects.create(case=personas.case, user=personas.outsider, firm=personas.firm)
    assert CaseTeamMember.objects.filter(pk=member.pk).exists()  # the host's write stands
    assert not works_on(personas, personas.outsider)
    record = failure_logged(caplog, RuntimeError, "RuntimeError: team table unreadable")
    assert f"(case {personas.case.pk})" in record.getMessage() and "sync the connection map" in record.getMessage()
    [missed] = MissedChange.objects.all()
    assert (missed.firm_id, missed.work, missed.case_ids, missed.error, missed.repaired_at) == (
        personas.firm.pk, "graph", [personas.case.pk], "RuntimeError: team table unreadable", None,
    )  # fmt: skip
    page = health(personas.firm_admin)
    assert '<strong id="gm-missed-open">1</strong>' in page and "RuntimeError: team table unreadable" in page

    monkeypatch.undo()
    run = services.refresh_firm(firm_id=personas.firm.pk)
    assert run.status == "done"
    assert works_on(personas, personas.outsider)
    drift = graph_drift_firm(firm_id=personas.firm.pk)
    assert not (drift.nodes_missing or drift.edges_missing or drift.edges_extra or drift.nodes_extra)
    assert MissedChange.objects.get().repaired_at is not None
    assert '<strong id="gm-missed-open">0</strong>' in health(personas.firm_admin)


@pytest.mark.django_db
def test_a_database_error_inside_the_hosts_transaction_leaves_it_going(
    personas: Personas, caplog: pytest.LogCaptureFixture
) -> None:
    CaseSummary.objects.filter(case=personas.case).update(stale=False)
    with transaction.atomic():
        with connection.cursor() as cursor:  # the memory's table gone, as on a host not migrated yet
            cursor.execute("ALTER TABLE graph_memory_casesummary RENAME TO gm_casesummary_away")
        note = NoteFactory(case=personas.case, text="Counsel confirmed the hearing is on 4 May 2026.")
        # Without a savepoint PostgreSQL would refuse this ("current transaction is aborted").
        assert Note.objects.filter(pk=note.pk).count() == 1
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE gm_casesummary_away RENAME TO graph_memory_casesummary")
    assert Note.objects.filter(pk=note.pk).exists()
    failure_logged(caplog, ProgrammingError, "flag the summary stale")
    [missed] = MissedChange.objects.all()
    assert missed.work == "stale" and missed.case_ids == [personas.case.pk]
    assert missed.error.startswith('ProgrammingError: relation "graph_memory_casesummary" does not exist')
    assert not CaseSummary.objects.get(case=personas.case).stale

    run = services.refresh_firm(firm_id=personas.firm.pk)
    # Flagged again before the run claimed: rewritten the same night, with the note in it.
    assert (run.status, run.rewritten) == ("done", 1)
    assert "4 May 2026" in CaseSummary.objects.get(case=personas.case).text
    assert MissedChange.objects.get().repaired_at is not None


@pytest.mark.django_db
def test_a_label_refresh_that_fails_after_commit_is_redone(
    personas: Personas, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
    django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    services.graph_rebuild_firm(firm_id=personas.firm.pk)
    monkeypatch.setattr(PracticeMemoryAdapter, "graph_label", lambda self, **_: 1 / 0)
    client = personas.case.client
    with django_capture_on_commit_callbacks(execute=True):
        client.name = "Renamed Holdings Ltd"
        client.save()
    failure_logged(caplog, ZeroDivisionError, "ZeroDivisionError: division by zero")
    [missed] = MissedChange.objects.all()
    assert (missed.work, missed.detail, missed.object_id) == ("label", {"kind": "client"}, str(client.pk))
    monkeypatch.undo()
    services.refresh_firm(firm_id=personas.firm.pk)
    assert Node.objects.get(kind="client", ref_id=client.pk).label == "Renamed Holdings Ltd"


@pytest.mark.django_db(transaction=True)
def test_with_no_transaction_open_a_failing_sync_leaves_the_committed_save_alone(
    personas: Personas, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 29's report: the sync ran at once after the save's commit, and its error came out of save().
    services.graph_rebuild_firm(firm_id=personas.firm.pk)
    monkeypatch.setattr(PracticeMemoryAdapter, "graph_case_headers", lambda self, **_: {}["no such column"])
    case = Case.objects.get(pk=personas.case.pk)
    case.title = "Retitled matter"
    case.save()
    assert Case.objects.get(pk=case.pk).title == "Retitled matter"
    failure_logged(caplog, KeyError, "KeyError: 'no such column'")
    assert Node.objects.get(kind="case", ref_id=case.pk).label != f"{case.key} Retitled matter"
    monkeypatch.undo()
    services.refresh_firm(firm_id=personas.firm.pk)
    assert Node.objects.get(kind="case", ref_id=case.pk).label.endswith("Retitled matter")


@pytest.mark.django_db
def test_when_the_cases_were_not_known_the_repair_asks_the_adapter_again(personas: Personas) -> None:
    note = NoteFactory(case=personas.case)
    CaseSummary.objects.filter(case=personas.case).update(stale=False)
    # As `record_failure` keeps a stale flag whose watch failed before naming the cases.
    MissedChange.objects.create(
        firm=personas.firm, work="stale", model="practice.note", object_id=str(note.pk), error="ValueError: x"
    )
    gone = MissedChange.objects.create(
        firm=personas.firm, work="stale", model="practice.note", object_id="999999999", error="ValueError: y"
    )
    result = services.repair_missed_changes(firm_id=personas.firm.pk)
    assert (result.repaired, result.still_open) == (1, 1)
    assert CaseSummary.objects.get(case=personas.case).stale
    # A row that is gone and whose cases were never known cannot be told: it stays open, on the health page.
    assert MissedChange.objects.get(pk=gone.pk).repaired_at is None


@pytest.mark.django_db
def test_changes_no_firm_could_be_told_for_are_redone_by_the_dispatcher(personas: Personas) -> None:
    CaseTeamMember.objects.create(case=personas.case, user=personas.outsider, firm=personas.firm)  # no sync: no commit
    assert not works_on(personas, personas.outsider)
    MissedChange.objects.create(work="graph", model="practice.caseteammember", error="ValueError: z")
    result = services.repair_missed_changes(firm_id=None)
    assert result.repaired == 1 and personas.firm.pk in result.rebuilt and works_on(personas, personas.outsider)


@pytest.mark.django_db
def test_a_team_cleared_from_the_lawyers_side_while_the_adapter_fails_is_resynced_at_night(
    personas: Personas, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
    django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    services.graph_rebuild_firm(firm_id=personas.firm.pk)
    assert works_on(personas, personas.teammate)

    def broken(self: Any, instance: Any) -> list[int]:
        raise LookupError("no link table")

    monkeypatch.setattr(PracticeMemoryAdapter, "graph_linked_case_ids", broken)
    with django_capture_on_commit_callbacks(execute=True):
        personas.teammate.team_cases.clear()  # m2m_changed from the far side: the cases are asked of the adapter
    assert not CaseTeamMember.objects.filter(user=personas.teammate).exists()
    failure_logged(caplog, LookupError, "LookupError: no link table")
    [missed] = MissedChange.objects.all()
    # Its cases unknown, the firm is the lawyer's own (the adapter's firm_field_of).
    assert (missed.work, missed.case_ids, missed.firm_id) == ("graph", [], personas.firm.pk)
    assert not works_on(personas, personas.teammate)  # the link rows' own deletions synced the case
    monkeypatch.undo()
    services.refresh_firm(firm_id=personas.firm.pk)
    assert MissedChange.objects.get().repaired_at is not None and not works_on(personas, personas.teammate)
