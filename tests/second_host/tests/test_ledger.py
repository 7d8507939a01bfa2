"""The access ledger on the second host: offices, attorneys, a manager flag of its own, no django-guardian.

Whether an attorney manages their office is a column the adapter reads in
Python (`manages_office`): the ledger records it from the attorney's saves, and
a deactivation by queryset update from its trigger. Matters' grants are the
host's own links (`member_case_ids`), which the ledger cannot see: an answer
says so and lists the office's managers only.
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from graph_memory import services
from graph_memory.models import AccessChange
from tests.second_host.factories import AttorneyFactory, LawOfficeFactory, MatterFactory
from tests.second_host.offices.models import Attorney

pytestmark = pytest.mark.django_db
K = AccessChange.Kind


def test_the_ledger_records_offices_managers_and_deactivations() -> None:
    office = LawOfficeFactory()
    manager = AttorneyFactory(office=office, manages_office=True)
    associate = AttorneyFactory(office=office)
    matter = MatterFactory(office=office, lead=associate)
    Attorney.objects.filter(pk=associate.pk).update(is_active=False)
    rows = AccessChange.objects.filter(firm_id=office.pk)
    assert list(rows.filter(kind=K.FIRM_ADMIN, granted=True).values_list("viewer_id", flat=True)) == [manager.pk]
    assert rows.filter(kind=K.USER, viewer_id=associate.pk, granted=False, reason="deactivated").exists()
    assert rows.filter(kind=K.CASE, case_id=matter.pk, granted=True).exists()
    answer = services.who_could_open(firm_id=office.pk, case_id=matter.pk, start=timezone.now())
    assert not answer.grants_recorded
    assert [(a.id, a.periods[-1].why) for a in answer.rows] == [(manager.pk, ("firm_admin",))]
    manager.manages_office = False
    manager.save()
    assert rows.filter(kind=K.FIRM_ADMIN, viewer_id=manager.pk, granted=False, reason="revoked").exists()
    assert services.who_could_open(firm_id=office.pk, case_id=matter.pk, start=timezone.now()).rows == []
