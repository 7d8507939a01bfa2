"""The context slice (caps, isolation, determinism) and the summary service with the extractive writer."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.db.models import F
from django.utils import timezone

from accounts.models import Firm
from graph_memory import conf, signals
from graph_memory.models import AICall, CaseSummary, SummaryVersion
from graph_memory.summaries import rulebook
from graph_memory.summaries.context import ContextSlice, build_context
from graph_memory.summaries.rewrite import SummaryFailed, summarize_case, summary_payload
from graph_memory.summaries.writers import ExtractiveWriter, OpenAIWriter, WriterResult, get_writer
from practice.models import Case, Document
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
)

pytestmark = pytest.mark.django_db

CONTEXT_QUERIES = 7


def demo_case(firm: Firm, key: str) -> Case:
    return Case.objects.get(firm=firm, key=key)


def test_demo_case_slice_items_and_ids(demo_firm: Firm, django_assert_num_queries) -> None:
    case = demo_case(demo_firm, "2026-014")
    with django_assert_num_queries(CONTEXT_QUERIES):
        context = build_context(case_id=case.pk)
    assert context.source_ids == (
        "case:header",
        "client:northwind",
        "counterparty:castell",
        "deadline:signing",  # open first
        "deadline:filing",  # then done
        "invoice:inv-57",  # latest first
        "invoice:inv-42",
        "note:n1",
        "draft:disc-letter",
        "document:dd-memo#p1",  # latest processed document first; the scan still processing is left out
        "document:spa-v3#p1",
        "document:spa-v3#p2",
    )
    assert context.get("invoice:inv-57").text == "Invoice INV-0057 issued 2026-10-01: USD 31,840.50, sent."
    assert context.get("deadline:signing").text == "Deadline “Target signing”: due 2026-12-15, open."
    assert context.party_names == ("Northwind Holdings, Inc.", "Castell Components GmbH")
    assert context.omitted == 0
    assert context.text.splitlines()[0].startswith("[case:header] Case 2026-014: Northwind / Castell acquisition.")
    assert build_context(case_id=case.pk) == context  # deterministic


def _huge_case() -> Case:
    firm = FirmFactory(slug="huge-law")
    counterparties = [CounterpartyFactory(firm=firm, name=f"Party {i:02d} GmbH") for i in range(25)]
    case = CaseFactory(firm=firm, description="Long description. " * 400, counterparties=counterparties)
    base = timezone.now() - dt.timedelta(days=600)
    page = "Clause text with USD 1,000.00 and a date of 2026-01-01. " * 30  # 1,680 characters a page
    Document.objects.bulk_create(
        Document(
            case=case,
            firm=firm,
            key=f"doc-{i:03d}",
            title=f"Document {i}",
            status=Document.Status.PROCESSED,
            created=base + dt.timedelta(hours=i),
            pages=[f"Page {p} of doc {i}. {page}" for p in range(1, 6)],
        )
        for i in range(500)
    )
    for i in range(15):
        DeadlineFactory(case=case, key=f"dl-{i}", due=dt.date(2026, 1, 1) + dt.timedelta(days=i), done=i % 2 == 0)
        InvoiceFactory(case=case, key=f"inv-{i}", amount=Decimal("100.00") + i)
        NoteFactory(case=case, key=f"note-{i}", text="Note. " * 500)
        DraftFactory(case=case, key=f"draft-{i}", text="Draft. " * 500)
    return case


def _assert_caps(context: ContextSlice) -> None:
    kinds = [item.kind for item in context.items]
    assert kinds.count("counterparty") <= conf.get("CONTEXT_MAX_COUNTERPARTIES")
    assert kinds.count("deadline") <= conf.get("CONTEXT_MAX_DEADLINES")
    assert kinds.count("invoice") <= conf.get("CONTEXT_MAX_INVOICES")
    assert kinds.count("note") <= conf.get("CONTEXT_MAX_NOTES")
    assert kinds.count("draft") <= conf.get("CONTEXT_MAX_DRAFTS")
    documents = {item.source_id.split("#")[0] for item in context.items if item.kind == "document"}
    assert len(documents) <= conf.get("CONTEXT_MAX_DOCUMENTS")
    pages = [int(item.source_id.rsplit("#p", 1)[1]) for item in context.items if item.kind == "document"]
    assert max(pages, default=0) <= conf.get("CONTEXT_MAX_PAGES_PER_DOCUMENT")
    assert all(len(item.text) <= conf.get("CONTEXT_ITEM_MAX_CHARS") for item in context.items)
    assert context.char_count <= conf.get("CONTEXT_MAX_CHARS")


def test_caps_hold_on_a_case_with_500_documents(django_assert_num_queries, settings) -> None:
    case = _huge_case()
    with django_assert_num_queries(CONTEXT_QUERIES):
        context = build_context(case_id=case.pk)
    _assert_caps(context)
    # At the cap, not far below it: the slice is full and says how much was left out.
    assert context.char_count > conf.get("CONTEXT_MAX_CHARS") - conf.get("CONTEXT_ITEM_MAX_CHARS")
    assert context.omitted > 0
    assert context.get("case:header").text.endswith("…")

    settings.GRAPH_MEMORY = {
        **settings.GRAPH_MEMORY,
        "CONTEXT_MAX_CHARS": 40_000, "CONTEXT_ITEM_MAX_CHARS": 300, "CONTEXT_MAX_NOTES": 3, "CONTEXT_MAX_DOCUMENTS": 20,
    }  # fmt: skip
    with django_assert_num_queries(CONTEXT_QUERIES):
        roomy = build_context(case_id=case.pk)
    _assert_caps(roomy)
    assert roomy.omitted == 0
    kinds = [item.kind for item in roomy.items]
    assert (kinds.count("counterparty"), kinds.count("note"), kinds.count("document")) == (10, 3, 60)
    # The latest documents, the first pages of each.
    assert roomy.source_ids[-1] == "document:doc-480#p3"


def test_no_other_case_ever_appears(django_assert_num_queries) -> None:
    firm = FirmFactory(slug="wall-law")
    client = ClientFactory(firm=firm, name="Shared Client Ltd")
    shared_cp = CounterpartyFactory(firm=firm, name="Shared Counterparty AG")
    target = CaseFactory(firm=firm, client=client, counterparties=[shared_cp], description="Target matter.")
    DocumentFactory(case=target, key="doc", pages=["Target page."])
    NoteFactory(case=target, key="n1", text="Target note.")
    sibling = CaseFactory(
        firm=firm, client=client, counterparties=[shared_cp, CounterpartyFactory(firm=firm, name="CANARY-cp")]
    )
    elsewhere = CaseFactory(firm=FirmFactory(slug="other-law"), description="CANARY-header")
    for n, case in enumerate([sibling, elsewhere]):
        Case.objects.filter(pk=case.pk).update(title=f"CANARY-title-{n}", description=f"CANARY-description-{n}")
        # Same record keys as the target's, so a filter on key alone would leak.
        DocumentFactory(case=case, key="doc", title=f"CANARY-doc-{n}", pages=[f"CANARY-page-{n}"] * 3)
        DraftFactory(case=case, key="d", text=f"CANARY-draft-{n}")
        DeadlineFactory(case=case, key="dl", title=f"CANARY-deadline-{n}")
        InvoiceFactory(case=case, key="inv", number=f"CANARY-inv-{n}")
        NoteFactory(case=case, key="n1", text=f"CANARY-note-{n}")
    with django_assert_num_queries(CONTEXT_QUERIES):
        context = build_context(case_id=target.pk)
    assert "CANARY" not in context.text
    assert "Target page." in context.text and "Target note." in context.text
    summary = summarize_case(case_id=target.pk, writer=ExtractiveWriter())
    assert "CANARY" not in summary.text and "CANARY" not in str(summary.content)


def test_extractive_writer_is_deterministic_and_passes_its_own_verification(demo_firm: Firm) -> None:
    cases = list(Case.objects.filter(firm=demo_firm).order_by("key"))
    assert len(cases) == 4
    for case in cases:
        context = build_context(case_id=case.pk)
        assert ExtractiveWriter().write(context) == ExtractiveWriter().write(context)
        first = summarize_case(case_id=case.pk, writer=ExtractiveWriter())
        report = first.verification
        assert report["dropped"] == [], (case.key, report["dropped"])
        assert report["kept"] == report["counts"]["statements"] >= 3 and report["fields"] >= 5
        assert (first.writer, first.model, first.tokens_in, first.tokens_out) == ("extractive", "", 0, 0)
        second = summarize_case(case_id=case.pk, writer=ExtractiveWriter())
        assert (second.text, second.content) == (first.text, first.content)
        assert f"Client: {case.client.name}" in first.text
    assert SummaryVersion.objects.filter(firm=demo_firm).count() == 8
    # No model, no model call: the extractive writer never writes an AICall row.
    assert not AICall.objects.exists()


def test_save_clears_the_flag_and_indexes_the_summary(demo_firm: Firm, django_capture_on_commit_callbacks) -> None:
    case = demo_case(demo_firm, "2026-014")
    # The row may exist already: importing the records marked the case stale.
    CaseSummary.objects.update_or_create(
        case=case,
        defaults={"firm": demo_firm, "stale": True, "stale_since": timezone.now(), "generation": 4, "attempts": 2},
    )
    saved: list[tuple[int, int]] = []

    def on_saved(sender, case_id, summary, **kwargs):
        saved.append((case_id, summary.pk))

    signals.summary_saved.connect(on_saved)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            summary = summarize_case(case_id=case.pk, writer=ExtractiveWriter())
    finally:
        signals.summary_saved.disconnect(on_saved)
    assert saved == [(case.pk, summary.pk)]
    assert (summary.stale, summary.stale_since, summary.written_generation, summary.attempts) == (False, None, 4, 0)
    assert summary.prompt_version == rulebook.PROMPT_VERSION and summary.written_at is not None
    assert "case:header" in summary.source_ids and "invoice:inv-57" in summary.source_ids
    assert CaseSummary.objects.filter(search_vector="castell").get() == summary
    assert CaseSummary.objects.filter(search_vector="escrow").get() == summary  # from the summary text
    version = SummaryVersion.objects.get(case=case)
    assert (version.text, version.generation, version.verification) == (summary.text, 4, summary.verification)
    payload = summary_payload(summary)
    assert payload["notice"] == conf.get("NOTICE") and payload["text"] == summary.text


class BumpingWriter(ExtractiveWriter):
    """Simulates a record changing while the model writes: the stale marker bumps the generation."""

    def write(self, context: ContextSlice) -> WriterResult:
        CaseSummary.objects.filter(case_id=context.case_id).update(generation=F("generation") + 1, stale=True)
        return super().write(context)


def test_a_change_during_the_rewrite_keeps_the_case_stale(demo_firm: Firm) -> None:
    case = demo_case(demo_firm, "2026-031")
    since = timezone.now() - dt.timedelta(hours=3)
    CaseSummary.objects.update_or_create(
        case=case, defaults={"firm": demo_firm, "stale": True, "stale_since": since, "generation": 7}
    )
    summary = summarize_case(case_id=case.pk, writer=BumpingWriter())
    assert summary.text  # saved: it is true of generation 7 ...
    assert (summary.written_generation, summary.generation) == (7, 8)
    assert (summary.stale, summary.stale_since) == (True, since)  # ... but 8 is not summarised yet
    summary = summarize_case(case_id=case.pk, writer=ExtractiveWriter())
    assert (summary.stale, summary.stale_since, summary.written_generation) == (False, None, 8)


def test_the_row_is_created_when_missing_and_unknown_cases_fail(demo_firm: Firm) -> None:
    case = demo_case(demo_firm, "2025-088")
    CaseSummary.objects.filter(case=case).delete()
    summary = summarize_case(case_id=case.pk, writer=ExtractiveWriter())
    assert summary.firm_id == demo_firm.pk and not summary.stale
    with pytest.raises(SummaryFailed) as info:
        summarize_case(case_id=999_999_999, writer=ExtractiveWriter())
    assert info.value.reason == "case not found"


def test_get_writer_honours_the_setting(settings, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert isinstance(get_writer(), ExtractiveWriter)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert isinstance(get_writer(), OpenAIWriter)
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "extractive"}
    assert isinstance(get_writer(), ExtractiveWriter)
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "openai", "OPENAI_MODEL": "some-model"}
    assert get_writer().model == "some-model"


def test_an_unconfigured_writer_fails_cleanly(demo_firm: Firm, settings, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "WRITER": "openai"}
    case = demo_case(demo_firm, "2026-047")
    with pytest.raises(SummaryFailed, match="writer not configured"):
        summarize_case(case_id=case.pk)
    row = CaseSummary.objects.get(case=case)
    assert (row.text, row.attempts, row.last_error) == ("", 1, "writer not configured")


def test_command_prints_the_summary(demo_firm: Firm, capsys, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    call_command("summarize_case", "--firm", "hale-ward", "2026-047")
    out = capsys.readouterr().out
    assert "“Client: Meridian Foods Corp.” [client:meridian]" in out  # each statement quoted (issue 32)
    assert "Writer: extractive (no model)" in out
    assert "Selection: 3 of 3 sentence ids kept, 3 statements served (0 shortened)" in out
    assert conf.get("NOTICE") in out
    with pytest.raises(CommandError, match="no firm named 'nope'"):
        call_command("summarize_case", "--firm", "nope", "2026-047")
    with pytest.raises(CommandError, match="no case '2099-001' in firm 'hale-ward'"):
        call_command("summarize_case", "--firm", "hale-ward", "2099-001")
