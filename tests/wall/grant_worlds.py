"""Small random worlds of guardian grants, for the tests of the wall's statements over them
(`tests/wall/test_grants_past.py`, `tests/wall/test_visible_listed.py`): a firm's cases and another
firm's, granted to users and groups, so that a grant to a case outside the viewer's firm is among them."""

from __future__ import annotations

import random
from typing import Any

from django.contrib.auth.models import Group

from practice.models import Case, CaseGroupObjectPermission, CaseUserObjectPermission
from practice.permissions import view_case_permission
from tests.factories import CaseFactory, ClientFactory, FirmFactory


def two_firms(mine: int, theirs: int) -> tuple[Any, list[Case], list[Case]]:
    """(the firm, `mine` cases of it, `theirs` cases of another firm)."""
    firm, other = FirmFactory(), FirmFactory()
    return (
        firm,
        [CaseFactory(firm=firm, client=ClientFactory(firm=firm)) for _ in range(mine)],
        [CaseFactory(firm=other, client=ClientFactory(firm=other)) for _ in range(theirs)],
    )


def some(rng: random.Random, mine: list[Case], most_mine: int, theirs: list[Case], most_theirs: int) -> list[Case]:
    """Up to `most_mine` of `mine` and up to `most_theirs` of `theirs`, drawn at random."""
    return rng.sample(mine, rng.randint(0, most_mine)) + rng.sample(theirs, rng.randint(0, most_theirs))


def grant(holder: Any, cases: list[Case]) -> None:
    """Guardian's grant to open each of `cases`, to a user or a group (`holder`)."""
    permission = view_case_permission()
    if isinstance(holder, Group):
        CaseGroupObjectPermission.objects.bulk_create(
            CaseGroupObjectPermission(content_object=c, group=holder, permission=permission) for c in cases
        )
    else:
        CaseUserObjectPermission.objects.bulk_create(
            CaseUserObjectPermission(content_object=c, user=holder, permission=permission) for c in cases
        )
