"""Summaries written before summary-v3: served and marked `legacy` until the nightly refresh rewrites them, first."""

from __future__ import annotations

import datetime as dt
import importlib
from typing import Any

import pytest
from django.apps import apps
from django.utils import timezone

from accounts.models import Firm, User
from graph_memory import services
from graph_memory.models import CaseSummary, Node
from graph_memory.refresh import refresh_firm
from graph_memory.summaries.context import build_context
from graph_memory.summaries.guard import judge_rewrite
from graph_memory.summaries.rulebook import PROMPT_VERSION, SECTIONS, empty_content, render_text
from graph_memory.summaries.served import served_statements
from graph_memory.summaries.writers import ExtractiveWriter
from practice.models import Case
from tests.api_support import build_world
from tests.factories import CaseFactory, FirmFactory
from tests.refresh_support import SummarizeSpy

pytestmark = pytest.mark.django_db
migration = importlib.import_module("graph_memory.migrations.0015_legacy_summaries_stale")

# What summary-v2 stored: free text beside a verbatim quote. The text says more than the quote.
LEGACY_STATEMENT = {
    "text": "Castell has consented to the assignment.",
    "sources": ["document:spa-v3#p2"],
    "quote": "Escrow of EUR 4,800,000 held for 18 months.",
    "kind": "quote",
}


def legacy_content(case_id: int) -> dict[str, Any]:
    content = {section: list(statements) for section, statements in services.summarize_case(
        case_id=case_id, writer=ExtractiveWriter()).content.items()}  # fmt: skip
    content = {s: [x for x in v if x["kind"] == "field"] for s, v in content.items()}
    content["recent_activity"].append(LEGACY_STATEMENT)
    return content


def make_legacy(case: Case) -> None:
    content = legacy_content(case.pk)
    CaseSummary.objects.filter(case=case).update(
        content=content, text=render_text(content), prompt_version="summary-v2", stale=False, stale_since=None
    )


def test_the_migration_makes_every_legacy_summary_stale_and_leaves_current_ones(demo_firm: Firm) -> None:
    cases = list(Case.objects.filter(firm=demo_firm).order_by("pk"))
    for case in cases:
        services.summarize_case(case_id=case.pk, writer=ExtractiveWriter())
    make_legacy(cases[0])
    CaseSummary.objects.filter(case=cases[1]).update(prompt_version="summary-v1")
    CaseSummary.objects.filter(case=cases[2]).update(prompt_version="summary-v2", text="")  # never written

    migration.mark_legacy_stale(apps, None)

    stale = dict(CaseSummary.objects.values_list("case_id", "stale"))
    assert stale == {cases[0].pk: True, cases[1].pk: True, cases[2].pk: False, cases[3].pk: False}
    assert CaseSummary.objects.get(case=cases[0]).stale_since is not None


def test_the_nightly_refresh_rewrites_legacy_summaries_first(monkeypatch, settings) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "EMBEDDER": "none", "WRITER": "extractive"}
    firm = FirmFactory()
    cases = CaseFactory.create_batch(3, firm=firm)
    for case in cases:
        services.summarize_case(case_id=case.pk, writer=ExtractiveWriter())
    now = timezone.now()
    # The two current summaries have waited longest; the legacy one was flagged last.
    for days, case in zip([9, 7], cases[:2], strict=True):
        CaseSummary.objects.filter(case=case).update(stale=True, stale_since=now - dt.timedelta(days=days))
    CaseSummary.objects.filter(case=cases[2]).update(prompt_version="summary-v2", stale=True, stale_since=now)
    spy = SummarizeSpy(monkeypatch)

    run = refresh_firm(firm_id=firm.pk, limit=1)

    assert (run.claimed, spy.case_ids) == (1, [cases[2].pk])
    assert CaseSummary.objects.get(case=cases[2]).prompt_version == PROMPT_VERSION


def test_a_brief_marks_each_legacy_statement_and_a_rewrite_clears_it(
    demo_firm: Firm, demo_users: dict[str, User], settings, django_assert_num_queries
) -> None:
    world = build_world(demo_firm, demo_users, settings)
    case = Case.objects.get(firm=demo_firm, key="2026-014")
    make_legacy(case)
    node = Node.objects.get(kind=Node.Kind.CASE, ref_id=case.pk)

    plain = world.get("alice", f"/api/memory/nodes/{node.pk}/brief/").json()
    assert plain["cases"][0]["legacy"] is True and "statements" not in plain["cases"][0]
    body = world.get("alice", f"/api/memory/nodes/{node.pk}/brief/", {"statements": "true"}).json()
    assert body["cases"][0]["legacy"] is True
    statements = body["cases"][0]["statements"]
    legacy = [s for s in statements if s["legacy"]]
    assert [s["text"] for s in legacy] == [LEGACY_STATEMENT["text"]] and legacy[0]["kind"] == "quote"
    assert all(s["kind"] == "field" for s in statements if not s["legacy"])
    assert [s["text"] for s in statements] == [
        s["text"] for section in SECTIONS for s in CaseSummary.objects.get(case=case).content[section]
    ]

    services.summarize_case(case_id=case.pk, writer=ExtractiveWriter())
    body = world.get("alice", f"/api/memory/nodes/{node.pk}/brief/", {"statements": "true"}).json()
    statements = body["cases"][0]["statements"]
    assert statements and not any(s["legacy"] for s in statements) and body["cases"][0]["legacy"] is False
    assert {s["kind"] for s in statements} == {"field", "sentence"}
    client = Node.objects.get(kind=Node.Kind.CLIENT, label="Northwind Holdings, Inc.")
    with django_assert_num_queries(2):
        brief = services.node_brief(viewer=world.users["dana"], node_id=str(client.pk), statements=True)
    assert all(entry.statements for entry in brief.cases)
    with django_assert_num_queries(2) as captured:  # without statements, no summary's content is read
        lean = services.node_brief(viewer=world.users["dana"], node_id=str(client.pk))
    assert not any('"content"' in query["sql"] for query in captured.captured_queries)
    assert not any(entry.statements for entry in lean.cases) and not any(entry.legacy for entry in lean.cases)


def test_a_legacy_summary_protects_nothing_against_its_rewrite(demo_firm: Firm) -> None:
    case = Case.objects.get(firm=demo_firm, key="2026-014")
    context = build_context(case_id=case.pk)
    current = empty_content()
    current["recent_activity"] = [dict(LEGACY_STATEMENT, text=f"Statement {i}.") for i in range(12)]
    new = empty_content()
    new["money"] = [{"text": "Escrow of EUR 4,800,000 held for 18 months.", "sources": ["document:spa-v3#p2"],
                     "quote": "Escrow of EUR 4,800,000 held for 18 months.", "kind": "sentence"}]  # fmt: skip
    report = {"kept": 1, "counts": {"ids": 1, "ids_kept": 1}}
    assert judge_rewrite(current=current, new=new, report=report, context=context).ok
    # The same twelve as selected sentences would hold the rewrite back.
    current["recent_activity"] = [dict(s, kind="sentence", quote=s["text"]) for s in current["recent_activity"]]
    current["recent_activity"] = [dict(s, sources=["document:spa-v3#p2"]) for s in current["recent_activity"]]
    assert not judge_rewrite(current=current, new=new, report=report, context=context).ok


def test_unreadable_content_serves_no_statement() -> None:
    assert served_statements(None) == ()
    assert served_statements({"status": ["text", {"text": 3}, {"text": "ok", "kind": "field", "sources": ["x"]}]}) == (
        {"section": "status", "label": "", "text": "ok", "sources": ["x"], "kind": "field", "legacy": False,
         "instruction_like": False},
    )
