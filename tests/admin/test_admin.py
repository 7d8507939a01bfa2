"""Django admin as the firm admin: every page renders, and only their firm's rows appear."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib import admin
from django.db import connection
from django.test import Client as HttpClient
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.models import Firm, User
from graph_memory import services
from graph_memory.admin.scoping import FirmScopedAdmin
from graph_memory.documents.routing import mark_documents_stale
from graph_memory.ledger import served_chain
from graph_memory.models import (
    AICall,
    CaseSummary,
    DocumentQuery,
    Edge,
    MemoryExclusion,
    Node,
    NoteRefusal,
    RefreshRun,
    ServedRow,
    SummaryVersion,
)
from practice.models import Case, Client, Counterparty, Deadline
from tests.factories import (
    CaseFactory,
    ClientFactory,
    CounterpartyFactory,
    DeadlineFactory,
    DocumentFactory,
    DraftFactory,
    FirmFactory,
    InvoiceFactory,
    NoteFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

# Every string of the other firm carries this word; no page a Hale & Ward
# admin opens may contain it.
SECRET = "zebulon"


@dataclass
class World:
    firm: Firm
    other: Firm
    dana: User
    alice: User
    other_case: Case
    own_case: Case


def _derived(case: Case, *, text: str, days_ago: int = 1) -> CaseSummary:
    summary, _ = CaseSummary.objects.update_or_create(
        case=case,
        defaults={
            "firm_id": case.firm_id,
            "text": text,
            "writer": "extractive",
            "model": f"{text.split()[0].lower()}-model",
            "stale": False,
            "verification": {
                "kept": 1,
                "fields": 2,
                "dropped": [
                    {"section": "money", "reason": "unknown_id", "detail": "s9"},
                    {"section": "money", "reason": "no_known_sentence", "detail": ""},
                    {"section": "money", "reason": "label_dropped", "detail": "holds a state word: paid", "label": "Paid"},
                ],
                "counts": {"points": 2, "ids": 2, "ids_kept": 1, "statements": 1, "kept": 1, "shortened": 0,
                           "unknown_id": 1, "repeated_id": 0, "no_known_sentence": 1, "shortening_refused": 0,
                           "label_dropped": 1},
            },
            "written_at": timezone.now(),
        },
    )
    SummaryVersion.objects.create(
        case=case, firm_id=case.firm_id, text=text, writer="extractive", prompt_version="1", generation=1
    )
    call = AICall.objects.create(
        firm_id=case.firm_id,
        case=case,
        purpose="summary",
        writer="extractive",
        outcome="ok",
        tokens_in=300,
        tokens_out=50,
    )
    AICall.objects.filter(pk=call.pk).update(created_at=timezone.now() - dt.timedelta(days=days_ago))
    run = RefreshRun.objects.create(
        firm_id=case.firm_id, status="done", claimed=3, rewritten=2, failed=1, tokens_used=350
    )
    RefreshRun.objects.filter(pk=run.pk).update(started_at=timezone.now() - dt.timedelta(days=days_ago))
    services.graph_sync_case(case_id=case.pk)
    # Long documents: an index row and a query-log row (graph_memory/admin/documents.py).
    mark_documents_stale(documents=[(case.pk, f"{case.key}-spa")])
    DocumentQuery.objects.create(firm_id=case.firm_id, case=case, outcome="success", sections=["spa#article-5"])
    # A note the write-back guard refused (graph_memory/models/writeback.py).
    NoteRefusal.objects.create(
        firm_id=case.firm_id, case=case, filer_id=case.owner_id, kinds=["party"], source_case_ids=[case.pk], matches=1
    )
    return summary


@pytest.fixture
def world(demo_firm: Firm, demo_users: dict[str, User]) -> World:
    other = FirmFactory(slug="zebulon-rival", name="Zebulon Rival LLP")
    UserFactory(firm=other, username="zebulon-admin", name="Zebulon Admin", role=User.Role.ADMIN)
    lawyer = UserFactory(firm=other, username="zebulon-lawyer", name="Zebulon Lawyer")
    other_case = CaseFactory(
        firm=other,
        key="ZEB-001",
        title="Zebulon secret matter",
        owner=lawyer,
        client=ClientFactory(firm=other, name="Zebulon Client Holdings"),
        counterparties=[CounterpartyFactory(firm=other, name="Zebulon Counterparty GmbH")],
    )
    for factory in (DocumentFactory, DraftFactory, DeadlineFactory):
        factory(case=other_case, title=f"Zebulon {factory.__name__}")
    InvoiceFactory(case=other_case, number="ZEBULON-1")
    NoteFactory(case=other_case, text="Zebulon note")
    _derived(other_case, text="Zebulon summary of the secret matter.")
    own_case = Case.objects.get(firm=demo_firm, key="2026-014")
    _derived(own_case, text="Northwind buys Castell Components GmbH.")
    for firm in (demo_firm, other):  # a lint run with findings in each firm (graph_memory/admin/lint.py)
        services.lint_firm(firm_id=firm.pk)
        # A served-ledger row in each firm, sealed (graph_memory/admin/served.py).
        ServedRow.objects.create(
            firm_id=firm.pk, viewer_id=None, endpoint="api:SearchApi", status="ok", at=timezone.now(),
            query_fingerprint="0" * 64, case_ids=[],
        )  # fmt: skip
    served_chain.seal_all()
    for firm in (demo_firm, other):  # an exclusion row in each firm (memory consent, graph_memory/admin/consent.py),
        # of no case of it, so that nothing else here changes
        MemoryExclusion.objects.create(firm=firm, kind=MemoryExclusion.Kind.CASE, ref_id=0, reason="test row")
    return World(demo_firm, other, demo_users["dana"], demo_users["alice"], other_case, own_case)


def _login(user: User) -> HttpClient:
    http = HttpClient()
    http.force_login(user)
    return http


def _scoped_admins() -> list[tuple[type, FirmScopedAdmin]]:
    return [(m, a) for m, a in admin.site._registry.items() if isinstance(a, FirmScopedAdmin)]


def _url(model: type, view: str, *args: Any) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


def _firm_rows(model: type, model_admin: FirmScopedAdmin, firm: Firm) -> Any:
    return model._default_manager.filter(**{model_admin.firm_field: firm.pk})


def test_a_lawyer_cannot_enter_admin(world: World) -> None:
    http = _login(world.alice)
    for url in ("/admin/", _url(Case, "changelist"), reverse("admin:graph_memory_health")):
        response = http.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/admin/login/")


def test_a_staff_lawyer_gets_no_firm_admin_powers(world: World) -> None:
    User.objects.filter(pk=world.alice.pk).update(is_staff=True)
    http = _login(world.alice)
    index = http.get("/admin/").content.decode()
    assert "/admin/practice/" not in index and reverse("admin:graph_memory_health") not in index
    assert http.get(_url(Case, "changelist")).status_code == 403
    assert http.get(reverse("admin:graph_memory_health")).status_code == 403


def test_every_scoped_changelist_renders_only_the_firms_rows(world: World) -> None:
    http = _login(world.dana)
    scoped = _scoped_admins()
    assert {m._meta.model_name for m, _ in scoped} >= {"case", "client", "casesummary", "aicall", "refreshrun", "edge"}
    for model, _ in scoped:
        response = http.get(_url(model, "changelist"))
        assert response.status_code == 200, model
        assert SECRET not in response.content.decode().lower(), model
    assert "Northwind / Castell acquisition" in http.get(_url(Case, "changelist")).content.decode()
    index = http.get("/admin/").content.decode()
    assert reverse("admin:graph_memory_health") in index
    assert SECRET not in index.lower()


def test_admins_that_are_not_firm_scoped_are_closed_to_firm_admins(world: World) -> None:
    http = _login(world.dana)
    others = [m for m, a in admin.site._registry.items() if not isinstance(a, FirmScopedAdmin)]
    assert others  # groups, tokens, celery beat
    for model in others:
        assert http.get(_url(model, "changelist")).status_code == 403, model


def test_changelists_cost_the_same_queries_with_more_rows(world: World) -> None:
    http = _login(world.dana)

    def query_counts() -> dict[str, int]:
        counts = {}
        for model, _ in _scoped_admins():
            with CaptureQueriesContext(connection) as queries:
                assert http.get(_url(model, "changelist")).status_code == 200
            counts[model._meta.label] = len(queries.captured_queries)
        return counts

    before = query_counts()
    for case in [*Case.objects.filter(firm=world.firm), *CaseFactory.create_batch(3, firm=world.firm)]:
        _derived(case, text=f"Summary of {case.key}.", days_ago=2)
        for factory in (DocumentFactory, DraftFactory, DeadlineFactory, InvoiceFactory, NoteFactory):
            factory(case=case)
    assert query_counts() == before


def test_every_change_page_renders_and_another_firms_object_is_404(world: World) -> None:
    http = _login(world.dana)
    for model, model_admin in _scoped_admins():
        own = _firm_rows(model, model_admin, world.firm).first()
        other = _firm_rows(model, model_admin, world.other).first()
        assert own is not None and other is not None, model
        response = http.get(_url(model, "change", own.pk))
        assert response.status_code == 200, model
        assert SECRET not in response.content.decode().lower(), model
        for view in ("change", "history", "delete"):
            assert http.get(_url(model, view, other.pk)).status_code == 404, (model, view)
        assert http.get(_url(model, "change", "999999999")).status_code == 404, model


def test_summary_page_shows_state_history_and_no_vector(world: World) -> None:
    summary = CaseSummary.objects.get(case=world.own_case)
    CaseSummary.objects.filter(pk=summary.pk).update(
        embedding=[0.0123456] * 384, attempts=2, last_error="model timed out"
    )
    page = _login(world.dana).get(_url(CaseSummary, "change", summary.pk)).content.decode()
    for expected in (
        "Northwind buys Castell Components GmbH.",
        "model timed out",
        "northwind-model",
        # The verification report as a table: what was dropped or refused, its reason in words.
        "<td>money</td><td>a sentence id the slice does not have</td><td>s9</td>",
        "holds a state word: paid</td><td style='white-space: pre-wrap'>Paid</td></tr></tbody></table>",
        "a label that stated something (dropped, the point kept)",
    ):
        assert expected in page
    assert "Saved versions (newest first)" in page and "No saved versions." not in page
    assert 'alt="True"' in page  # embedding present
    assert "0.0123456" not in page
    other = CaseSummary.objects.get(case=world.other_case)
    assert _login(world.dana).get(_url(CaseSummary, "change", other.pk)).status_code == 404


def test_derived_data_is_read_only_even_for_superusers(world: World) -> None:
    root = UserFactory(username="root", firm=None, is_staff=True, is_superuser=True)
    summary = CaseSummary.objects.get(case=world.own_case)
    for user in (world.dana, root):
        http = _login(user)
        for model in (Node, Edge, CaseSummary, AICall, RefreshRun):
            assert http.get(_url(model, "add")).status_code == 403, model
        response = http.post(_url(CaseSummary, "change", summary.pk), {"text": "hand-written"})
        assert response.status_code == 403
        assert http.post(_url(CaseSummary, "delete", summary.pk), {"post": "yes"}).status_code == 403
    assert CaseSummary.objects.get(pk=summary.pk).text == "Northwind buys Castell Components GmbH."


def test_autocompletes_and_choices_offer_only_the_firms_rows(world: World) -> None:
    http = _login(world.dana)
    for app_label, model_name, field in (
        ("practice", "case", "client"),
        ("practice", "case", "owner"),
        ("practice", "note", "case"),
        ("practice", "casecounterparty", "counterparty"),
        ("practice", "caseteammember", "user"),
    ):
        response = http.get(
            "/admin/autocomplete/", {"app_label": app_label, "model_name": model_name, "field_name": field, "term": ""}
        )
        assert response.status_code == 200, field
        texts = [r["text"] for r in response.json()["results"]]
        assert texts and not any(SECRET in t.lower() for t in texts), (model_name, field, texts)
    add_case = http.get(_url(Case, "add")).content.decode()
    assert "Hale &amp; Ward LLP" in add_case and SECRET not in add_case.lower()
    filtered = http.get(_url(Case, "changelist"), {"q": "Zebulon"}).content.decode()
    assert "0 cases" in filtered or "0 results" in filtered


def test_firm_admin_edits_own_records_and_cannot_point_them_at_another_firm(world: World) -> None:
    http = _login(world.dana)
    deadline = Deadline.objects.filter(firm=world.firm).first()
    data = {"firm": world.firm.pk, "key": deadline.key, "title": "Moved", "due": "2026-12-01", "done": "on"}
    response = http.post(_url(Deadline, "change", deadline.pk), {**data, "case": deadline.case_id})
    assert response.status_code == 302
    deadline.refresh_from_db()
    assert (deadline.title, deadline.done) == ("Moved", True)
    response = http.post(
        _url(Deadline, "change", deadline.pk), {**data, "title": "Moved again", "case": world.other_case.pk}
    )
    assert response.status_code == 200  # the form is shown again with an error
    response = http.post(
        _url(Deadline, "change", deadline.pk), {**data, "firm": world.other.pk, "case": deadline.case_id}
    )
    assert response.status_code == 200
    deadline.refresh_from_db()
    assert (deadline.title, deadline.firm_id) == ("Moved", world.firm.pk)


def test_adding_a_case_with_team_and_counterparty_inlines(world: World) -> None:
    http = _login(world.dana)
    client = Client.objects.filter(firm=world.firm).first()
    party = Counterparty.objects.filter(firm=world.firm).first()
    prefix_team, prefix_cp = "caseteammember_set", "casecounterparty_set"
    data = {
        "firm": world.firm.pk,
        "key": "2026-900",
        "title": "New matter",
        "status": "open",
        "opened": "2026-06-01",
        "client": client.pk,
        "owner": world.alice.pk,
        f"{prefix_team}-TOTAL_FORMS": "1",
        f"{prefix_team}-INITIAL_FORMS": "0",
        f"{prefix_team}-0-user": world.dana.pk,
        f"{prefix_cp}-TOTAL_FORMS": "1",
        f"{prefix_cp}-INITIAL_FORMS": "0",
        f"{prefix_cp}-0-counterparty": party.pk,
    }
    assert http.post(_url(Case, "add"), data).status_code == 302
    case = Case.objects.get(firm=world.firm, key="2026-900")
    assert list(case.team.all()) == [world.dana] and list(case.counterparties.all()) == [party]
    # A counterparty of another firm is not a valid choice.
    foreign = Counterparty.objects.get(firm=world.other)
    data.update({"key": "2026-901", f"{prefix_cp}-0-counterparty": foreign.pk})
    assert http.post(_url(Case, "add"), data).status_code == 200
    assert not Case.objects.filter(key="2026-901").exists()


def test_deleting_a_case_is_not_blocked_by_its_derived_rows(world: World) -> None:
    page = _login(world.dana).get(_url(Case, "delete", world.own_case.pk)).content.decode()
    assert "Are you sure" in page
    assert "following types of objects" not in page


def test_superuser_sees_both_firms(world: World) -> None:
    root = UserFactory(username="root", firm=None, is_staff=True, is_superuser=True)
    http = _login(root)
    page = http.get(_url(Case, "changelist")).content.decode()
    assert "Zebulon secret matter" in page and "Northwind / Castell acquisition" in page
    assert http.get(_url(CaseSummary, "change", CaseSummary.objects.get(case=world.other_case).pk)).status_code == 200
    health = http.get(reverse("admin:graph_memory_health"), {"firm": "zebulon-rival"}).content.decode()
    assert "Zebulon secret matter" in health
    assert http.get(reverse("admin:graph_memory_health"), {"firm": "nope"}).status_code == 404


def _health(http: HttpClient, **params: Any) -> Any:
    return http.get(reverse("admin:graph_memory_health"), params)


def test_health_page_counts_runs_chart_and_map(world: World) -> None:
    CaseSummary.objects.filter(case=world.own_case).update(attempts=1, stale=True)
    response = _health(_login(world.dana), case=world.own_case.pk)
    assert response.status_code == 200
    page = response.content.decode()
    assert SECRET not in page.lower()
    cases = Case.objects.filter(firm=world.firm).count()
    assert f'id="gm-count-cases">{cases}<' in page
    assert 'id="gm-count-stale"><a href="/admin/graph_memory/casesummary/?stale__exact=1">1<' in page
    assert 'id="gm-count-failed"><a href="/admin/graph_memory/casesummary/?state=failed">1<' in page
    assert f'id="gm-count-never">{cases - 1}<' in page
    assert page.count('class="gm-run"') == 1
    assert page.count('class="gm-bar"') == 14
    assert "350 tokens" in page
    chart, picture = page.split('id="gm-tokens-chart"')[1], page.split('id="gm-map"')[1]
    assert chart.count("<rect") >= 14
    for label in ("Northwind Holdings, Inc.", "Castell Components GmbH", "Alice Hale", "works on", "is against"):
        assert label in picture
    assert picture.count('class="gm-node') == 4


def test_health_page_rejects_another_firms_case(world: World) -> None:
    http = _login(world.dana)
    for value in (world.other_case.pk, "abc", "99999999999999999999"):
        assert _health(http, case=value).status_code == 404
    assert _health(http, firm="zebulon-rival").status_code == 200  # ignored: a firm admin has one firm
    assert SECRET not in _health(http, firm="zebulon-rival").content.decode().lower()


def test_health_page_costs_a_constant_number_of_queries(world: World, django_assert_num_queries: Any) -> None:
    http = _login(world.dana)
    _health(http)  # warm caches (content types, session)
    # The 11th lists abandoned runs, 12 and 13 missed host changes, 14 the last lint run, 15 the case map's
    # served-ledger row (issue 31: one INSERT), 16 the firm's time zone for the request (issue 32: every
    # admin page of a firm admin runs in it, graph_memory.admin.scoping.firm_time_zone_middleware).
    with django_assert_num_queries(16):
        assert _health(http, case=world.own_case.pk).status_code == 200
    for case in Case.objects.filter(firm=world.firm):
        for days_ago in range(1, 6):
            _derived(case, text=f"Summary {case.key} {days_ago}.", days_ago=days_ago)
    CaseFactory.create_batch(5, firm=world.firm)
    with django_assert_num_queries(16):
        response = _health(http, case=world.own_case.pk)
    assert response.content.decode().count('class="gm-run"') == 5


def _act(http: HttpClient, action: str, summaries: list[CaseSummary]) -> Any:
    return http.post(
        _url(CaseSummary, "changelist"), {"action": action, "_selected_action": [s.pk for s in summaries]}, follow=True
    )


def _both_summaries(world: World) -> list[CaseSummary]:
    return [CaseSummary.objects.get(case=world.own_case), CaseSummary.objects.get(case=world.other_case)]


def test_actions_only_reach_the_admins_firm(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, Any]] = []
    monkeypatch.setattr(services, "mark_stale", lambda *, case_ids: calls.append(("stale", case_ids)), raising=False)
    monkeypatch.setattr(
        services, "graph_rebuild_firm", lambda *, firm_id: calls.append(("graph", firm_id)) or services.GraphChanges()
    )
    http = _login(world.dana)
    both = _both_summaries(world)
    assert _act(http, "mark_stale", both).status_code == 200
    assert _act(http, "rebuild_graph", both).status_code == 200
    assert calls == [("stale", [world.own_case.pk]), ("graph", world.firm.pk)]


def test_mark_stale_action(world: World) -> None:
    if not hasattr(services, "mark_stale"):
        pytest.skip("service not yet available")
    page = _act(_login(world.dana), "mark_stale", _both_summaries(world)).content.decode()
    assert "Marked 1 case summary stale." in page
    assert CaseSummary.objects.get(case=world.own_case).stale
    assert not CaseSummary.objects.get(case=world.other_case).stale


def test_regenerate_now_action(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    if not hasattr(services, "summarize_case"):
        pytest.skip("service not yet available")
    from graph_memory.summaries.rewrite import SummaryFailed

    http = _login(world.dana)
    own = [CaseSummary.objects.get(case=world.own_case)]
    page = _act(http, "regenerate_now", own).content.decode()
    assert "Regenerated 1 case summary." in page
    assert CaseSummary.objects.get(case=world.own_case).text

    def fail(*, case_id: int) -> None:
        raise SummaryFailed("the model timed out")

    monkeypatch.setattr(services, "summarize_case", fail)
    page = _act(http, "regenerate_now", own).content.decode()
    assert "not regenerated" in page and "The previous summary is kept." in page


def test_rebuild_graph_action(world: World) -> None:
    if not hasattr(services, "graph_rebuild_firm"):
        pytest.skip("service not yet available")
    Node.objects.filter(firm=world.firm).delete()
    page = _act(_login(world.dana), "rebuild_graph", _both_summaries(world)).content.decode()
    assert "Rebuilt the connection map of Hale &amp; Ward LLP: 15 nodes and 14 edges added" in page
    cases = Case.objects.filter(firm=world.firm).count()
    assert Node.objects.filter(firm=world.firm, kind=Node.Kind.CASE).count() == cases
