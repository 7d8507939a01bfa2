"""The memory's Django admin in the second host: scoped by this host's office and admin flag, through the adapter."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.test import Client as HttpClient
from django.urls import reverse

from graph_memory import services
from graph_memory.models import CaseSummary, MissedChange, Node
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


def test_every_admin_page_of_the_memory_renders(memory: Office) -> None:
    """Every list, change and history page, the app index and the health page, for an operator and an office
    admin: from the installed wheel in `make test`, so a template left out of it fails here."""
    services.refresh_firm(firm_id=memory.office.pk)
    services.lint_firm(firm_id=memory.office.pk)
    MissedChange.objects.create(
        firm=memory.office, work="graph", model="matters.assignment", object_id="1", error="ValueError: shown"
    )
    operator = AttorneyFactory(office=None, username="operator", is_superuser=True, is_staff=True)
    pages = ["/admin/", "/admin/graph_memory/", "/admin/graph_memory/casesummary/health/"]
    for model in admin.site._registry:
        if model._meta.app_label != "graph_memory":
            continue
        opts = model._meta
        pages += [reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"),
                  reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist") + "?q=nord"]  # fmt: skip
        first = model._default_manager.filter(firm_id=memory.office.pk).order_by("pk").first()
        if first is not None:
            pages += [reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=[first.pk]) for view in ("change", "history")]
    for user in (operator, memory.people["firm_admin"]):
        client = signed_in(user)
        for page in pages:
            response = client.get(page)
            assert response.status_code == 200, (user, page, response.status_code)
    used = {t.name for t in signed_in(operator).get(pages[2]).templates}
    assert "admin/graph_memory/health.html" in used
    summary = CaseSummary.objects.filter(firm=memory.office).first()
    history = signed_in(operator).get(reverse("admin:graph_memory_casesummary_history", args=[summary.pk]))
    assert 'id="gm-versions-link"' in history.content.decode()
    assert "ValueError: shown" in signed_in(operator).get(pages[2], {"firm": "kanzlei-nord"}).content.decode()
