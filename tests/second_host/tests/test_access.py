"""The wall in the second host: one rule in graph_memory.wall.access, fed by this host's `member_case_ids` (no guardian)."""

from __future__ import annotations

import pytest

from graph_memory.adapter import get_adapter
from graph_memory.wall import access
from tests.second_host.conftest import Personas
from tests.second_host.factories import AttorneyFactory, LawOfficeFactory, MatterFactory
from tests.second_host.matters.memory_adapter import MattersMemoryAdapter
from tests.second_host.matters.models import Assignment
from tests.second_host.offices.models import Attorney

pytestmark = pytest.mark.django_db


def ids(viewer: Attorney) -> set[int]:
    return set(access.visible_cases(viewer).values_list("pk", flat=True))


def test_the_adapter_in_use_is_this_hosts_and_it_uses_no_guardian() -> None:
    adapter = get_adapter()
    assert type(adapter) is MattersMemoryAdapter
    assert adapter.guardian_permissions() is None


def test_each_persona_sees_what_the_rule_says(personas: Personas) -> None:
    p = personas
    second = MatterFactory(office=p.office, lead=p.teammate)
    elsewhere = MatterFactory(office=p.other_firm_admin.office)
    assert ids(p.owner) == {p.matter.pk}
    assert ids(p.teammate) == {p.matter.pk, second.pk}
    assert ids(p.outsider) == set()
    assert ids(p.firm_admin) == {p.matter.pk, second.pk}  # manages_office: the whole office
    assert ids(p.other_firm_admin) == {elsewhere.pk}  # firms never see each other, admins included
    assert not access.can_open_case(p.other_firm_admin, case_id=p.matter.pk)


def test_a_reviewer_may_open_the_matter_and_losing_the_assignment_closes_it(personas: Personas) -> None:
    p = personas
    review = Assignment.objects.create(matter=p.matter, attorney=p.outsider, capacity=Assignment.Capacity.REVIEWER)
    assert ids(p.outsider) == {p.matter.pk}
    review.delete()
    assert ids(p.outsider) == set()
    p.matter.team.remove(p.teammate)
    assert ids(p.teammate) == set()


def test_inactive_anonymous_and_officeless_viewers_see_nothing(personas: Personas) -> None:
    p = personas
    p.owner.is_active = False
    operator = AttorneyFactory(office=None, username="platform", is_superuser=True, is_staff=True)
    for viewer in (p.owner, operator, None):
        assert ids(viewer) == set()
        assert access.visible_case_ids_sql(viewer) is None


def test_an_attorney_of_another_office_on_the_matter_still_sees_only_their_office(personas: Personas) -> None:
    # Bad data (a cross-office assignment) never crosses the firm line: the firm filter is the access module's.
    p = personas
    foreign = AttorneyFactory(office=LawOfficeFactory(code="kanzlei-west"))
    Assignment.objects.create(matter=p.matter, attorney=foreign)
    assert ids(foreign) == set()


def test_hidden_unknown_and_malformed_cases_are_the_same_not_found(personas: Personas) -> None:
    p = personas
    raised = []
    for case_id in (p.matter.pk, 10**12, "x", None, -1, 2**70):
        with pytest.raises(access.NotFound) as info:
            access.get_case_for_viewer(p.outsider, case_id=case_id)
        raised.append((type(info.value), str(info.value), info.value.args))
    assert len(set(raised)) == 1
    assert access.get_case_for_viewer(p.owner, reference=p.matter.reference) == p.matter
    with pytest.raises(access.NotFound):
        access.get_case_for_viewer(p.outsider, reference=p.matter.reference)


def test_visible_cases_is_one_query(personas: Personas, django_assert_num_queries) -> None:
    for viewer in (personas.owner, personas.firm_admin, personas.outsider):
        with django_assert_num_queries(1):
            list(access.visible_cases(viewer))
