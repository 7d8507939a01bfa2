"""Admin as a firm admin reads it: the admin log, browsable versions, names, columns, one labelled time zone."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.test import Client as HttpClient
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone

from accounts.models import Firm
from graph_memory import services
from graph_memory.models import AICall, CaseSummary, Edge, Node, RefreshRun, SummaryVersion
from graph_memory.summaries.rewrite import SummaryFailed
from practice.models import Case, CaseCounterparty, CaseTeamMember, Deadline, Document
from tests.admin.test_admin import SECRET, World, _act, _login, _scoped_admins, _url
from tests.admin.test_admin import world as world
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

# 08:31 UTC on 1 December is 03:31 in New York (EST, UTC-5).
AT = dt.datetime(2026, 12, 1, 8, 31, tzinfo=dt.UTC)


def _entries(obj: Any) -> list[LogEntry]:
    content_type = ContentType.objects.get_for_model(obj)
    return list(LogEntry.objects.filter(content_type=content_type, object_id=str(obj.pk)).order_by("pk"))


# --- the admin log ------------------------------------------------------------------------------


def test_mark_stale_is_recorded_in_each_summarys_history(world: World) -> None:
    own, other = CaseSummary.objects.get(case=world.own_case), CaseSummary.objects.get(case=world.other_case)
    _act(_login(world.dana), "mark_stale", [own, other])
    [entry] = _entries(own)
    assert entry.user_id == world.dana.pk and entry.is_change()
    assert "Marked stale from admin" in entry.get_change_message()
    assert entry.object_repr == "Summary of 2026-014 Northwind / Castell acquisition"
    assert _entries(other) == []  # another firm's summary was neither touched nor logged
    history = _login(world.dana).get(_url(CaseSummary, "history", own.pk)).content.decode()
    assert "Marked stale from admin" in history and "<td>dana</td>" in history
    assert "change history." not in history  # Django's "This object doesn't have a change history."


def test_regenerate_now_is_recorded_whether_it_worked_or_not(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    own = CaseSummary.objects.get(case=world.own_case)
    http = _login(world.dana)
    _act(http, "regenerate_now", [own])

    def fail(*, case_id: int) -> None:
        raise SummaryFailed("the model timed out")

    monkeypatch.setattr(services, "summarize_case", fail)
    _act(http, "regenerate_now", [own])
    messages = [e.get_change_message() for e in _entries(own)]
    assert messages[0] == "Regenerated now from admin."
    assert "failed (the model timed out)" in messages[1] and "previous summary is kept" in messages[1]


def test_rebuilding_the_map_is_recorded_in_the_firms_history(world: World) -> None:
    Node.objects.filter(firm=world.firm).delete()
    summaries = [CaseSummary.objects.get(case=world.own_case), CaseSummary.objects.get(case=world.other_case)]
    page = _act(_login(world.dana), "rebuild_graph", summaries).content.decode()
    assert "Rebuilt the connection map of Hale &amp; Ward LLP:" in page
    [entry] = _entries(world.firm)
    assert entry.user_id == world.dana.pk
    assert entry.get_change_message().startswith("Rebuilt the connection map from admin: ")
    assert "edges added" in entry.get_change_message()
    assert _entries(world.other) == []
    # Again, with nothing changed: it says so instead of a row of zeros.
    page = _act(_login(world.dana), "rebuild_graph", summaries).content.decode()
    assert "already up to date" in page
    history = _login(world.dana).get(_url(Firm, "history", world.firm.pk)).content.decode()
    assert "Rebuilt the connection map from admin" in history


# --- summary versions ---------------------------------------------------------------------------


def test_versions_are_listed_per_case_and_open_read_only(world: World) -> None:
    own = CaseSummary.objects.get(case=world.own_case)
    version = SummaryVersion.objects.filter(case=world.own_case).first()
    SummaryVersion.objects.filter(pk=version.pk).update(
        source_ids=["case:header", "deadline:no-such-deadline"],
        verification={"kept": 1, "dropped": [], "counts": {"kept": 1}},
    )
    http = _login(world.dana)
    summary_page = http.get(_url(CaseSummary, "change", own.pk)).content.decode()
    version_url = _url(SummaryVersion, "change", version.pk)
    every = _url(SummaryVersion, "changelist") + f"?case__id__exact={world.own_case.pk}"
    assert f"href='{version_url}'" in summary_page and f"href='{every}'" in summary_page
    listing = http.get(every)
    assert listing.status_code == 200
    page = listing.content.decode()
    assert "2026-014 Northwind / Castell acquisition" in page and SECRET not in page.lower()
    detail = http.get(version_url).content.decode()
    assert "Northwind buys Castell Components GmbH." in detail
    assert "Nothing was dropped." in detail
    # The case header links to the case; a record that is gone is named, not linked.
    assert f'<a href="{_url(Case, "change", world.own_case.pk)}">case:header</a>' in detail
    assert "<li>deadline:no-such-deadline</li>" in detail
    assert http.get(_url(SummaryVersion, "add")).status_code == 403
    assert http.post(version_url, {"text": "hand-written"}).status_code == 403
    assert http.post(_url(SummaryVersion, "delete", version.pk), {"post": "yes"}).status_code == 403
    history = http.get(_url(CaseSummary, "history", own.pk)).content.decode()
    assert 'id="gm-versions-link"' in history and every.replace("&", "&amp;") in history
    other = SummaryVersion.objects.filter(case=world.other_case).first()
    assert http.get(_url(SummaryVersion, "change", other.pk)).status_code == 404


def test_cited_records_link_to_their_admin_pages(world: World) -> None:
    deadline = Deadline.objects.filter(case=world.own_case).first()
    document = Document.objects.filter(case=world.own_case).first()
    CaseSummary.objects.filter(case=world.own_case).update(
        source_ids=[f"deadline:{deadline.key}", f"document:{document.key}#p2", f"client:{world.own_case.client.key}"]
    )
    summary = CaseSummary.objects.get(case=world.own_case)
    page = _login(world.dana).get(_url(CaseSummary, "change", summary.pk)).content.decode()
    assert f'<a href="{_url(Deadline, "change", deadline.pk)}">deadline:{deadline.key}</a>' in page
    assert f'<a href="{_url(Document, "change", document.pk)}">document:{document.key}#p2</a>' in page
    assert f'">client:{world.own_case.client.key}</a>' in page


# --- names, not ids -----------------------------------------------------------------------------


def test_every_object_is_named_by_names(world: World) -> None:
    case = world.own_case
    summary = CaseSummary.objects.get(case=case)
    assert str(summary) == "Summary of 2026-014 Northwind / Castell acquisition"
    version = SummaryVersion.objects.filter(case=case).first()
    assert str(version).startswith("Version of 2026-014 Northwind / Castell acquisition saved ")
    run = RefreshRun.objects.filter(firm=world.firm).first()
    assert str(run).startswith("Refresh of Hale & Ward LLP at ")
    call = AICall.objects.filter(case=case).first()
    assert str(call).startswith("Summary call for 2026-014 Northwind / Castell acquisition at ")
    edge = Edge.objects.filter(case_id=case.pk, kind=Edge.Kind.AGAINST).select_related("source", "target").first()
    assert str(edge) == "2026-014 Northwind / Castell acquisition is against Castell Components GmbH"
    assert str(Node.objects.get(firm=world.firm, kind=Node.Kind.CASE, ref_id=case.pk)).startswith("Case: 2026-014")
    against = CaseCounterparty.objects.filter(case=case).first()
    assert str(against) == f"{case} against {against.counterparty.name}"
    member = CaseTeamMember.objects.filter(case__firm=world.firm).select_related("case", "user").first()
    assert str(member) == f"{member.user} on {member.case}" and member.user.name in str(member)
    for text in map(str, (summary, version, run, call, edge, against, member)):
        assert not re.search(r"\b(case|firm) \d+\b", text), text


def test_admin_titles_and_inlines_use_names(world: World) -> None:
    http = _login(world.dana)
    summary = CaseSummary.objects.get(case=world.own_case)
    page = http.get(_url(CaseSummary, "change", summary.pk)).content.decode()
    assert "<h2>Summary of 2026-014 Northwind / Castell acquisition</h2>" in page
    case_page = http.get(_url(Case, "change", world.own_case.pk)).content.decode()
    party = CaseCounterparty.objects.filter(case=world.own_case).first().counterparty.name
    assert f"against {party}" in case_page
    assert not re.search(r"\d+ against \d+", case_page)


# --- columns ------------------------------------------------------------------------------------


def _request(user: Any) -> Any:
    request = RequestFactory().get("/")
    request.user = user
    return request


def _columns(page: str) -> list[str]:
    return re.findall(r'<th scope="col" class="[^"]*column-([\w-]+)', page)


def test_lists_fit_and_firm_admins_get_no_firm_column(world: World) -> None:
    root = UserFactory(username="root", firm=None, is_staff=True, is_superuser=True)
    dana, operator = _login(world.dana), _login(root)
    # The admins of the memory's core and of the reference host (lint and document-index admins are held
    # to the same rule by their own tests).
    core = {"graph_memory.admin", "practice.admin", "accounts.admin"}
    for model, model_admin in _scoped_admins():
        if type(model_admin).__module__ not in core:
            continue
        columns = _columns(dana.get(_url(model, "changelist")).content.decode())
        if not columns:  # an empty list draws no table
            assert not model_admin.get_queryset(_request(world.dana)).exists(), model
            continue
        # At most six data columns (plus the checkbox) fit 1400 px without scrolling.
        assert len([c for c in columns if c != "action-checkbox"]) <= 6, (model, columns)
        assert model_admin.firm_field not in columns, model
        if model_admin.firm_field == "firm" and "firm" in model_admin.list_display:
            assert "firm" in _columns(operator.get(_url(model, "changelist")).content.decode()), model


# --- one time zone, labelled --------------------------------------------------------------------


@pytest.fixture
def new_york(world: World) -> World:
    Firm.objects.filter(pk=world.firm.pk).update(timezone="America/New_York")
    RefreshRun.objects.filter(firm=world.firm).update(started_at=AT, finished_at=AT + dt.timedelta(minutes=2))
    SummaryVersion.objects.filter(firm=world.firm).update(created_at=AT)
    AICall.objects.filter(firm=world.firm).update(created_at=AT)
    CaseSummary.objects.filter(firm=world.firm).update(written_at=AT)
    world.firm.refresh_from_db()
    return world


def test_admin_shows_the_firms_time_zone_everywhere_labelled(new_york: World) -> None:
    http = _login(new_york.dana)
    summary = CaseSummary.objects.get(case=new_york.own_case)
    version = SummaryVersion.objects.filter(case=new_york.own_case).first()
    run = RefreshRun.objects.filter(firm=new_york.firm).first()
    pages = {
        "summaries": http.get(_url(CaseSummary, "changelist")),
        "summary": http.get(_url(CaseSummary, "change", summary.pk)),
        "versions": http.get(_url(SummaryVersion, "changelist")),
        "version": http.get(_url(SummaryVersion, "change", version.pk)),
        "runs": http.get(_url(RefreshRun, "changelist")),
        "run": http.get(_url(RefreshRun, "change", run.pk)),
        "calls": http.get(_url(AICall, "changelist")),
    }
    for name, response in pages.items():
        page = response.content.decode()
        assert response.status_code == 200, name
        assert "2026-12-01 03:31 EST" in page, name
        assert "08:31" not in page and "8:31 a.m." not in page, name
        assert 'id="gm-time-zone">Times in America/New_York.' in page, name
    health = http.get(reverse("admin:graph_memory_health")).content.decode()
    assert "03:31 EST" in health and 'id="gm-time-zone">Times in America/New_York.' in health


def test_the_api_stays_in_utc_with_an_offset(new_york: World) -> None:
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=new_york.dana)
    node = Node.objects.get(firm=new_york.firm, kind=Node.Kind.CASE, ref_id=new_york.own_case.pk)
    with timezone.override("America/New_York"):
        response = HttpClient().get(f"/api/memory/nodes/{node.pk}/brief/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 200
    [entry] = response.json()["cases"]
    assert entry["updated_at"] in ("2026-12-01T08:31:00Z", "2026-12-01T08:31:00+00:00")
    assert "2026-12-01 08:31 UTC" in response.json()["text"]


# --- the health page ----------------------------------------------------------------------------


def test_health_page_picks_the_case_by_autocomplete_and_draws_its_whole_name(world: World) -> None:
    http = _login(world.dana)
    page = http.get(reverse("admin:graph_memory_health"), {"case": world.own_case.pk}).content.decode()
    picker = page.split('id="gm-case-form"')[1].split("</form>")[0]
    assert 'class="admin-autocomplete' in picker and 'data-model-name="casesummary"' in picker
    assert picker.count("<option") == 1  # the chosen case only, never every case of the firm
    assert "autocomplete.js" in page
    picture = page.split('id="gm-map"')[1].split("</svg>")[0]
    centre = picture.split('class="gm-node gm-case"')[1].split("</g>")[0]
    drawn = " ".join(re.findall(r"<tspan[^>]*>([^<]*)</tspan>", centre))
    assert drawn == "2026-014 Northwind / Castell acquisition"
    # The picker's search answers the firm's cases only.
    found = http.get(
        "/admin/autocomplete/",
        {"app_label": "graph_memory", "model_name": "casesummary", "field_name": "case", "term": ""},
    ).json()["results"]
    assert found and not any(SECRET in r["text"].lower() for r in found)


def test_edge_labels_do_not_sit_where_the_spokes_meet(world: World) -> None:
    from graph_memory.admin.health import map_picture

    edges = list(Edge.objects.filter(case_id=world.own_case.pk).select_related("source", "target"))
    picture = map_picture(edges, case_ref_id=world.own_case.pk)
    spots = {(e.mx, e.my) for e in picture["edges"]}
    assert len(spots) == len(picture["edges"])
    for e in picture["edges"]:
        assert (e.mx, e.my) != (round((e.x1 + e.x2) / 2, 1), round((e.y1 + e.y2) / 2, 1))


def test_an_empty_tokens_chart_says_why(world: World) -> None:
    http = _login(world.dana)
    assert 'id="gm-tokens-none"' not in http.get(reverse("admin:graph_memory_health")).content.decode()
    AICall.objects.filter(firm=world.firm).update(tokens_in=0, tokens_out=0)
    page = http.get(reverse("admin:graph_memory_health")).content.decode()
    assert 'id="gm-tokens-none"' in page and "extractive writer" in page


def test_a_runs_embedding_counter_says_what_it_counts(world: World) -> None:
    run = RefreshRun.objects.filter(firm=world.firm).first()
    page = _login(world.dana).get(_url(RefreshRun, "change", run.pk)).content.decode()
    assert "Missing embeddings filled in" in page and "embedded by this run" in page
