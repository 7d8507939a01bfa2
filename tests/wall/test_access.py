"""The wall: who may open which case."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from graph_memory.wall import access
from practice.models import Case, CaseTeamMember
from tests.cast import Cast, stranger
from tests.conftest import Personas
from tests.factories import CaseFactory, ClientFactory, CounterpartyFactory, FirmFactory, UserFactory

pytestmark = pytest.mark.django_db


def visible_keys(user) -> set[str]:
    return set(access.visible_cases(user).values_list("key", flat=True))


def test_each_place_of_the_cast_against_its_case(cast: Cast) -> None:
    """Run for each cast (the personas' firm, the demo firm's users): the places mean the same in both."""
    key = cast.case.key
    assert key in visible_keys(cast.owner)
    assert key in visible_keys(cast.teammate)
    assert key in visible_keys(cast.firm_admin)
    assert key not in visible_keys(cast.outsider)
    assert key not in visible_keys(cast.other_firm_admin)


def test_hidden_and_missing_cases_raise_the_same_error(personas: Personas) -> None:
    p = personas
    assert access.get_case_for_viewer(p.owner, case_id=p.case.pk) == p.case
    errors = []
    for case_id in (p.case.pk, 999_999_999, "abc", None, 2**70, -1):
        with pytest.raises(access.NotFound) as info:
            access.get_case_for_viewer(p.outsider, case_id=case_id)
        errors.append((type(info.value), str(info.value)))
    assert len(set(errors)) == 1
    with pytest.raises(access.NotFound):
        access.get_case_for_viewer(p.other_firm_admin, reference=p.case.key)


def test_team_changes_move_permission_immediately(personas: Personas) -> None:
    p = personas
    CaseTeamMember.objects.create(case=p.case, user=p.outsider, firm=p.firm)
    assert p.case.key in visible_keys(p.outsider)
    p.case.team.remove(p.outsider)
    assert p.case.key not in visible_keys(p.outsider)
    p.case.team.add(p.outsider, through_defaults={"firm": p.firm})
    assert p.case.key in visible_keys(p.outsider)
    p.case.team.clear()
    assert p.case.key not in visible_keys(p.outsider)
    assert p.case.key not in visible_keys(p.teammate)
    assert p.case.key in visible_keys(p.owner)


def test_owner_change_moves_permission_immediately(personas: Personas) -> None:
    p = personas
    p.case.owner = p.outsider
    p.case.save()
    assert p.case.key in visible_keys(p.outsider)
    assert p.case.key not in visible_keys(p.owner)


def test_inactive_anonymous_and_firmless_users_see_nothing(personas: Personas) -> None:
    from django.contrib.auth.models import AnonymousUser

    p = personas
    p.owner.is_active = False
    assert visible_keys(p.owner) == set()
    assert visible_keys(AnonymousUser()) == set()
    assert visible_keys(None) == set()
    root = UserFactory(firm=None, username="root", is_superuser=True, is_staff=True)
    assert visible_keys(root) == set()


@pytest.mark.parametrize("case_count", [10, 1000])
def test_visible_cases_is_one_query_whatever_the_firm_size(
    personas: Personas, case_count: int, django_assert_num_queries
) -> None:
    p = personas
    client = ClientFactory(firm=p.firm)
    Case.objects.bulk_create(
        Case(firm=p.firm, key=f"bulk-{i}", title=f"Bulk {i}", opened=p.case.opened, client=client, owner=p.owner)
        for i in range(case_count)
    )
    for viewer in (p.owner, p.firm_admin, p.outsider):
        with django_assert_num_queries(1):
            list(access.visible_cases(viewer))


def test_a_case_cannot_point_at_another_firms_records(personas: Personas) -> None:
    p = personas
    foreign_client = ClientFactory(firm=FirmFactory(slug="elsewhere"))
    foreign_cp = CounterpartyFactory(firm=foreign_client.firm)
    with pytest.raises(IntegrityError), transaction.atomic():
        CaseFactory(firm=p.firm, owner=p.owner, client=foreign_client)
    with pytest.raises(IntegrityError), transaction.atomic():
        CaseFactory(firm=p.firm, owner=p.other_firm_admin)
    with pytest.raises(IntegrityError), transaction.atomic():
        CaseFactory(firm=p.firm, owner=p.owner, counterparties=[foreign_cp])
    with pytest.raises(IntegrityError), transaction.atomic():
        CaseTeamMember.objects.create(case=p.case, user=p.other_firm_admin, firm=p.firm)


DEMO_VISIBILITY = {
    "alice": {"2026-014", "2025-088"},
    "bob": {"2026-031"},
    "evan": {"2026-031"},
    "carol": {"2025-088", "2026-047"},
    "dana": {"2026-014", "2026-031", "2025-088", "2026-047"},
}


def test_demo_firm_visibility(demo_users) -> None:
    for username, expected in DEMO_VISIBILITY.items():
        assert visible_keys(demo_users[username]) == expected, username
    assert visible_keys(stranger()) == set()


def test_cases_with_a_team_can_be_deleted_and_their_permissions_go(personas: Personas) -> None:
    from practice.models import CaseUserObjectPermission

    p = personas
    assert CaseUserObjectPermission.objects.filter(content_object=p.case).count() == 2
    p.case.delete()
    assert not CaseUserObjectPermission.objects.exists()
    assert visible_keys(p.teammate) == set()


def test_deleting_a_team_member_row_revokes_at_once(personas: Personas) -> None:
    p = personas
    CaseTeamMember.objects.filter(case=p.case, user=p.teammate).delete()
    assert p.case.key not in visible_keys(p.teammate)
    CaseTeamMember.objects.get_or_create(case=p.case, user=p.teammate, firm=p.firm)
    CaseTeamMember.objects.get(case=p.case, user=p.teammate).delete()
    assert p.case.key not in visible_keys(p.teammate)


def test_the_permission_id_the_wall_keeps_is_forgotten_after_migrate_and_never_kept_missing(personas: Personas) -> None:
    """The lawyer's statement carries the id of `view_case` read once per process (access._permission_id).
    A missing permission keeps nothing and lets the lawyer see nothing; post_migrate (migrate, flush) forgets it."""
    from django.apps import apps
    from django.contrib.auth.models import Permission
    from django.db.models.signals import post_migrate

    p = personas
    assert p.case.key in visible_keys(p.owner)
    assert access._permission_ids  # kept
    practice = apps.get_app_config("practice")
    post_migrate.send(sender=practice, app_config=practice, verbosity=0, interactive=False, using="default", apps=apps)
    assert access._permission_ids == {}
    Permission.objects.filter(codename="view_case").update(codename="view_case_renamed")
    assert visible_keys(p.owner) == set() and access._permission_ids == {}  # fails closed, keeps nothing
    Permission.objects.filter(codename="view_case_renamed").update(codename="view_case")
    assert p.case.key in visible_keys(p.owner)  # read again, now that it exists
