"""The access ledger on a host without django-guardian: what it records, and what it says it cannot.

The third host gives `member_case_ids` (a matter's instructing lawyer), so no
grant is recorded: the ledger holds the matters, the counsel of each chambers,
their deactivations and the heads of chambers, and an answer says grants are
not recorded and lists the head only.
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from graph_memory.ledger import history
from graph_memory.models import AccessChange
from tests.third_host.chambers.models import Counsel, Matter
from tests.third_host.conftest import People

K = AccessChange.Kind


def test_matters_counsel_and_heads_are_recorded_and_grants_are_said_to_be_missing(people: People) -> None:
    matter = Matter.objects.create(chambers=people.chambers, file_no="TR-9", caption="Northwind v Castell",
                                   instructing_lawyer=people.alice)  # fmt: skip
    Counsel.objects.filter(pk=people.bob.pk).update(is_active=False)  # no signal: the trigger records it
    rows = AccessChange.objects.filter(firm_id=people.chambers.pk)
    assert set(rows.filter(kind=K.USER, granted=True).values_list("viewer_id", flat=True)) == {
        people.alice.pk, people.bob.pk, people.head.pk,
    }  # fmt: skip
    assert rows.filter(kind=K.USER, viewer_id=people.bob.pk, granted=False, reason="deactivated").count() == 1
    assert list(rows.filter(kind=K.FIRM_ADMIN).values_list("viewer_id", flat=True)) == [people.head.pk]
    assert rows.filter(kind=K.CASE, case_id=matter.pk, granted=True).count() == 1
    assert not rows.filter(kind__in=[K.USER_GRANT, K.GROUP_GRANT, K.MEMBERSHIP]).exists()
    assert not rows.filter(case_id=matter.pk).exclude(firm_id=people.chambers.pk).exists()
    answer = history.who_could_open(firm_id=people.chambers.pk, case_id=matter.pk, start=timezone.now())
    assert not answer.grants_recorded
    assert [(a.id, a.periods[-1].why) for a in answer.rows] == [(people.head.pk, ("firm_admin",))]


@pytest.mark.parametrize("field", ["caption", "file_no"])
def test_no_text_of_a_matter_is_in_the_ledger(people: People, field: str) -> None:
    matter = Matter.objects.create(chambers=people.chambers, file_no="TR-7", caption="Brightline v Northwind",
                                   instructing_lawyer=people.alice)  # fmt: skip
    value = getattr(matter, field)
    matter.delete()
    text = " ".join(str(row) for row in AccessChange.objects.values_list())
    assert value not in text
