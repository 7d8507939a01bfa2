"""The memory's Django admin in the second host: scoped by this host's office and admin flag, through the adapter."""

from __future__ import annotations

import pytest
from django.test import Client as HttpClient

from graph_memory.models import CaseSummary, Node
from tests.second_host.factories import AttorneyFactory
from tests.second_host.world import ACQ, SUED, Office

pytestmark = pytest.mark.django_db


def signed_in(user: object) -> HttpClient:
    client = HttpClient()
    client.force_login(user)
    return client


def test_an_office_admin_sees_their_office_only(memory: Office) -> None:
    admin = signed_in(memory.people["firm_admin"])
    changelist = admin.get("/admin/graph_memory/casesummary/")
    assert changelist.status_code == 200
    text = changelist.content.decode()
    assert "Nordwind / Castell acquisition" in text and "Südwind" not in text
    own = CaseSummary.objects.get(case=memory.matters[ACQ])
    foreign = CaseSummary.objects.get(case=memory.matters[SUED])
    assert admin.get(f"/admin/graph_memory/casesummary/{own.pk}/change/").status_code == 200
    assert admin.get(f"/admin/graph_memory/casesummary/{foreign.pk}/change/").status_code == 404
    nodes = admin.get("/admin/graph_memory/node/").content.decode()
    assert "Olga Owner" in nodes and "Sven Süd" not in nodes
    health = admin.get("/admin/graph_memory/casesummary/health/")
    assert health.status_code == 200 and "Kanzlei Nord" in health.content.decode()


def test_lawyers_and_staff_without_the_flag_see_nothing(memory: Office) -> None:
    staff = AttorneyFactory(office=memory.office, username="staff-only", is_staff=True)
    lawyer = signed_in(memory.people["owner"])
    assert lawyer.get("/admin/graph_memory/casesummary/").status_code == 302  # not staff: to the login page
    staff_only = signed_in(staff)
    assert staff_only.get("/admin/graph_memory/casesummary/").status_code == 403
    assert staff_only.get("/admin/graph_memory/casesummary/health/").status_code == 403


def test_an_operator_picks_an_office_by_its_code(memory: Office) -> None:
    operator = AttorneyFactory(office=None, username="operator", is_superuser=True, is_staff=True)
    client = signed_in(operator)
    sued = client.get("/admin/graph_memory/casesummary/health/", {"firm": "kanzlei-sued"})
    assert sued.status_code == 200 and "Memory health — Kanzlei Süd" in sued.content.decode()
    assert client.get("/admin/graph_memory/casesummary/health/", {"firm": "nope"}).status_code == 404
    assert Node.objects.filter(firm_id=memory.other.pk).exists()
