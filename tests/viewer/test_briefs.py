"""Briefs: a case's stored summary, or a party's or lawyer's brief assembled per viewer and never stored."""

from __future__ import annotations

import logging
import uuid

import pytest
from django.apps import apps
from django.db import connection
from django.test import Client as HttpClient
from rest_framework.authtoken.models import Token

from accounts.models import User
from graph_memory import conf, services
from graph_memory.models import CaseSummary, Node
from graph_memory.viewer import briefs
from graph_memory.wall import access
from practice.models import Case, CaseTeamMember
from tests.factories import CaseFactory, ClientFactory, FirmFactory, UserFactory

pytestmark = pytest.mark.django_db

LEASE_FACTS = ("2025-088", "540,000")
TERMINATION_FACTS = ("2026-047", "410,000", "150,000", "Jordan Lee")


@pytest.fixture
def memory(demo_firm, demo_users, settings) -> dict[str, User]:
    """The demo firm with its connection map and an extractive summary of every case."""
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "extractive", "EMBEDDER": "none"}
    services.graph_rebuild_firm(firm_id=demo_firm.pk)
    for case_id in Case.objects.filter(firm=demo_firm).values_list("pk", flat=True):
        services.summarize_case(case_id=case_id)
    return demo_users


def node(kind: str, label: str) -> Node:
    return Node.objects.get(kind=kind, label=label)


def test_client_brief_holds_only_the_cases_this_viewer_may_open(memory) -> None:
    meridian = node("client", "Meridian Foods Corp.")
    alice = services.node_brief(viewer=memory["alice"], node_id=meridian.pk)
    assert [c.key for c in alice.cases] == ["2025-088"]
    assert all(fact in alice.text for fact in LEASE_FACTS)
    blob = alice.text + repr(alice)
    assert not any(fact in blob for fact in TERMINATION_FACTS)
    assert alice.has_more is False
    for viewer in ("carol", "dana"):
        brief = services.node_brief(viewer=memory[viewer], node_id=meridian.pk)
        assert sorted(c.key for c in brief.cases) == ["2025-088", "2026-047"]
        assert all(fact in brief.text for fact in LEASE_FACTS + TERMINATION_FACTS)
    with pytest.raises(access.NotFound):
        services.node_brief(viewer=memory["bob"], node_id=meridian.pk)


def test_counterparty_brief_never_mixes_in_the_same_name_as_client(memory) -> None:
    northwind_cp = node("counterparty", "NORTHWIND HOLDINGS INC")
    for viewer in ("bob", "evan", "dana"):
        brief = services.node_brief(viewer=memory[viewer], node_id=northwind_cp.pk)
        assert [c.key for c in brief.cases] == ["2026-031"]
        assert "2,310,000" in brief.text and "1,500,000" in brief.text
        assert "48,000,000" not in brief.text and "2026-014" not in brief.text
    with pytest.raises(access.NotFound):
        services.node_brief(viewer=memory["alice"], node_id=northwind_cp.pk)
    northwind_client = node("client", "Northwind Holdings, Inc.")
    assert "48,000,000" in services.node_brief(viewer=memory["dana"], node_id=northwind_client.pk).text
    with pytest.raises(access.NotFound):
        services.node_brief(viewer=memory["bob"], node_id=northwind_client.pk)


def test_lawyer_brief_covers_the_lawyers_cases_the_viewer_may_open(memory) -> None:
    alice_node = Node.objects.get(kind="lawyer", ref_id=memory["alice"].pk)
    carol_view = services.node_brief(viewer=memory["carol"], node_id=alice_node.pk)
    assert [c.key for c in carol_view.cases] == ["2025-088"]
    assert "48,000,000" not in carol_view.text
    dana_view = services.node_brief(viewer=memory["dana"], node_id=alice_node.pk)
    assert sorted(c.key for c in dana_view.cases) == ["2025-088", "2026-014"]


def test_case_brief_is_the_stored_summary_with_its_state(memory) -> None:
    lease = Case.objects.get(key="2025-088")
    case_node = Node.objects.get(kind="case", ref_id=lease.pk)
    brief = services.node_brief(viewer=memory["carol"], node_id=case_node.pk)
    summary = CaseSummary.objects.get(case=lease)
    (entry,) = brief.cases
    assert entry.summary == summary.text and summary.text in brief.text
    assert entry.case.id == str(case_node.pk) and entry.stale is False and entry.written_at == summary.written_at
    assert brief.notice == entry.notice == conf.get("NOTICE") and conf.get("NOTICE") in brief.text
    CaseSummary.objects.filter(case=lease).update(stale=True)
    again = services.node_brief(viewer=memory["carol"], node_id=case_node.pk)
    assert again.cases[0].stale is True and "stale" in again.text


def test_hidden_unknown_malformed_and_foreign_ids_are_the_same_not_found(memory) -> None:
    hidden = Node.objects.get(kind="case", ref_id=Case.objects.get(key="2026-014").pk)
    foreign_firm = FirmFactory(slug="elsewhere")
    foreign_case = CaseFactory(firm=foreign_firm)
    services.graph_rebuild_firm(firm_id=foreign_firm.pk)
    foreign = Node.objects.get(kind="case", ref_id=foreign_case.pk)
    errors = set()
    for node_id in (hidden.pk, uuid.uuid4(), "not-a-uuid", None, 42, foreign.pk):
        with pytest.raises(access.NotFound) as info:
            services.node_brief(viewer=memory["carol"], node_id=node_id)
        errors.add((type(info.value), str(info.value)))
    assert len(errors) == 1


def test_a_case_without_a_summary_gets_one_on_the_spot_or_header_facts(memory, monkeypatch) -> None:
    firm = memory["alice"].firm
    fresh = CaseFactory(firm=firm, owner=memory["alice"], key="2026-900", title="New matter", description="Fresh intake.")
    services.graph_sync_case(case_id=fresh.pk)
    fresh_node = Node.objects.get(kind="case", ref_id=fresh.pk)
    monkeypatch.setattr("graph_memory.viewer.briefs.ensure_summary", lambda **kwargs: None)
    bare = services.node_brief(viewer=memory["alice"], node_id=fresh_node.pk)
    assert bare.cases[0].summary == "" and briefs.NO_SUMMARY in bare.text
    assert "2026-900 — New matter" in bare.text and "Fresh intake." in bare.text
    monkeypatch.undo()
    written = services.node_brief(viewer=memory["alice"], node_id=fresh_node.pk)
    assert written.cases[0].summary and written.cases[0].summary == CaseSummary.objects.get(case=fresh).text


def row_counts() -> dict[str, int]:
    tables = sorted(m._meta.db_table for m in apps.get_models(include_auto_created=True))
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(f"SELECT '{t}', count(*) FROM {t}" for t in tables))
        return dict(cursor.fetchall())


def test_a_brief_writes_no_rows_anywhere_and_logs_no_text(memory, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    nodes = [
        node("client", "Meridian Foods Corp."),
        node("counterparty", "NORTHWIND HOLDINGS INC"),
        Node.objects.get(kind="lawyer", ref_id=memory["alice"].pk),
        Node.objects.get(kind="case", ref_id=Case.objects.get(key="2025-088").pk),
    ]
    before = row_counts()
    for viewer in memory.values():
        for n in nodes:
            try:
                services.node_brief(viewer=viewer, node_id=n.pk)
            except access.NotFound:
                pass
    assert row_counts() == before
    assert "540,000" not in caplog.text and "410,000" not in caplog.text


def test_order_is_most_recently_active_first_and_has_more_counts_visible_cases_only(memory) -> None:
    firm = memory["alice"].firm
    client = ClientFactory(firm=firm, name="Quayside Ltd")
    lawyer = UserFactory(firm=firm, username="lawyer-q")
    mine = [CaseFactory(firm=firm, client=client, owner=lawyer, key=f"Q-{i}") for i in range(3)]
    hidden = [CaseFactory(firm=firm, client=client, key=f"H-{i}") for i in range(5)]
    services.graph_rebuild_firm(firm_id=firm.pk)
    # Most recently active first; equal activity falls back to the case number.
    later = mine[1].updated_at.replace(year=2029)
    Case.objects.filter(pk__in=[mine[0].pk, mine[2].pk]).update(updated_at=later)
    Case.objects.filter(pk=mine[1].pk).update(updated_at=later.replace(year=2030))
    quayside = node("client", "Quayside Ltd")
    brief = services.node_brief(viewer=lawyer, node_id=quayside.pk, limit=2)
    assert [c.key for c in brief.cases] == ["Q-1", "Q-0"]
    assert brief.has_more is True
    full = services.node_brief(viewer=lawyer, node_id=quayside.pk, limit=3)
    assert [c.key for c in full.cases] == ["Q-1", "Q-0", "Q-2"]
    assert full.has_more is False  # five hidden cases exist, and count for nothing
    assert all(c.key not in full.text for c in hidden)
    admin_view = services.node_brief(viewer=memory["dana"], node_id=quayside.pk, limit=3)
    assert admin_view.has_more is True
    with pytest.raises(ValueError):
        services.node_brief(viewer=lawyer, node_id=quayside.pk, limit=conf.get("PAGE_MAX") + 1)


@pytest.mark.parametrize("cases", [3, 40])
def test_brief_query_count_does_not_grow_with_cases(memory, cases, django_assert_num_queries) -> None:
    firm = memory["alice"].firm
    client = ClientFactory(firm=firm, name="Countable Inc.")
    lawyer = UserFactory(firm=firm, username="counter")
    for i in range(cases):
        case = CaseFactory(firm=firm, client=client, key=f"C-{i:03d}")
        CaseTeamMember.objects.create(case=case, user=lawyer, firm=firm)
        CaseSummary.objects.update_or_create(case=case, defaults={"firm": firm, "text": f"Summary {i}.", "stale": False})
    services.graph_rebuild_firm(firm_id=firm.pk)
    target = node("client", "Countable Inc.")
    with django_assert_num_queries(2):
        brief = services.node_brief(viewer=lawyer, node_id=target.pk, limit=100)
    assert len(brief.cases) == cases


def api(user: User) -> HttpClient:
    return HttpClient(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")


def test_brief_endpoint_shape_and_errors(memory) -> None:
    meridian = node("client", "Meridian Foods Corp.")
    response = api(memory["alice"]).get(f"/api/memory/nodes/{meridian.pk}/brief/")
    assert response.status_code == 200
    body = response.json()
    assert body["node"] == {"id": str(meridian.pk), "kind": "client", "label": "Meridian Foods Corp."}
    assert body["notice"] == conf.get("NOTICE") and body["has_more"] is False
    (entry,) = body["cases"]
    assert entry["case"]["kind"] == "case" and entry["stale"] is False and entry["updated_at"]
    # The notice is said once, at the top; each entry does not repeat it.
    assert "notice" not in entry and "540,000" in entry["summary"]
    assert "410,000" not in response.content.decode()
    bob = api(memory["bob"])
    hidden = bob.get(f"/api/memory/nodes/{meridian.pk}/brief/")
    unknown = bob.get(f"/api/memory/nodes/{uuid.uuid4()}/brief/")
    malformed = bob.get("/api/memory/nodes/zzz/brief/")
    assert hidden.status_code == unknown.status_code == malformed.status_code == 404
    assert hidden.json() == unknown.json() == malformed.json()
    for bad in ("0", "101", "x"):
        invalid = bob.get(f"/api/memory/nodes/{meridian.pk}/brief/", {"limit": bad})
        assert invalid.status_code == 400 and invalid.json()["error"]["field"] == "limit"
    assert HttpClient().get(f"/api/memory/nodes/{meridian.pk}/brief/").status_code == 401


def test_a_case_brief_shows_live_field_facts_next_to_last_nights_summary(memory, django_assert_num_queries) -> None:
    from practice.models import Deadline

    deadline = Deadline.objects.filter(case__key="2026-014", done=False).order_by("due").first()
    case_node = node("case", f"2026-014 {deadline.case.title}")
    before = services.node_brief(viewer=memory["dana"], node_id=case_node.pk)
    due = f"open deadline “{deadline.title}” due {deadline.due:%Y-%m-%d}"
    assert due in before.cases[0].live_facts and due in before.text
    deadline.done = True
    deadline.save()  # met this morning: the stored summary was written before
    with django_assert_num_queries(2):
        after = services.node_brief(viewer=memory["dana"], node_id=case_node.pk)
    assert due not in after.cases[0].live_facts and due not in after.text
    assert after.cases[0].stale  # the summary itself is flagged for tonight's rewrite
