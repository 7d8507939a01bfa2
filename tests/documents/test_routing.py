"""The routing index of a long document: sections and verified terms, offline and by a model; stale flags; nightly rebuilds."""

from __future__ import annotations

import json
import re

import pytest

from graph_memory.documents.offline import section_text
from graph_memory.documents.routing import (
    IndexFailed,
    build_document_index,
    build_sections_offline,
    mark_documents_stale,
    rebuild_stale_indexes,
)
from graph_memory.documents.terms import TermCheck, contains_term, normalise
from graph_memory.models import AICall, DocumentIndex, DocumentQuery, RefreshRun
from graph_memory.refresh.nightly import refresh_firm
from practice.models import Document
from tests.document_support import doc_world
from tests.factories import DocumentFactory
from tests.long_documents import long_agreement
from tests.openai_server import Reply

OPENAI = {"WRITER": "openai", "EMBEDDER": "none", "OPENAI_MAX_RETRIES": 0, "DOCUMENT_MODEL_MIN_PAGES": 1}


@pytest.fixture
def offline(settings):
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "extractive", "EMBEDDER": "none"}


# --- the literal check ---------------------------------------------------------------------------


def test_a_term_is_found_ignoring_case_spacing_quotes_and_dashes_but_only_on_word_boundaries() -> None:
    page = normalise("The  ESCROW\n   Amount is held by the \u201cEscrow Agent\u201d \u2013 see the taxonomy.")
    assert contains_term(page, "escrow amount")
    assert contains_term(page, '"escrow agent" - see')
    assert not contains_term(page, "tax")  # a word inside another word is not the word
    assert not contains_term(page, "escrow release")


def test_term_check_drops_invented_and_cross_contaminated_terms_and_counts_them() -> None:
    pages = ["ARTICLE 1 ESCROW\nThe Escrow Amount is held.", "ARTICLE 2 CONDITIONS\nThe Long Stop Date applies."]
    check = TermCheck.of(pages)
    kept = check.keep("article-1", ["Escrow Amount", "long stop date", "escrow waterfall", "ESCROW AMOUNT"],
                      section_text(pages, 1, 1), limit=10)  # fmt: skip
    assert kept == ["Escrow Amount"]
    report = check.report()
    assert (report["proposed"], report["kept"], report["dropped"]) == (4, 1, 3)
    assert report["dropped_by_reason"] == {"duplicate": 1, "in_other_section": 1, "not_in_document": 1}
    assert {"section": "article-1", "term": "long stop date", "reason": "in_other_section"} in report["examples"]


# --- offline -------------------------------------------------------------------------------------


def test_offline_sections_follow_the_articles_and_every_term_is_on_its_pages() -> None:
    pages, _ = long_agreement(articles=6, pages_per_article=5)
    built = build_sections_offline(pages)
    assert [s.id for s in built.sections] == [f"article-{n}" for n in range(1, 7)]
    escrow = built.sections[4]
    assert (escrow.title, escrow.first_page, escrow.last_page) == ("ARTICLE 5 ESCROW", 21, 25)
    assert "Release of the Escrow Amount" in escrow.terms and "escrow amount" in escrow.terms
    assert escrow.covers == "Covers: Appointment of the Escrow Agent; Release of the Escrow Amount"
    for section in built.sections:
        text = section_text(pages, section.first_page, section.last_page)
        assert section.terms and all(contains_term(text, term) for term in section.terms), section.id
    assert built.report["proposed"] == built.report["kept"] + built.report["dropped"]
    # Stable ids: the same text gives the same sections.
    assert [s.as_dict() for s in build_sections_offline(pages).sections] == [s.as_dict() for s in built.sections]


def test_a_document_without_headings_gets_page_windows_and_long_sections_are_split(settings) -> None:
    plain = [f"Witness statement, continued. The witness saw the forklift on day {i}." for i in range(1, 24)]
    built = build_sections_offline(plain)
    assert [(s.id, s.first_page, s.last_page) for s in built.sections] == [
        ("pages-1-10", 1, 10), ("pages-11-20", 11, 20), ("pages-21-23", 21, 23)]  # fmt: skip
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "DOCUMENT_SECTION_MAX_PAGES": 2}
    pages, _ = long_agreement(articles=2, pages_per_article=5)
    ids = [(s.id, s.first_page, s.last_page) for s in build_sections_offline(pages).sections]
    assert ids[:3] == [("article-1-part-1", 1, 2), ("article-1-part-2", 3, 4), ("article-1-part-3", 5, 5)]


def test_building_stores_the_index_and_clears_the_flag(personas, offline) -> None:
    world = doc_world(personas)
    row = DocumentIndex.objects.get(case=world.case, document_key="spa")  # flagged when the document was saved
    assert row.stale and not row.built
    index = build_document_index(case_id=world.case.pk, key="spa")
    assert index.built and not index.stale and index.builder == "extractive"
    assert index.page_count == len(world.pages) and len(index.sections) == 8
    assert index.report["kept"] > 0 and AICall.objects.count() == 0  # offline: no model call


# --- stale flags ---------------------------------------------------------------------------------


def test_a_change_to_a_processed_document_flags_its_index_and_an_upload_does_not(personas, offline) -> None:
    world = doc_world(personas)
    index = build_document_index(case_id=world.case.pk, key="spa")
    world.document.pages = [*world.pages, "An added page."]
    world.document.save()
    index.refresh_from_db()
    assert index.stale and index.generation == 2
    DocumentFactory(case=world.case, key="draft-scan", status=Document.Status.UPLOADED)
    assert not DocumentIndex.objects.filter(document_key="draft-scan").exists()
    assert mark_documents_stale(documents=[(world.case.pk, "spa"), (10**9, "nope")]) == 1


def test_a_change_during_the_build_keeps_the_index_stale(personas, offline, monkeypatch) -> None:
    world = doc_world(personas)
    from graph_memory.documents import routing as module

    real = module.build_sections_offline

    def change_midway(pages):
        mark_documents_stale(documents=[(world.case.pk, "spa")])
        return real(pages)

    monkeypatch.setattr(module, "build_sections_offline", change_midway)
    index = build_document_index(case_id=world.case.pk, key="spa")
    assert index.built and index.stale


def test_a_document_gone_or_no_longer_processed_loses_its_index(personas, offline) -> None:
    world = doc_world(personas)
    build_document_index(case_id=world.case.pk, key="spa")
    Document.objects.filter(pk=world.document.pk).update(status=Document.Status.FAILED)
    assert build_document_index(case_id=world.case.pk, key="spa") is None
    assert not DocumentIndex.objects.filter(document_key="spa").exists()


# --- nightly -------------------------------------------------------------------------------------


def test_the_nightly_run_rebuilds_flagged_indexes_of_its_firm_within_the_batch(personas, offline, settings) -> None:
    world = doc_world(personas)
    DocumentFactory(case=world.case, key="memo", pages=["ARTICLE 1 SCOPE\nScope.", "ARTICLE 2 TERM\nTerm."])
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "NIGHTLY_DOCUMENT_BATCH_SIZE": 2}
    run = refresh_firm(firm_id=personas.firm.pk)
    assert run.status == RefreshRun.Status.DONE
    built = DocumentIndex.objects.filter(firm=personas.firm, built_at__isnull=False)
    assert built.count() == 2 and not built.filter(stale=True).exists()
    # The other firm's run touches none of this firm's indexes.
    mark_documents_stale(documents=[(world.case.pk, "spa")])
    refresh_firm(firm_id=personas.other_firm_admin.firm_id)
    assert DocumentIndex.objects.get(case=world.case, document_key="spa").stale


def test_rebuilds_stop_once_the_budget_is_spent(personas, openai_server, settings) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **OPENAI, "DOCUMENT_INDEX_BATCH_PAGES": 100}
    doc_world(personas, articles=2, pages_per_article=2)
    DocumentFactory(case=personas.case, key="memo", pages=["ARTICLE 1 SCOPE\nScope of the memo."])
    section = {"title": "Scope", "first_page": 1, "last_page": 1, "terms": ["scope"], "covers": "Scope."}
    openai_server.default_chat = Reply.json({"sections": [section]}, prompt_tokens=900, completion_tokens=100)
    result = rebuild_stale_indexes(firm_id=personas.firm.pk, budget=1000)
    # The build that crosses the budget is finished, not cut off; the next is left for tomorrow.
    assert (result.rebuilt, result.tokens) == (1, 1000)
    assert DocumentIndex.objects.filter(firm=personas.firm, stale=True).count() == 2


# --- by a model ----------------------------------------------------------------------------------


def test_model_terms_that_are_not_on_their_pages_are_dropped_and_counted(personas, openai_server, settings) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **OPENAI, "DOCUMENT_INDEX_BATCH_PAGES": 4}
    world = doc_world(personas, articles=6, pages_per_article=4)  # 24 pages: six batches of four
    batches = []
    for n in range(1, 7):
        first = (n - 1) * 4 + 1
        terms = [f"Article {n}", "Interpretation"] if n != 5 else [
            "Escrow Amount", "escrow agent", "Long Stop Date",  # Long Stop Date: only in article 6
            "escrow waterfall", "ESCROW AMOUNT"]  # invented; a duplicate  # fmt: skip
        batches.append(Reply.json({"sections": [
            {"title": f"Article {n}", "first_page": first, "last_page": first + 3, "terms": terms, "covers": "x"}]}))
    openai_server.add_chat(*batches)
    index = build_document_index(case_id=world.case.pk, key="spa")
    escrow = next(s for s in index.sections if s["first_page"] == 17)
    assert escrow["terms"] == ["Escrow Amount", "escrow agent"]
    assert index.builder == "openai" and not index.stale
    report = index.report
    assert report["dropped_by_reason"]["in_other_section"] >= 1 and report["dropped_by_reason"]["not_in_document"] >= 1
    assert {"section": escrow["id"], "term": "Long Stop Date", "reason": "in_other_section"} in report["examples"]
    assert {"section": escrow["id"], "term": "escrow waterfall", "reason": "not_in_document"} in report["examples"]
    assert report["proposed"] == report["kept"] + report["dropped"]
    # Each batch was one bounded, structured, temperature-0 call, logged with its own counts.
    requests = openai_server.chat_requests()
    assert len(requests) == 6 and all(r["temperature"] == 0 for r in requests)
    assert requests[0]["response_format"]["json_schema"]["name"] == "document_index"
    assert "page 5 ===" in requests[1]["messages"][1]["content"] and "page 9 ===" not in requests[1]["messages"][1]["content"]
    calls = AICall.objects.filter(purpose=AICall.Purpose.DOCUMENT_INDEX).order_by("id")
    assert calls.count() == 6 and calls[4].report == {"proposed": 5, "kept": 2, "dropped": 3}
    assert "escrow waterfall" not in json.dumps(list(calls.values()), default=str)


def test_a_model_that_fails_leaves_the_previous_index_and_the_flag(personas, openai_server, settings) -> None:
    world = doc_world(personas, articles=2, pages_per_article=2)
    previous = build_document_index(case_id=world.case.pk, key="spa", offline=True)
    mark_documents_stale(documents=[(world.case.pk, "spa")])
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **OPENAI}
    openai_server.add_chat(Reply.raw("this is not JSON"))
    with pytest.raises(IndexFailed, match="malformed JSON"):
        build_document_index(case_id=world.case.pk, key="spa")
    row = DocumentIndex.objects.get(pk=previous.pk)
    assert row.sections == previous.sections and row.stale and row.attempts == 1
    assert AICall.objects.get(purpose=AICall.Purpose.DOCUMENT_INDEX).outcome == AICall.Outcome.ERROR


def test_short_documents_are_indexed_offline_even_with_a_model(personas, openai_server, settings) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **OPENAI, "DOCUMENT_MODEL_MIN_PAGES": 20}
    world = doc_world(personas, articles=2, pages_per_article=2)
    index = build_document_index(case_id=world.case.pk, key="spa")
    assert index.builder == "extractive" and openai_server.calls() == 0


def test_checks_reject_bad_document_sizes(settings) -> None:
    from graph_memory.checks import check_document_settings

    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "DOCUMENT_SECTION_MAX_PAGES": 0, "DOCUMENT_ROUTER_MAX_CHARS": 10}
    ids = [(m.id, m.msg) for m in check_document_settings()]
    assert ("graph_memory.E090", "GRAPH_MEMORY['DOCUMENT_SECTION_MAX_PAGES'] must be a positive integer") in ids
    assert any(i == "graph_memory.E091" for i, _ in ids)
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "DOCUMENT_SECTION_MAX_PAGES": 25, "DOCUMENT_ROUTER_MAX_CHARS": 30000}
    assert check_document_settings() == []


def test_admin_shows_the_index_report_to_the_firms_admin_only(personas, offline) -> None:
    from django.test import Client as HttpClient
    from django.urls import reverse

    world = doc_world(personas, articles=2, pages_per_article=2)
    index = build_document_index(case_id=world.case.pk, key="spa")
    report = {**index.report, "dropped": 1, "dropped_by_reason": {"in_other_section": 1},
              "examples": [{"section": "article-1", "term": "Long Stop Date", "reason": "in_other_section"}]}  # fmt: skip
    DocumentIndex.objects.filter(pk=index.pk).update(report=report)
    DocumentQuery.objects.create(firm=personas.firm, case=world.case, outcome="success", quotes_served=2)
    url = reverse("admin:graph_memory_documentindex_change", args=[index.pk])
    http = HttpClient()
    http.force_login(personas.firm_admin)
    page = http.get(url).content.decode()
    assert "Long Stop Date" in page and "cross-contaminated" in page and "ARTICLE 2 SALE AND PURCHASE" in page
    # Both lists fit six columns, without the firm's for a firm admin (the house rule of the admin polish tests).
    for model in ("documentindex", "documentquery"):
        page = http.get(reverse(f"admin:graph_memory_{model}_changelist")).content.decode()
        columns = [c for c in re.findall(r'<th scope="col" class="[^"]*column-([\w-]+)', page) if c != "action-checkbox"]
        assert 0 < len(columns) <= 6 and "firm" not in columns, (model, columns)
    http.force_login(personas.other_firm_admin)
    assert http.get(url).status_code == 404
