"""Every admin page of the demo as dana (its firm admin, America/New_York) reads like a product (issue 32, item 1).

The walk (`tests/admin_walk.py`, which `make screenshots` draws too) opens every changelist, change, history,
delete, add and custom page dana may open on the demo as `make demo` leaves it, plus one row of each kind the
demo does not make (an exclusion, a refused note, an AI call, an assistant-filed note): each page says its one
time zone and shows no unlabelled time, no raw JSON object, no bare id and no stored code. Then one test per
finding of the issue.
"""

from __future__ import annotations

import datetime as dt
import io
import logging
import re
from typing import Any

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.core.management import call_command
from django.test import Client as HttpClient
from django.urls import reverse
from django.utils import timezone

from accounts.models import Firm, User
from graph_memory import services
from graph_memory.ledger import served_chain
from graph_memory.models import AICall, CaseSummary, LintFinding, LintRun, Node, NoteRefusal
from practice.models import Case, Document, Draft, Note
from tests.admin_walk import admin_pages, page_problems, visible_text
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

ZONE = "America/New_York"
# 08:31 UTC on 1 December is 03:31 in New York (EST, UTC-5).
AT = dt.datetime(2026, 12, 1, 8, 31, tzinfo=dt.UTC)
PAGE_MAX_BYTES = 120_000


def _login(user: User) -> HttpClient:
    http = HttpClient()
    http.force_login(user)
    return http


@pytest.fixture
def demo(demo_firm: Firm, settings: Any, capsys: pytest.CaptureFixture[str]) -> Firm:
    """The demo as `make demo` prepares it (its long document, map, summaries, lint run and question), the
    assistant's API asked once, and a row of each kind the demo itself never writes."""
    from demo import run

    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "EMBEDDER": "none", "WRITER": "extractive"}
    tokens = run.prepare()
    capsys.readouterr()
    assert demo_firm.timezone == ZONE
    HttpClient().get("/api/memory/search/", {"q": "lease dispute"}, HTTP_AUTHORIZATION=f"Token {tokens['alice']}")
    served_chain.seal_all()
    users = {u.username: u for u in User.objects.filter(firm=demo_firm)}
    cases = {c.key: c for c in Case.objects.filter(firm=demo_firm)}
    acquisition, lease = cases["2026-014"], cases["2025-088"]
    call = AICall.objects.create(
        firm=demo_firm, case=acquisition, purpose="summary", writer="openai", model="gpt-4o-mini", outcome="rejected",
        tokens_in=900, tokens_out=120, latency_ms=800, request_mode="json_schema",
        report={"points": 4, "ids": 6, "ids_kept": 5, "unknown_id": 1},
    )  # fmt: skip
    AICall.objects.filter(pk=call.pk).update(created_at=AT)
    NoteRefusal.objects.create(
        firm=demo_firm, case=acquisition, filer=users["alice"], kinds=["party", "amount"],
        source_case_ids=[lease.pk], matches=2,
    )  # fmt: skip
    Note.objects.create(
        firm=demo_firm, case=lease, key="filed-1", author=users["alice"], created=AT, text="Mediation moved to May.",
        origin={"conversation_id": "conv-7", "message_ids": ["m-1", "m-2"]},
    )  # fmt: skip
    # An exclusion, as dana makes one: the consent action on a client of the map, with a reason.
    client = Node.objects.get(firm=demo_firm, kind=Node.Kind.CLIENT, label="Brightline Logistics LLC")
    response = _login(users["dana"]).post(
        reverse("admin:graph_memory_node_changelist"),
        {"action": "exclude_from_memory", "_selected_action": [client.pk], "reason": "Engagement letter", "apply": "1"},
    )
    assert response.status_code == 302
    return demo_firm


def test_every_admin_page_of_the_demo_reads_like_a_product(demo: Firm) -> None:
    dana = User.objects.get(username="dana")
    http = _login(dana)
    pages = admin_pages(dana)
    names = {name for name, _ in pages}
    # Every kind of page is walked: each model's list and a row's page, the custom pages.
    for expected in ("index", "graph_memory_lintrun-change", "graph_memory_lintfinding-change",
                     "graph_memory_casesummary-change", "graph_memory_memoryexclusion-change",
                     "graph_memory_noterefusal-change", "graph_memory_aicall-change", "graph_memory_servedrow-change",
                     "practice_document-change", "practice_note-history", "health-case", "access-question-user"):  # fmt: skip
        assert expected in names, expected
    problems: list[str] = []
    for name, url in pages:
        response = http.get(url)
        assert response.status_code == 200, (name, url, response.status_code)
        assert len(response.content) < PAGE_MAX_BYTES, (name, len(response.content))
        problems += [f"{name}: {p}" for p in page_problems(response.content.decode(), zone=ZONE)]
    assert problems == [], "\n".join(problems)


def test_the_walk_sees_what_it_looks_for() -> None:
    # Each rule of the walk on a page as admin rendered it before issue 32.
    before = (
        '<title>Lint of firm 1 at 2026-12-02 02:29 | View lint run</title><body><span id="gm-time-zone">Times in UTC.'
        "</span><div>Finished at: Dec. 1, 2026, 9:29 p.m.</div><div>Counts: {&quot;weak&quot;: 0}</div>"
        "<div>Code: client_and_counterparty</div><div>From 2026-12-02T11:48:08-05:00</div>"
        "<div>Documents: [&quot;spa-signed&quot;]</div><div>Viewer id: 5</div></body>"
    )
    problems = "\n".join(page_problems(before, zone=ZONE))
    for said in ("header does not say", "title: an unlabelled time", "title: a bare id", "text: raw JSON",
                 "a stored code", "9:29 p.m.", "2026-12-02T11:48", "Viewer id: 5", "spa-signed"):  # fmt: skip
        assert said in problems, said
    after = (
        '<title>Lint of Hale &amp; Ward LLP at 2026-12-01 21:29 EST</title><body><span id="gm-time-zone">Times in '
        f"{ZONE}.</span><div>Finished: 2026-12-01 21:29 EST · 2026-014 Northwind / Castell acquisition</div></body>"
    )
    assert page_problems(after, zone=ZONE) == []


# --- 1. one time zone, labelled, in titles and history too -------------------------------------


@pytest.fixture
def world(demo_firm: Firm, demo_users: dict[str, User]) -> dict[str, Any]:
    services.graph_rebuild_firm(firm_id=demo_firm.pk)
    services.mark_stale(case_ids=Case.objects.filter(firm=demo_firm).values("pk"))
    services.refresh_firm(firm_id=demo_firm.pk, trigger="command")
    run = services.lint_firm(firm_id=demo_firm.pk, trigger="command")
    LintRun.objects.filter(pk=run.pk).update(started_at=AT, finished_at=AT + dt.timedelta(minutes=2))
    return {"firm": demo_firm, "dana": demo_users["dana"], "run": LintRun.objects.get(pk=run.pk)}


def test_the_admin_index_says_the_firms_zone(world: dict[str, Any]) -> None:
    index = _login(world["dana"]).get("/admin/").content.decode()
    assert f'id="gm-time-zone">Times in {ZONE}.' in index


def test_a_lint_run_is_titled_by_its_firm_and_its_local_time(world: dict[str, Any]) -> None:
    page = _login(world["dana"]).get(reverse("admin:graph_memory_lintrun_change", args=[world["run"].pk]))
    text = visible_text(page.content.decode())
    assert "Lint of Hale & Ward LLP at 2026-12-01 03:31 EST" in text  # the title: the firm's name, its zone
    assert "Finished: 2026-12-01 03:33 EST" in text
    assert "firm 1" not in text.lower() and "08:31" not in text and "a.m." not in text


def test_history_pages_label_their_times(world: dict[str, Any]) -> None:
    summary = CaseSummary.objects.filter(firm=world["firm"]).first()
    http = _login(world["dana"])
    for obj, url in ((summary, reverse("admin:graph_memory_casesummary_history", args=[summary.pk])),
                     (world["firm"], reverse("admin:accounts_firm_history", args=[world["firm"].pk]))):  # fmt: skip
        LogEntry.objects.log_actions(user_id=world["dana"].pk, queryset=[obj], action_flag=CHANGE, change_message="x")
        LogEntry.objects.filter(object_id=str(obj.pk)).update(action_time=AT)
        text = visible_text(http.get(url).content.decode())
        assert "2026-12-01 03:31 EST" in text, url
        assert "a.m." not in text and "Dec. 1" not in text, url


def test_a_time_typed_into_a_form_is_read_in_the_firms_zone(world: dict[str, Any]) -> None:
    draft = Draft.objects.filter(firm=world["firm"]).first()
    url = reverse("admin:practice_draft_change", args=[draft.pk])
    page = _login(world["dana"]).get(url).content.decode()
    assert f"In {ZONE}." in page  # the field says which zone it reads
    data = {"firm": world["firm"].pk, "key": draft.key, "case": draft.case_id, "title": draft.title,
            "created_0": "2026-12-01", "created_1": "03:31:00", "text": draft.text}  # fmt: skip
    assert _login(world["dana"]).post(url, data).status_code == 302
    assert Draft.objects.get(pk=draft.pk).created == AT  # 03:31 in New York is 08:31 UTC


# --- 2. no raw internals: JSON as tables, codes in words ----------------------------------------


def test_the_summary_page_shows_the_last_attempt_once_as_a_table(world: dict[str, Any]) -> None:
    summary = CaseSummary.objects.filter(firm=world["firm"]).exclude(last_attempt={}).first()
    url = reverse("admin:graph_memory_casesummary_change", args=[summary.pk])
    page = _login(world["dana"]).get(url).content.decode()
    assert page.count(">Last attempt:<") == 1 and ">Last attempt at:<" in page
    assert "regression guard" in page and "sentence ids selected" in page
    assert '{"' not in page and "&quot;guard&quot;" not in page and "details (as stored)" not in page
    operator = UserFactory(username="root", firm=None, is_staff=True, is_superuser=True)
    raw = _login(operator).get(url).content.decode()
    assert "details (as stored)" in raw and "&quot;guard&quot;" in raw  # folded away, for operators


def test_a_lint_runs_counts_and_codes_are_words(world: dict[str, Any]) -> None:
    http = _login(world["dana"])
    runs = visible_text(http.get(reverse("admin:graph_memory_lintrun_changelist")).content.decode())
    assert "1 finding: 1 party hygiene" in runs or re.search(r"\d+ findings: [^{]*1 party hygiene", runs)
    assert "{" not in runs and "party_hygiene" not in runs
    finding = LintFinding.objects.get(firm=world["firm"], code="client_and_counterparty")
    page = visible_text(http.get(reverse("admin:graph_memory_lintfinding_change", args=[finding.pk])).content.decode())
    assert "client of one case, counterparty of another" in page and "client_and_counterparty" not in page
    assert "2026-014 Northwind / Castell acquisition" in page  # the records' cases by name, not [1]
    listed = visible_text(http.get(reverse("admin:graph_memory_lintfinding_changelist")).content.decode())
    assert "client_and_counterparty" not in listed


# --- 3. messages, fixes where they apply, long documents, the demo's lint, the command ----------


def _post_action(http: HttpClient, model: str, action: str, ids: list[Any]) -> str:
    url = reverse(f"admin:graph_memory_{model}_changelist")
    return http.post(url, {"action": action, "_selected_action": ids}, follow=True).content.decode()


def test_messages_count_in_words(world: dict[str, Any]) -> None:
    http = _login(world["dana"])
    summary = CaseSummary.objects.filter(firm=world["firm"]).first()
    assert "Marked 1 case summary stale." in _post_action(http, "casesummary", "mark_stale", [summary.pk])
    assert "Regenerated 1 case summary." in _post_action(http, "casesummary", "regenerate_now", [summary.pk])
    both = list(CaseSummary.objects.filter(firm=world["firm"]).values_list("pk", flat=True)[:2])
    assert "Marked 2 case summaries stale." in _post_action(http, "casesummary", "mark_stale", both)


def test_fix_actions_are_offered_and_applied_only_where_they_apply(world: dict[str, Any]) -> None:
    http = _login(world["dana"])
    changelist = reverse("admin:graph_memory_lintfinding_changelist")

    def offered(kind: str) -> set[str]:
        page = http.get(changelist, {"kind__exact": kind}).content.decode()
        return set(re.findall(r'<option value="(\w+)">Fix:', page))

    assert offered("party_hygiene") == set()  # fixed in the records: no mechanical fix offered
    assert offered("map_drift") == {"rebuild_graph"}
    assert offered("contradicted") == {"mark_stale"}
    pair = LintFinding.objects.get(firm=world["firm"], code="client_and_counterparty")
    page = http.get(reverse("admin:graph_memory_lintfinding_change", args=[pair.pk])).content.decode()
    assert "fix the records themselves" in page
    stale_before = set(CaseSummary.objects.filter(firm=world["firm"], stale=True).values_list("pk", flat=True))
    said = _post_action(http, "lintfinding", "mark_stale", [pair.pk])
    assert "1 selected finding is not fixed by this" in said and "Marked" not in said
    assert set(CaseSummary.objects.filter(firm=world["firm"], stale=True).values_list("pk", flat=True)) == stale_before


def test_a_long_documents_admin_page_shows_one_page_at_a_time(demo_firm: Firm, demo_users: dict[str, User]) -> None:
    from demo import run

    run.add_long_document(demo_firm)
    document = Document.objects.get(firm=demo_firm, key="spa-signed")
    url = reverse("admin:practice_document_change", args=[document.pk])
    http = _login(demo_users["dana"])
    first = http.get(url)
    assert first.status_code == 200 and len(first.content) < 60_000  # was 693 KB: all 390 pages
    assert "Page <strong>1</strong> of 390" in first.content.decode()
    page = http.get(url, {"page": 54}).content.decode()
    assert "Page <strong>54</strong> of 390" in page and "The Escrow Amount of EUR 4,800,000" in page
    assert 'href="?page=53">previous' in page and 'href="?page=55">next' in page
    assert "Page <strong>390</strong> of 390" in http.get(url, {"page": 9999}).content.decode()


def test_lint_memory_prints_its_summary_after_the_bar(world: dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    out, err = io.StringIO(), io.StringIO()
    with caplog.at_level(logging.INFO, logger="graph_memory"):
        call_command("lint_memory", "--firm", "hale-ward", stdout=out, stderr=err)
    # The lint's own line per firm would land inside the bar's line (the bar redraws it with "\r"); the
    # table after the bar says the same.
    assert not [r for r in caplog.records if r.getMessage().startswith("lint of firm")]
    assert err.getvalue().rstrip().endswith("hale-ward]") and "8/8" in err.getvalue()
    assert out.getvalue().splitlines()[0].startswith("firm ")
    services.lint_firm(firm_id=world["firm"].pk)  # outside the command it still logs, in words
    [line] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("lint of firm")]
    assert re.fullmatch(r"lint of firm \d+: \d+ findings?: .*party hygiene.*", line) and "{" not in line


def test_the_api_keeps_utc_while_admin_is_in_the_firms_zone(world: dict[str, Any]) -> None:
    # The middleware runs admin requests only in the firm's zone: an API answer of the same user stays UTC.
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=world["dana"])
    summary = CaseSummary.objects.filter(firm=world["firm"]).first()
    CaseSummary.objects.filter(pk=summary.pk).update(written_at=AT)
    node = Node.objects.get(firm=world["firm"], kind=Node.Kind.CASE, ref_id=summary.case_id)
    response = HttpClient().get(f"/api/memory/nodes/{node.pk}/brief/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 200
    assert "2026-12-01 08:31 UTC" in response.json()["text"]
    assert timezone.get_current_timezone_name() == "UTC"  # nothing leaks out of the request
