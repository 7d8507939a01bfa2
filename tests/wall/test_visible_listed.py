"""`{visible_listed}` (access.visible_listed_sql): the wall's cases in the form that lists them all at once.

It must name exactly the cases `{visible}` names, each once: the memory index counts its rows for the
total a lawyer is shown, and every read that lists their cases (`VISIBLE_ONCE`) starts from it.
"""

from __future__ import annotations

import random

import pytest
from django.contrib.auth.models import Group

from accounts.models import User
from graph_memory.plumbing.stmt import sql
from graph_memory.wall import scope
from practice.models import CaseGroupObjectPermission, CaseUserObjectPermission
from practice.permissions import view_case_permission
from tests.factories import CaseFactory, ClientFactory, FirmFactory, UserFactory

pytestmark = pytest.mark.django_db


def _ids(viewer: User, part: str) -> list[int]:
    viewed = scope.scope_of(viewer)
    return [row[0] for row in sql(f"SELECT v.id FROM ({{{part}}}) AS v(id)", **scope._given(viewed, {})).rows()]


@pytest.mark.parametrize("seed", range(6))
def test_it_names_the_cases_visible_names_each_once(seed: int) -> None:
    rng = random.Random(seed)
    firm, other = FirmFactory(), FirmFactory()
    mine = [CaseFactory(firm=firm, client=ClientFactory(firm=firm)) for _ in range(20)]
    theirs = [CaseFactory(firm=other, client=ClientFactory(firm=other)) for _ in range(6)]
    lawyer, teammate = UserFactory(firm=firm), UserFactory(firm=firm)
    permission = view_case_permission()
    for user in (lawyer, teammate):
        own = rng.sample(mine, rng.randint(0, 10)) + rng.sample(theirs, rng.randint(0, 6))
        CaseUserObjectPermission.objects.bulk_create(
            CaseUserObjectPermission(content_object=c, user=user, permission=permission) for c in own
        )
    for g in range(3):
        group = Group.objects.create(name=f"listed-{seed}-{g}")
        # Overlapping the lawyer's own grants and each other's, with another firm's cases among them.
        granted = rng.sample(mine, rng.randint(0, 14)) + rng.sample(theirs, rng.randint(0, 6))
        CaseGroupObjectPermission.objects.bulk_create(
            CaseGroupObjectPermission(content_object=c, group=group, permission=permission) for c in granted
        )
        if g < 2:
            lawyer.groups.add(group)
        if g == 2 or rng.random() < 0.5:
            teammate.groups.add(group)
    for viewer in (lawyer, teammate):
        listed, visible = _ids(viewer, "visible_listed"), _ids(viewer, "visible")
        assert len(listed) == len(set(listed)), "a case named twice would be counted twice"
        assert sorted(listed) == sorted(visible)
        assert not {c.pk for c in theirs} & set(listed)


def test_a_firm_admin_and_a_lawyer_with_nothing() -> None:
    firm = FirmFactory()
    cases = [CaseFactory(firm=firm, client=ClientFactory(firm=firm)) for _ in range(3)]
    CaseFactory(firm=FirmFactory())
    admin = UserFactory(firm=firm, role=User.Role.ADMIN)
    assert sorted(_ids(admin, "visible_listed")) == sorted(c.pk for c in cases)
    assert _ids(UserFactory(firm=firm), "visible_listed") == []
