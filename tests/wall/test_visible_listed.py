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
from tests.factories import CaseFactory, ClientFactory, FirmFactory, UserFactory
from tests.wall.grant_worlds import grant, some, two_firms

pytestmark = pytest.mark.django_db


def _ids(viewer: User, part: str) -> list[int]:
    viewed = scope.scope_of(viewer)
    return [row[0] for row in sql(f"SELECT v.id FROM ({{{part}}}) AS v(id)", **scope._given(viewed, {})).rows()]


@pytest.mark.parametrize("seed", range(6))
def test_it_names_the_cases_visible_names_each_once(seed: int) -> None:
    rng = random.Random(seed)
    firm, mine, theirs = two_firms(20, 6)
    lawyer, teammate = UserFactory(firm=firm), UserFactory(firm=firm)
    for user in (lawyer, teammate):
        grant(user, some(rng, mine, 10, theirs, 6))
    for g in range(3):
        group = Group.objects.create(name=f"listed-{seed}-{g}")
        # Overlapping the lawyer's own grants and each other's, with another firm's cases among them.
        grant(group, some(rng, mine, 14, theirs, 6))
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
