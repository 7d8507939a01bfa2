"""The write-back guard (issue 31): a note carrying another case's facts into a case whose audience differs
is refused, recorded and never stored; clean notes, shared facts and hidden cases' facts are not refused."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client as HttpClient

from graph_memory.api.mcp_server import call_endpoint
from graph_memory.models import NoteRefusal
from graph_memory.viewer.notes import NoteInvalid, note_file
from graph_memory.wall import access
from graph_memory.wall.writeback.guard import NoteCrossesWall, crossing_case_ids_sql, note_crossings
from practice.models import CaseTeamMember, Note
from tests.guard_world import CANARY, CANARY_SENTENCE, SENTENCE_A, SENTENCE_B, GuardWorld, build_guard_world, note_body

pytestmark = pytest.mark.django_db

# The issue's crossing: B's client, amount and a distinctive sentence, filed into A.
CROSSING = (
    "Kept from today's chat. Brightwater Shipping agreed the EUR 256,580 figure. "
    f"{SENTENCE_B} Calloway Port Services must be told by 14 February 2027."
)
# B's amount as it is written anywhere (256,580 / 256.580 / 256580 / 256 580).
B_AMOUNT = re.compile(r"256[ ,.]?580")
CLEAN = f"For Calloway Port Services: {SENTENCE_A} Invoice INV-A-5501 (EUR 48,200) is due; claim by 2027-02-14."


@pytest.fixture
def world(settings: Any) -> GuardWorld:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "NOTE_RATE": None}
    cache.clear()
    return build_guard_world()


def post(world: GuardWorld, user: Any, case: Any, body: dict[str, Any]) -> Any:
    client = HttpClient(headers={"Authorization": f"Token {world.token(user)}"})
    return client.post(
        f"/api/memory/cases/{world.node_id(case)}/notes/", data=json.dumps(body), content_type="application/json"
    )


def test_the_issues_crossing_is_refused_recorded_and_theo_sees_nothing_of_b(world: GuardWorld) -> None:
    notes = Note.objects.count()
    response = post(world, world.lena, world.a, note_body(CROSSING))
    assert response.status_code == 409, response.content
    error = response.json()["error"]
    assert error["code"] == "crosses_wall" and error["field"] == "text"
    message = error["message"]
    # What matched, and from which of Lena's cases (she may open it).
    assert "2026-102" in message and "Ballast Tank Cargo Loss" in message
    assert "Brightwater Shipping Ltd" in message and "256,580" in message and "ballast tanks were never inspected" in message
    # A's own facts are not named.
    assert "Calloway" not in message and "2027-02-14" not in message
    assert Note.objects.count() == notes
    (refusal,) = NoteRefusal.objects.all()
    assert (refusal.firm_id, refusal.case_id, refusal.filer_id) == (world.firm.pk, world.a.pk, world.lena.pk)
    assert refusal.source_case_ids == [world.b.pk] and {"party", "amount", "run"} <= set(refusal.kinds)
    # Theo reads A: nothing of B is in it.
    theo = HttpClient(headers={"Authorization": f"Token {world.token(world.theo)}"})
    texts = json.dumps(theo.get(f"/api/memory/nodes/{world.node_id(world.a)}/brief/").json())
    # The amount in any of its spellings: a bare "256" also occurs in timestamps' microseconds.
    assert "Brightwater" not in texts and not B_AMOUNT.search(texts)
    assert not Note.objects.filter(case=world.a, text__contains="Brightwater").exists()


def test_a_clean_note_is_filed(world: GuardWorld) -> None:
    response = post(world, world.lena, world.a, note_body(CLEAN))
    assert response.status_code == 201, response.content
    assert not NoteRefusal.objects.exists()


def test_the_same_facts_are_fine_where_everyone_may_open_both_cases(world: GuardWorld) -> None:
    CaseTeamMember.objects.create(case=world.b, user=world.theo, firm_id=world.firm.pk)
    assert post(world, world.lena, world.a, note_body(CROSSING)).status_code == 201
    # ... and into B, whose audience (Lena, Theo) may open A too.
    assert post(world, world.lena, world.b, note_body(CLEAN)).status_code == 201


def test_into_b_a_facts_cross_when_b_is_narrower(world: GuardWorld) -> None:
    # B's audience is Lena alone (and the admin): she may open A, so nothing crosses into B.
    assert post(world, world.lena, world.b, note_body(CLEAN)).status_code == 201


def test_a_fact_the_target_case_holds_too_is_not_a_crossing(world: GuardWorld) -> None:
    world.b.client = world.a.client
    world.b.save()
    from graph_memory import services

    services.graph_rebuild_firm(firm_id=world.firm.pk)
    assert post(world, world.lena, world.a, note_body("Calloway Port Services Ltd called about the berth.")).status_code == 201


def test_a_hidden_cases_canary_is_stored_like_any_text(world: GuardWorld) -> None:
    # Lena may not open H: its facts are never a match source, so a refusal cannot leak that they exist.
    assert not access.can_open_case(world.lena, case_id=world.h.pk)
    text = f"Someone mentioned {CANARY}: {CANARY_SENTENCE} Oriel Fabrications plc, matter 2026-103."
    response = post(world, world.lena, world.a, note_body(text))
    assert response.status_code == 201, response.content
    assert not NoteRefusal.objects.exists()
    # Nor does the guard read H at all, whoever files.
    matches, cases = note_crossings(holders=[world.lena], case_id=world.a.pk, firm_id=world.firm.pk, text=text)
    assert matches == [] and cases == {}


def test_crossing_cases_follow_the_wall(world: GuardWorld) -> None:
    def crossing(filer: Any, case: Any) -> set[int]:
        sql = crossing_case_ids_sql(holders=[filer], case_id=case.pk, firm_id=world.firm.pk)
        if sql is None:
            return set()
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute(*sql)
            return {r[0] for r in cursor.fetchall()}

    assert crossing(world.lena, world.a) == {world.b.pk}  # Theo may not open B
    assert crossing(world.lena, world.b) == set()  # only Lena (and the admin) may open B
    assert crossing(world.theo, world.a) == set()  # Theo's other case, S, Lena may open too
    # The admin may open every case; into A, all that Theo may not open crosses (B and H).
    assert crossing(world.admin, world.a) == {world.b.pk, world.h.pk}


def test_the_service_refuses_and_mcp_answers_the_same(world: GuardWorld) -> None:
    with pytest.raises(NoteCrossesWall) as refused:
        note_file(viewer=world.lena, case_node_id=world.node_id(world.a), title="t", text=CROSSING)
    assert {m.case_id for m in refused.value.matches} == {world.b.pk}
    status, body = call_endpoint(world.lena, "file_note", {"case_id": world.node_id(world.a), **note_body(CROSSING)})
    assert status == 409 and json.loads(body)["error"]["code"] == "crosses_wall"
    assert NoteRefusal.objects.count() == 2


def test_citations_may_name_only_records_of_the_case(world: GuardWorld) -> None:
    b_invoice = world.b.invoices.get().key
    a_invoice = world.a.invoices.get().key
    response = post(world, world.lena, world.a, note_body(f"See [invoice:{b_invoice}] for the figure."))
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "text" and f"invoice:{b_invoice}" in response.json()["error"]["message"]
    response = post(world, world.lena, world.a, note_body("Checked.", title=f"About invoice:{b_invoice}"))
    assert response.status_code == 400 and response.json()["error"]["field"] == "title"
    ok = post(world, world.lena, world.a, note_body(f"See [invoice:{a_invoice}] and case:header."))
    assert ok.status_code == 201, ok.content
    with pytest.raises(NoteInvalid):
        note_file(viewer=world.lena, case_node_id=world.node_id(world.a), title="t", text="draft:nope")


def test_lint_reports_a_note_filed_before_the_guard_that_would_cross(world: GuardWorld) -> None:
    from graph_memory.lint import lint_firm
    from graph_memory.models import CaseSummary, LintFinding
    from tests.factories import NoteFactory

    old = NoteFactory(case=world.a, key="before-guard", text=CROSSING)
    clean = NoteFactory(case=world.a, key="clean-one", text=CLEAN)
    for case, keys in ((world.a, ["before-guard", "clean-one"]), (world.b, [])):
        CaseSummary.objects.update_or_create(
            case=case, defaults={"firm_id": world.firm.pk, "source_ids": [f"note:{k}" for k in keys]}
        )
    run = lint_firm(firm_id=world.firm.pk, trigger="command")
    assert run.counts["crossing_note"] == 1
    (finding,) = LintFinding.objects.filter(kind="crossing_note")
    assert finding.case_id == world.a.pk and finding.severity == "high" and f"note:{old.key}" in finding.message
    assert "2026-102" in finding.message and "Brightwater" not in finding.message
    assert not B_AMOUNT.search(finding.message)
    assert finding.records[0] == {"type": "source", "id": "note:before-guard"} and clean.key not in finding.message


def test_a_group_grant_puts_its_members_in_the_audience(world: GuardWorld) -> None:
    from django.contrib.auth.models import Group

    from practice.models import CaseGroupObjectPermission
    from practice.permissions import view_case_permission

    CaseTeamMember.objects.filter(case=world.a, user=world.theo).delete()
    assert [u.pk for u in access.case_audience(case_id=world.a.pk, firm_id=world.firm.pk)] == [world.lena.pk]
    assert note_crossings(holders=[world.lena], case_id=world.a.pk, firm_id=world.firm.pk, text=CROSSING) == ([], {})
    group = Group.objects.create(name="harbour-team")
    world.theo.groups.add(group)
    CaseGroupObjectPermission.objects.create(content_object=world.a, group=group, permission=view_case_permission())
    assert access.can_open_case(world.theo, case_id=world.a.pk)
    assert [u.pk for u in access.case_audience(case_id=world.a.pk, firm_id=world.firm.pk)] == sorted(
        [world.lena.pk, world.theo.pk]
    )
    assert post(world, world.lena, world.a, note_body(CROSSING)).status_code == 409


def test_the_guard_costs_a_fixed_number_of_statements(world: GuardWorld, django_assert_num_queries: Any) -> None:
    from tests.factories import CaseFactory, InvoiceFactory, NoteFactory

    def check() -> None:
        note_crossings(holders=[world.lena], case_id=world.a.pk, firm_id=world.firm.pk, text=CROSSING)

    with django_assert_num_queries(24):
        check()
    for n in range(5):  # five more crossing cases, with records
        case = CaseFactory(firm=world.firm, owner=world.lena)
        InvoiceFactory(case=case)
        NoteFactory(case=case, text=f"Another matter, number {n}.")
    with django_assert_num_queries(24):
        check()
