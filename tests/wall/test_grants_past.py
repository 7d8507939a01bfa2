"""`access.grants_past_sql`: the condition a read asks before counting a lawyer's cases against a cap.

It must be sound (when it holds, the lawyer may open more cases of their firm than the number asked), and
it holds exactly when one source of their grants alone (their own, or one group's) names more cases of
their firm than that: grants to another firm's cases never count, and several sources together never do.
"""

from __future__ import annotations

import random

import pytest
from django.contrib.auth.models import Group

from accounts.models import User
from graph_memory.plumbing.stmt import sql
from graph_memory.wall import access, scope
from tests.factories import CaseFactory, ClientFactory, FirmFactory, UserFactory
from tests.wall.grant_worlds import grant, some, two_firms

pytestmark = pytest.mark.django_db


def _past(viewer, than: int) -> bool:
    """The condition for `viewer` with `than`, as a read's statement gives it."""
    viewed = scope.scope_of(viewer)
    given = scope._given(viewed, {"than": "%(k)s", "k": than, **viewed.grants_past()})
    [[past]] = sql("SELECT {grants_past}", **given).rows()
    return bool(past)


@pytest.mark.parametrize("seed", range(6))
def test_it_holds_exactly_when_one_source_names_more_of_the_firms_cases(seed: int) -> None:
    rng = random.Random(seed)
    firm, mine, theirs = two_firms(24, 8)
    lawyer = UserFactory(firm=firm)
    own = some(rng, mine, 12, theirs, 8)
    grant(lawyer, own)
    sources = [[c for c in own if c.firm_id == firm.pk]]
    for g in range(3):
        group = Group.objects.create(name=f"grants-past-{seed}-{g}")
        granted = some(rng, mine, 16, theirs, 8)
        grant(group, granted)
        if g < 2:  # a member of two of the three groups; the third's grants are not theirs
            lawyer.groups.add(group)
            sources.append([c for c in granted if c.firm_id == firm.pk])
    visible = access.visible_cases(lawyer).count()
    largest = max(len(s) for s in sources)
    assert visible == len({c.pk for s in sources for c in s})
    for than in range(-1, 26):
        past = _past(lawyer, than)
        assert past == (largest > than), (than, largest)
        assert not past or visible > than, (than, visible)  # sound


def test_a_firm_admin_and_a_lawyer_with_nothing_are_never_past() -> None:
    firm = FirmFactory()
    for _ in range(3):
        CaseFactory(firm=firm, client=ClientFactory(firm=firm))
    # A firm admin's cases are never counted from grants: the read counts them (`false` here).
    assert not _past(UserFactory(firm=firm, role=User.Role.ADMIN), 0)
    assert not _past(UserFactory(firm=firm), 0)
