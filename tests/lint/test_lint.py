"""The lint pass (graph_memory/lint/): each kind of finding planted on a small firm, found, and gone once fixed."""

from __future__ import annotations

import datetime as dt
import io
import json
import uuid
from decimal import Decimal
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client as HttpClient
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from accounts.models import User
from graph_memory import lint, services
from graph_memory.lint import lint_firm
from graph_memory.map.graph import graph_drift_firm
from graph_memory.models import CaseSummary, Edge, LintFinding, LintRun, Node, RefreshRun
from graph_memory.refresh.schedule import LINT_TASK_NAME
from graph_memory.tasks import lint_all_firms_task, lint_firm_task
from graph_memory.vectors.embeddings import LocalEmbedder
from practice.models import Case, CaseCounterparty, Client, Counterparty, Deadline, Invoice, Note
from tests.cast import Cast
from tests.factories import (
    CaseFactory,
    ClientFactory,
    CounterpartyFactory,
    DeadlineFactory,
    DocumentFactory,
    FirmFactory,
    InvoiceFactory,
    NoteFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast(settings: Any) -> Any:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "extractive", "EMBEDDER": "none"}
    return settings


def _case(firm: Any, **kwargs: Any) -> Case:
    """A case with one of each record, its map built and its summary written (the extractive writer)."""
    case = CaseFactory(firm=firm, **kwargs)
    DeadlineFactory(case=case, key="reply", title="Reply to the claim", due=dt.date(2026, 12, 15))
    InvoiceFactory(case=case, key="inv1", number="INV-0042", amount=Decimal("1200.00"), status=Invoice.Status.SENT)
    NoteFactory(case=case, key="n1", title="Settlement", text="The client wants to settle before the hearing.")
    DocumentFactory(case=case, key="claim", title="Statement of claim", pages=["The claimant seeks damages."])
    return case


def _summarise(*cases: Case) -> None:
    for case in cases:
        services.summarize_case(case_id=case.pk)


def _world(firm: Any = None) -> tuple[Any, Case]:
    """A firm (lint-firm, or `firm`) with one case of every record, mapped and summarised."""
    firm = firm or FirmFactory(slug="lint-firm")
    case = _case(firm, counterparties=[CounterpartyFactory(firm=firm, key="cp-a", name="Bluewater Shipping Ltd")])
    services.graph_rebuild_firm(firm_id=firm.pk)
    _summarise(case)
    return firm, case


def _found(firm: Any, kind: str | None = None) -> list[tuple[str, str]]:
    run = lint_firm(firm_id=firm.pk)
    assert run.status == LintRun.Status.DONE, run.error
    rows = LintFinding.objects.filter(run=run)
    if kind:
        rows = rows.filter(kind=kind)
    return sorted(rows.values_list("kind", "code"))


def _finding(firm: Any, code: str) -> LintFinding:
    return LintFinding.objects.get(firm=firm, code=code)


def test_a_clean_firm_has_no_findings() -> None:
    firm, _ = _world()
    assert _found(firm) == []
    run = LintRun.objects.get(firm=firm)
    assert run.counts == dict.fromkeys(
        ["contradicted", "stale", "weak", "map_drift", "party_hygiene", "search_gap", "crossing_note", "instruction_like"], 0
    )


# --- contradicted by newer records ------------------------------------------------------------------


def test_a_deadline_done_contradicts_the_statement_that_it_is_open() -> None:
    firm, case = _world()
    Deadline.objects.filter(case=case, key="reply").update(done=True)
    assert _found(firm, "contradicted") == [("contradicted", "deadline_done")]
    done = _finding(firm, "deadline_done")
    assert done.case_id == case.pk and done.severity == "high"
    assert "Reply to the claim" in done.message and "open" in done.message and "done" in done.message
    assert done.records == [{"type": "source", "id": "deadline:reply", "statement": done.records[0]["statement"]}]
    _summarise(case)  # the fix: the nightly rewrite
    assert _found(firm, "contradicted") == []


def test_invoice_paid_case_closed_party_renamed_or_removed() -> None:
    firm, case = _world()
    Invoice.objects.filter(case=case).update(status=Invoice.Status.PAID)
    Case.objects.filter(pk=case.pk).update(status=Case.Status.CLOSED)
    Client.objects.filter(pk=case.client_id).update(name="Renamed Client GmbH")
    CaseCounterparty.objects.filter(case=case).delete()
    codes = {code for _, code in _found(firm, "contradicted")}
    assert {"invoice_status", "case_status", "party_renamed", "party_removed"} <= codes
    assert "is sent; it is paid now" in _finding(firm, "invoice_status").message
    assert "status Open; the case is Closed now" in _finding(firm, "case_status").message
    assert "Renamed Client GmbH" in _finding(firm, "party_renamed").message
    assert "Bluewater Shipping Ltd" in _finding(firm, "party_removed").message
    _summarise(case)
    assert _found(firm, "contradicted") == []


def test_a_cited_record_deleted_or_changed() -> None:
    firm, case = _world()
    Note.objects.filter(case=case, key="n1").update(text="Settlement is off the table.")
    assert _found(firm, "contradicted") == [("contradicted", "record_changed")]
    assert _finding(firm, "record_changed").records[0]["id"] == "note:n1"
    Note.objects.filter(case=case, key="n1").delete()
    # Both the note's field fact (its title) and the statement quoting it cite a record that is gone.
    assert _found(firm, "contradicted") == [("contradicted", "record_deleted")] * 2
    _summarise(case)
    assert _found(firm, "contradicted") == []


# --- stale too long ----------------------------------------------------------------------------------


def test_long_stale_cases_say_why(fast: Any) -> None:
    firm = FirmFactory(slug="stale-firm")
    cases = [_case(firm) for _ in range(4)]
    services.graph_rebuild_firm(firm_id=firm.pk)
    _summarise(*cases)
    now = timezone.now()
    long_ago = now - dt.timedelta(days=10)
    rows = CaseSummary.objects.filter(case_id__in=[c.pk for c in cases])
    rows.update(stale=True, stale_since=long_ago)
    rows.filter(case=cases[0]).update(attempts=3, next_attempt_after=now + dt.timedelta(days=2), last_error="timeout")
    rows.filter(case=cases[1]).update(attempts=1, last_error="no statement survived verification")
    rows.filter(case=cases[3]).update(stale_since=now - dt.timedelta(days=2))  # not too long yet
    assert _found(firm, "stale") == [("stale", "backing_off"), ("stale", "failing"), ("stale", "not_reached")]
    assert "stale for 10 nights" in _finding(firm, "backing_off").message
    assert "timeout" in _finding(firm, "backing_off").message
    RefreshRun.objects.create(firm=firm, status="done", tokens_used=5000)
    fast.GRAPH_MEMORY = {**fast.GRAPH_MEMORY, "NIGHTLY_TOKEN_BUDGET": 4000}
    assert ("stale", "over_budget") in _found(firm, "stale")
    fast.GRAPH_MEMORY = {**fast.GRAPH_MEMORY, "LINT_STALE_NIGHTS": 30}
    assert _found(firm, "stale") == []


def test_a_case_with_activity_and_no_summary() -> None:
    firm, _ = _world()
    quiet = CaseFactory(firm=firm)
    CaseSummary.objects.filter(case=quiet).delete()  # nothing flags it
    Case.objects.filter(pk=quiet.pk).update(updated_at=timezone.now() - dt.timedelta(days=9))
    services.graph_rebuild_firm(firm_id=firm.pk)
    assert _found(firm, "stale") == [("stale", "no_summary")]
    assert _finding(firm, "no_summary").case_id == quiet.pk
    services.mark_stale(case_ids=[quiet.pk])  # the fix: flagged, the nightly run writes it
    assert _found(firm, "stale") == []


# --- weak summaries ------------------------------------------------------------------------------------


def test_weak_summaries(fast: Any) -> None:
    firm, case = _world()
    row = CaseSummary.objects.get(case=case)
    good = row.verification
    # An older (summary-v2) report: written statements, dropped ones.
    row.verification = {**good, "counts": {"statements": 10, "dropped": 8, "kept": 2}}
    row.save(update_fields=["verification"])
    assert _found(firm, "weak") == [("weak", "many_dropped")]
    assert "dropped 8 of the 10" in _finding(firm, "many_dropped").message
    fast.GRAPH_MEMORY = {**fast.GRAPH_MEMORY, "LINT_WEAK_MANY_RECORDS": 4, "LINT_WEAK_MIN_STATEMENTS": 3}
    assert _found(firm, "weak") == [("weak", "few_statements"), ("weak", "many_dropped")]
    assert "holds 4 records" in _finding(firm, "few_statements").message
    row.verification = good
    row.save(update_fields=["verification"])
    fast.GRAPH_MEMORY = {**fast.GRAPH_MEMORY, "LINT_WEAK_MANY_RECORDS": 20}
    assert _found(firm, "weak") == []


def test_a_selection_that_lost_most_of_its_ids_is_weak(fast: Any) -> None:
    firm, case = _world()
    row = CaseSummary.objects.get(case=case)
    counts = row.verification["counts"]
    assert "ids" in counts and "dropped" not in counts  # the report summarize_case writes now
    row.verification = {**row.verification, "counts": {**counts, "ids": 10, "ids_kept": 2, "statements": 2, "kept": 2}}
    row.save(update_fields=["verification"])
    assert _found(firm, "weak") == [("weak", "many_dropped")]


# --- map drift -----------------------------------------------------------------------------------------


def test_map_drift_is_a_dry_run_of_the_rebuild() -> None:
    firm = FirmFactory(slug="drift-firm")
    case = CaseFactory(firm=firm)
    _summarise(case)
    assert {code for _, code in _found(firm, "map_drift")} == {"node_missing", "edge_drift"}
    assert not Node.objects.exists() and not Edge.objects.exists()  # the lint wrote nothing
    services.graph_rebuild_firm(firm_id=firm.pk)
    assert _found(firm, "map_drift") == []

    Client.objects.filter(pk=case.client_id).update(name="Quietly Renamed Ltd")  # no signal: the map drifts
    Node.objects.create(
        id=uuid.uuid4(), firm=firm, kind="counterparty", ref_id=999_999, label="Ghost", name_key="ghost"
    )
    Edge.objects.filter(case=case, kind="works_on").delete()
    before = (list(Node.objects.values_list("id", "label")), list(Edge.objects.values_list("id")))
    assert sorted(code for _, code in _found(firm, "map_drift")) == ["edge_drift", "node_relabelled", "orphan_node"]
    assert (list(Node.objects.values_list("id", "label")), list(Edge.objects.values_list("id"))) == before
    drift = _finding(firm, "edge_drift")
    assert drift.case_id == case.pk and [r["change"] for r in drift.records] == ["add"]
    assert "Quietly Renamed Ltd" in _finding(firm, "node_relabelled").message
    assert _finding(firm, "orphan_node").records[0]["label"] == "Ghost"
    services.graph_rebuild_firm(firm_id=firm.pk)
    assert _found(firm, "map_drift") == []


def test_graph_drift_reports_an_edge_a_rebuild_would_remove() -> None:
    firm = FirmFactory(slug="drift-two")
    case, other = CaseFactory(firm=firm), CaseFactory(firm=firm)
    services.graph_rebuild_firm(firm_id=firm.pk)
    lawyer = Node.objects.get(kind="lawyer", ref_id=other.owner_id)
    case_node = Node.objects.get(kind="case", ref_id=case.pk)
    Edge.objects.create(id=uuid.uuid4(), firm=firm, case=case, kind="works_on", source=lawyer, target=case_node)
    drift = graph_drift_firm(firm_id=firm.pk)
    assert [(e[1], e[2], e[3], e[4]) for e in drift.edges_extra] == [
        (case.pk, "works_on", ("lawyer", other.owner_id), ("case", case.pk))
    ]
    assert drift.edges_missing == [] and drift.nodes_missing == [] and drift.orphans == []


# --- party hygiene -------------------------------------------------------------------------------------


def test_party_hygiene_finds_collisions_near_duplicates_and_both_sides() -> None:
    firm = FirmFactory(slug="party-firm")
    acme = ClientFactory(firm=firm, key="acme", name="ACME Corp.")
    CaseFactory(firm=firm, client=acme)
    CaseFactory(firm=firm, counterparties=[CounterpartyFactory(firm=firm, key="acme-cp", name="Acme Corporation")])
    CaseFactory(firm=firm, counterparties=[CounterpartyFactory(firm=firm, key="nw1", name="Northwind Holdings")])
    CaseFactory(firm=firm, counterparties=[CounterpartyFactory(firm=firm, key="nw2", name="Nortwind Holdings")])
    CaseFactory(firm=firm, client=ClientFactory(firm=firm, key="b1", name="Beta Logistics LLC"))
    CaseFactory(firm=firm, client=ClientFactory(firm=firm, key="b2", name="BETA LOGISTICS, L.L.C."))
    services.graph_rebuild_firm(firm_id=firm.pk)
    assert _found(firm, "party_hygiene") == [
        ("party_hygiene", "client_and_counterparty"),
        ("party_hygiene", "near_duplicate"),
        ("party_hygiene", "same_name"),
    ]
    both = _finding(firm, "client_and_counterparty")
    assert both.severity == "high" and "ACME Corp." in both.message and "Acme Corporation" in both.message
    assert {r["kind"] for r in both.records} == {"client", "counterparty"}
    assert "similar" in _finding(firm, "near_duplicate").message
    Counterparty.objects.filter(key="acme-cp").update(name="Zenith Partners")
    Counterparty.objects.filter(key="nw2").update(name="Southwind Aviation")
    Client.objects.filter(key="b2").update(name="Gamma Freight")
    services.graph_rebuild_firm(firm_id=firm.pk)
    assert _found(firm, "party_hygiene") == []


# --- search gaps ---------------------------------------------------------------------------------------


def test_search_gaps(fast: Any) -> None:
    firm, _ = _world()
    second = _case(firm)
    services.graph_rebuild_firm(firm_id=firm.pk)
    _summarise(second)
    assert _found(firm, "search_gap") == []  # no embedder configured: keyword search is no gap
    fast.GRAPH_MEMORY = {**fast.GRAPH_MEMORY, "EMBEDDER": "local"}
    vector = [0.0] * 383 + [1.0]
    CaseSummary.objects.filter(case=second).update(embedding=vector, embedding_model="openai:old-model")
    assert _found(firm, "search_gap") == [("search_gap", "no_embedding"), ("search_gap", "old_model")]
    assert "openai:old-model" in _finding(firm, "old_model").message
    CaseSummary.objects.filter(firm=firm).update(embedding=vector, embedding_model=LocalEmbedder.model)
    assert _found(firm, "search_gap") == []


# --- runs, command, schedule, cost -----------------------------------------------------------------------


def test_the_next_run_replaces_the_last_and_firms_stay_apart() -> None:
    firm, case = _world()
    other = FirmFactory(slug="other-lint")
    _case(other)  # never mapped: drift in the other firm only
    Deadline.objects.filter(case=case).update(done=True)
    first = lint_firm(firm_id=firm.pk)
    lint_firm(firm_id=other.pk)
    assert LintFinding.objects.filter(run=first).exists()
    assert set(LintFinding.objects.filter(run=first).values_list("firm_id", flat=True)) == {firm.pk}
    assert not LintFinding.objects.filter(run=first, kind="map_drift").exists()
    second = lint_firm(firm_id=firm.pk)
    assert list(LintRun.objects.filter(firm=firm)) == [second]
    assert not LintFinding.objects.filter(run_id=first.pk).exists()
    assert LintRun.objects.filter(firm=other).count() == 1


def test_a_failing_check_keeps_the_previous_report(monkeypatch: pytest.MonkeyPatch) -> None:
    firm, case = _world()
    Deadline.objects.filter(case=case).update(done=True)
    good = lint_firm(firm_id=firm.pk)

    def broken(**kwargs: Any) -> list[Any]:
        raise RuntimeError("boom")

    checks = tuple((kind, broken if kind == "party_hygiene" else check) for kind, check in lint.CHECKS)
    monkeypatch.setattr(lint, "CHECKS", checks)
    bad = lint_firm(firm_id=firm.pk)
    assert bad.status == "failed" and "boom" in bad.error
    assert LintFinding.objects.filter(run=good).count() == sum(good.counts.values()) > 0
    assert not LintFinding.objects.filter(run=bad).exists()


def test_lint_memory_command_table_json_and_errors() -> None:
    _, case = _world()
    Deadline.objects.filter(case=case).update(done=True)
    out, err = io.StringIO(), io.StringIO()
    call_command("lint_memory", "--firm", "lint-firm", stdout=out, stderr=err)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == [
        "firm",
        "contradicted",
        "stale",
        "weak",
        "map_drift",
        "party_hygiene",
        "search_gap",
        "crossing_note",
        "instruction_like",
        "total",
    ]
    assert lines[2].split() == ["lint-firm", "1", "0", "0", "0", "0", "0", "0", "0", "1"]
    assert "8/8" in err.getvalue()  # the progress bar: one step per check
    out = io.StringIO()
    call_command("lint_memory", "--firm", "lint-firm", "--json", stdout=out, stderr=io.StringIO())
    report = json.loads(out.getvalue())
    assert [r["firm"] for r in report] == ["lint-firm"]
    assert [f["code"] for f in report[0]["findings"]] == ["deadline_done"]
    assert all(f["case_id"] == case.pk for f in report[0]["findings"])
    with pytest.raises(CommandError, match="unknown firm: nope"):
        call_command("lint_memory", "--firm", "nope", stdout=io.StringIO(), stderr=io.StringIO())


def test_the_weekly_schedule_and_the_tasks(fast: Any) -> None:
    fast.GRAPH_MEMORY = {**fast.GRAPH_MEMORY, "LINT_CRONTAB": "45 4 * * 6"}
    call_command("setup_memory_schedule", stdout=io.StringIO())
    call_command("setup_memory_schedule", stdout=io.StringIO())
    task = PeriodicTask.objects.get(name=LINT_TASK_NAME)
    assert (task.task, task.enabled, task.crontab.minute, task.crontab.hour, task.crontab.day_of_week) == (
        "graph_memory.lint_all_firms",
        True,
        "45",
        "4",
        "6",
    )
    assert PeriodicTask.objects.filter(task="graph_memory.lint_all_firms").count() == 1
    fast.GRAPH_MEMORY = {**fast.GRAPH_MEMORY, "LINT_CRONTAB": "every sunday"}
    with pytest.raises(CommandError, match="LINT_CRONTAB"):
        call_command("setup_memory_schedule", stdout=io.StringIO())
    assert PeriodicTask.objects.get(name=LINT_TASK_NAME).crontab.minute == "45"
    firm, _ = _world()
    assert lint_all_firms_task() == [firm.pk]
    run_id = lint_firm_task(firm.pk)
    assert LintRun.objects.get(pk=run_id).firm_id == firm.pk


def test_the_lint_costs_a_constant_number_of_queries() -> None:
    def queries(firm: Any) -> int:
        with CaptureQueriesContext(connection) as captured:
            lint_firm(firm_id=firm.pk)
        return len(captured)

    def planted(slug: str, n: int) -> Any:
        firm = FirmFactory(slug=slug)
        cases = [
            _case(firm, counterparties=[CounterpartyFactory(firm=firm, name=f"Party {slug} {i}")]) for i in range(n)
        ]
        services.graph_rebuild_firm(firm_id=firm.pk)
        _summarise(*cases)
        for case in cases:  # one finding of several kinds in every case
            Deadline.objects.filter(case=case).update(done=True)
            Note.objects.filter(case=case).delete()
        CaseSummary.objects.filter(firm=firm).update(stale=True, stale_since=timezone.now() - dt.timedelta(days=9))
        return firm

    small, large = planted("small-lint", 1), planted("large-lint", 5)
    assert queries(small) == queries(large)
    assert LintFinding.objects.filter(firm=large).count() > LintFinding.objects.filter(firm=small).count()


# --- admin -----------------------------------------------------------------------------------------------


def _login(user: User) -> HttpClient:
    http = HttpClient()
    http.force_login(user)
    return http


def test_admin_findings_are_firm_scoped_and_for_firm_admins_only(personas: Cast) -> None:
    firm, case = _world(personas.firm)
    Deadline.objects.filter(case=case).update(done=True)
    rival, admin = personas.other_firm, personas.firm_admin
    rival_case = _case(rival, title="Rival secret matter")
    services.graph_rebuild_firm(firm_id=rival.pk)
    _summarise(rival_case)
    Deadline.objects.filter(case=rival_case).update(done=True)
    Client.objects.filter(pk=rival_case.client_id).update(name="Rivalco Secret Client")
    lint_firm(firm_id=firm.pk)
    lint_firm(firm_id=rival.pk)
    staff_lawyer = UserFactory(firm=firm, username="lint-staff", is_staff=True)
    changelist = reverse("admin:graph_memory_lintfinding_changelist")

    page = _login(admin).get(changelist)
    assert page.status_code == 200
    body = page.content.decode()
    assert "Reply to the claim" in body and "Rivalco" not in body and "Rival secret" not in body
    theirs = LintFinding.objects.filter(firm=rival).first()
    assert _login(admin).get(reverse("admin:graph_memory_lintfinding_change", args=[theirs.pk])).status_code == 404
    assert _login(admin).get(reverse("admin:graph_memory_lintfinding_change", args=[10**9])).status_code == 404
    ours = LintFinding.objects.filter(firm=firm).first()
    assert _login(admin).get(reverse("admin:graph_memory_lintfinding_change", args=[ours.pk])).status_code == 200
    # A lawyer (even staff) sees no finding at all, party hygiene included; the other firm's admin none of ours.
    mine = reverse("admin:graph_memory_lintfinding_change", args=[ours.pk])
    for url in (changelist, mine):
        for lawyer in (personas.owner, staff_lawyer):
            assert _login(lawyer).get(url).status_code in (302, 403, 404)
    assert _login(personas.other_firm_admin).get(mine).status_code == 404


def test_party_hygiene_findings_reach_firm_admins_only(personas: Cast) -> None:
    firm = personas.firm
    CaseFactory(firm=firm, client=ClientFactory(firm=firm, key="acme", name="ACME Corp."))
    CaseFactory(firm=firm, counterparties=[CounterpartyFactory(firm=firm, key="acme-cp", name="Acme Corporation")])
    services.graph_rebuild_firm(firm_id=firm.pk)
    lint_firm(firm_id=firm.pk)
    pair = LintFinding.objects.get(code="client_and_counterparty")
    url = reverse("admin:graph_memory_lintfinding_change", args=[pair.pk])
    staff_lawyer = UserFactory(firm=firm, username="hygiene-lawyer", is_staff=True)
    for lawyer in (personas.owner, personas.outsider, staff_lawyer):  # a lawyer, even staff, sees none
        assert _login(lawyer).get(url).status_code in (302, 403, 404)
    assert _login(personas.other_firm_admin).get(url).status_code == 404
    assert "Acme Corporation" in _login(personas.firm_admin).get(url).content.decode()


def test_admin_fix_actions_enqueue_the_existing_fixes(fast: Any, django_capture_on_commit_callbacks: Any) -> None:
    firm = FirmFactory(slug="fix-firm")
    case = _case(firm)
    _summarise(case)
    quiet = CaseFactory(firm=firm)
    CaseSummary.objects.filter(case=quiet).delete()
    Case.objects.filter(pk=quiet.pk).update(updated_at=timezone.now() - dt.timedelta(days=9))
    lint_firm(firm_id=firm.pk)
    admin = UserFactory(firm=firm, username="fix-admin", role=User.Role.ADMIN)
    http = _login(admin)
    changelist = reverse("admin:graph_memory_lintfinding_changelist")

    def act(action: str, code: str) -> None:
        ids = list(LintFinding.objects.filter(firm=firm, code=code).values_list("pk", flat=True))
        assert ids, code
        response = http.post(changelist, {"action": action, "_selected_action": ids})
        assert response.status_code == 302

    act("mark_stale", "no_summary")
    assert CaseSummary.objects.get(case=quiet).stale
    with django_capture_on_commit_callbacks(execute=True) as enqueued:
        act("rebuild_graph", "edge_drift")
    assert len(enqueued) == 1  # one rebuild task for the one firm, sent on commit
    assert graph_drift_firm(firm_id=firm.pk).edges_missing == []  # the eager task ran on commit
    assert not [c for _, c in _found(firm, "map_drift")]


def test_health_page_shows_the_last_lint_counts_with_links() -> None:
    firm, case = _world()
    admin = UserFactory(firm=firm, username="health-admin", role=User.Role.ADMIN)
    http = _login(admin)
    assert "No lint run yet" in http.get(reverse("admin:graph_memory_health")).content.decode()
    Deadline.objects.filter(case=case).update(done=True)
    lint_firm(firm_id=firm.pk)
    body = http.get(reverse("admin:graph_memory_health")).content.decode()
    changelist = reverse("admin:graph_memory_lintfinding_changelist")
    assert f'<td id="gm-lint-contradicted"><a href="{changelist}?kind=contradicted">1</a></td>' in body
    assert f'<td id="gm-lint-stale"><a href="{changelist}?kind=stale">0</a></td>' in body
    listed = http.get(changelist, {"kind": "contradicted"}).content.decode()
    assert "Reply to the claim" in listed


def test_on_the_demo_a_deadline_marked_done_is_reported(demo_firm: Any) -> None:
    services.graph_rebuild_firm(firm_id=demo_firm.pk)
    _summarise(*Case.objects.filter(firm=demo_firm).order_by("pk"))
    # The demo's one finding before: its client Northwind is a counterparty in another case.
    assert _found(demo_firm) == [("party_hygiene", "client_and_counterparty")]
    deadline = Deadline.objects.filter(case__firm=demo_firm, done=False).order_by("pk").first()
    deadline.done = True
    deadline.save()  # as the host does it: the case is flagged stale too
    assert ("contradicted", "deadline_done") in _found(demo_firm)
    finding = _finding(demo_firm, "deadline_done")
    assert finding.case_id == deadline.case_id and deadline.title in finding.message
    assert finding.records[0]["id"] == f"deadline:{deadline.key}" and finding.records[0]["statement"].endswith("open.")


def test_system_checks_name_a_bad_lint_setting(fast: Any) -> None:
    from graph_memory.checks import check_lint_settings

    assert check_lint_settings() == []
    fast.GRAPH_MEMORY = {
        **fast.GRAPH_MEMORY, "LINT_CRONTAB": "0 25 * * 0", "LINT_STALE_NIGHTS": -1, "LINT_WEAK_DROPPED_SHARE": 1.5,
    }  # fmt: skip
    errors = check_lint_settings()
    assert [e.id for e in errors] == ["graph_memory.E100", "graph_memory.E101", "graph_memory.E102"]
    assert "LINT_CRONTAB" in errors[0].msg and "LINT_STALE_NIGHTS" in errors[1].msg


def test_a_flagged_case_never_summarised_is_stale_too_long() -> None:
    firm, _ = _world()
    waiting = CaseFactory(firm=firm)  # flagged stale on creation, never written
    CaseSummary.objects.filter(case=waiting).update(stale=True, stale_since=timezone.now() - dt.timedelta(days=12))
    services.graph_rebuild_firm(firm_id=firm.pk)
    assert _found(firm, "stale") == [("stale", "not_reached")]
    assert "never been summarised" in _finding(firm, "not_reached").message
