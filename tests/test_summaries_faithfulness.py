"""Faithfulness end to end: planted inventions answered by a real OpenAI-compatible server (tests/openai_server.py),
through the openai writer, the verifier and the service, on the demo firm's records."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from accounts.models import Firm
from graph_memory.models import CaseSummary, SummaryVersion
from graph_memory.summaries.context import build_context
from graph_memory.summaries.extractive import ExtractiveWriter
from graph_memory.summaries.fields import field_facts
from graph_memory.summaries.rulebook import MAX_QUOTE_CHARS, PROMPT_VERSION, SECTIONS, empty_content, render_text
from graph_memory.summaries.service import SummaryFailed, summarize_case
from graph_memory.summaries.verify import normalise_quote, quote_span
from practice.models import Case
from tests.openai_server import OpenAIServer, Reply

pytestmark = pytest.mark.django_db


def stmt(text: str, quote: str, *sources: str) -> dict[str, Any]:
    return {"text": text, "sources": list(sources), "quote": quote}


# True narrative statements, one per demo case, each close to its quote.
GOOD = {
    "2026-014": stmt(
        "The purchase price is EUR 48,000,000, subject to a locked-box mechanism with a reference date of"
        " 31 December 2025.",
        "Purchase price: EUR 48,000,000, subject to a locked-box mechanism with a reference date of 31 December 2025",
        "document:spa-v3#p1",
    ),
    "2026-031": stmt(
        "Brightline Logistics LLC seeks USD 2,310,000 in unpaid fees plus interest from Northwind Holdings, Inc.",
        "Brightline Logistics LLC seeks USD 2,310,000 in unpaid fees plus interest from Northwind Holdings, Inc.",
        "document:complaint#p1",
    ),
    "2025-088": stmt(
        "The annual base rent is USD 540,000; escalation is capped at 3% per year.",
        "Annual base rent USD 540,000; escalation capped at 3% per year.",
        "document:lease#p1",
    ),
    "2026-047": stmt(
        "Jordan Lee alleges termination on 2026-06-30 in retaliation for a safety complaint.",
        "Jordan Lee alleges termination on 2026-06-30 in retaliation for a safety complaint",
        "document:claim#p1",
    ),
}
CLOSING = "Client wants to close before year end; price adjustment talks continue."
SIGNING = "Deadline “Target signing”: due 2026-12-15, open."

# One or more per class of invention the issue lists: (case, statement, the reason it is dropped for).
INVENTIONS = {
    "event without digits or names": (
        "2026-014", stmt("The court granted the motion.", "Northwind Holdings, Inc.", "client:northwind"),
        "unsupported_state",
    ),
    "event without a word of state": (
        "2026-014", stmt("The court scheduled a hearing on the price adjustment.", CLOSING, "note:n1"), "uncovered",
    ),
    "status flip: deadline met": (
        "2026-014", stmt("The 'Target signing' deadline has been met.", SIGNING, "deadline:signing"),
        "unsupported_state",
    ),
    "status flip: invoice paid": (
        "2026-014",
        stmt("Invoice INV-0057 was paid.", "Invoice INV-0057 issued 2026-10-01: USD 31,840.50, sent.",
             "invoice:inv-57"),
        "unsupported_state",
    ),
    "role swap": (
        "2026-014",
        stmt("Castell Components GmbH is the client and Northwind Holdings, Inc. is the counterparty.",
             "Client: Northwind Holdings, Inc.", "client:northwind", "counterparty:castell"),
        "wrong_role",
    ),
    "value swapped between cited records": (
        "2025-088",
        stmt("Invoice INV-0061 issued 2026-09-30: USD 540,000.", "Invoice INV-0061 issued 2026-09-30: USD 8,420.00",
             "invoice:inv-61", "document:lease#p1"),
        "unsupported_amount",
    ),
    "value swapped, quoting the other record": (
        "2025-088",
        stmt("Invoice INV-0061 issued 2026-09-30: USD 540,000.", "Annual base rent USD 540,000",
             "invoice:inv-61", "document:lease#p1"),
        "unsupported_date",
    ),
    "number re-bound to another noun": (
        "2025-088",
        stmt("The team has identified 400 witnesses.", "a rent escalation at 400 Harbor Street", "case:header"),
        "uncovered",
    ),
    "term cited to the wrong record": (
        "2026-014",
        stmt("Escrow of EUR 4,800,000 is held for 18 months.", "Escrow of EUR 4,800,000 held for 18 months",
             "document:spa-v3#p1"),
        "quote_not_in_source",
    ),
    "name cited to the wrong record": (
        "2026-014", stmt("The client wants to close before year end with Brightline.", CLOSING, "note:n1"),
        "name_not_in_quote",
    ),
    "number in words": (
        "2026-014",
        stmt("The purchase price is up to twelve million dollars.", "Purchase price: EUR 48,000,000",
             "document:spa-v3#p1"),
        "unsupported_amount",
    ),
    "month borrowed from another cited date": (
        "2026-014",
        stmt("Target signing is due in October 2026.", SIGNING, "deadline:signing", "invoice:inv-57"),
        "unsupported_date",
    ),
    "year borrowed from another cited date": (
        "2026-031",
        stmt("Opposing counsel hinted at settlement around USD 1,500,000 in 2023.",
             "Opposing counsel hinted at settlement around USD 1,500,000.", "note:n1", "case:header"),
        "unsupported_number",
    ),
    "one-word name": (
        "2026-031",
        stmt("Counsel for Oyelaran hinted at settlement around USD 1,500,000.",
             "Opposing counsel hinted at settlement around USD 1,500,000.", "note:n1"),
        "unknown_name",
    ),
    "name from another case of the firm": (
        "2026-014", stmt("Jordan Lee wants to close before year end.", CLOSING, "note:n1"), "unknown_name",
    ),
}  # fmt: skip

# True statements in the format variants the old verifier dropped or might drop.
TRUE_VARIANTS = {
    "scale word in title case": (
        "2026-014", stmt("The purchase price is EUR 48 Million.", "Purchase price: EUR 48,000,000", "document:spa-v3#p1"),
    ),
    "letter scale": (
        "2026-031",
        stmt("Opposing counsel hinted at settlement around USD 1.5M.",
             "Opposing counsel hinted at settlement around USD 1,500,000.", "note:n1"),
    ),
    "mln": (
        "2026-031",
        stmt("Brightline Logistics LLC seeks USD 2.31 mln in unpaid fees plus interest.",
             "Brightline Logistics LLC seeks USD 2,310,000 in unpaid fees plus interest", "document:complaint#p1"),
    ),
    "dotted date ending a sentence": (
        "2025-088",
        stmt("The landlord claims a 7% escalation effective 01.09.2025.",
             "Landlord claims a 7% escalation effective 2025-09-01.", "document:lease#p2"),
    ),
    "spelled-out date": (
        "2026-014",
        stmt("The Buyer may terminate if the antitrust clearance is not obtained by 15 December 2026.",
             "the Buyer may terminate if the antitrust clearance is not obtained by 2026-12-15",
             "document:spa-v3#p2"),
    ),
    "amount in words": (
        "2026-014",
        stmt("An escrow of four million eight hundred thousand euros is held for eighteen months.",
             "Escrow of EUR 4,800,000 held for 18 months", "document:spa-v3#p2"),
    ),
    "count in digits for words": (
        "2026-047",
        stmt("The HR file shows 2 prior warnings.", "HR file shows two prior warnings", "note:n1"),
    ),
    "percentage in words": (
        "2025-088",
        stmt("Escalation is capped at 3 percent per year.", "escalation capped at 3% per year", "document:lease#p1"),
    ),
    "heading of the cited record": (
        "2026-014",
        stmt("According to the Due Diligence Memo, Brightline may terminate on 30 days' notice.",
             "allowing Brightline to terminate on 30 days' notice", "document:dd-memo#p1"),
    ),
    "short party name": (
        "2026-014",
        stmt("Northwind wants to close before year end; price adjustment talks continue.", CLOSING, "note:n1"),
    ),
    "role as the records give it": (
        "2026-047", stmt("Meridian Foods Corp. is the client.", "Client: Meridian Foods Corp.", "client:meridian"),
    ),
    "straight quotation marks for curly ones": (
        "2026-014",
        stmt('Sellers disclose the Brightline change-of-control clause against warranty 14.2.',
             'Draft "Disclosure letter" (2026-06-03): Sellers disclose the Brightline change-of-control clause'
             " against warranty 14.2.", "draft:disc-letter"),
    ),
}  # fmt: skip


def _case(firm: Firm, key: str) -> Case:
    return Case.objects.get(firm=firm, key=key)


def _kept_texts(summary: CaseSummary) -> set[str]:
    return {s["text"] for section in SECTIONS for s in summary.content[section]}


@pytest.mark.parametrize("invention", list(INVENTIONS))
def test_each_class_of_invention_is_dropped(invention: str, demo_firm: Firm, openai_server: OpenAIServer) -> None:
    key, planted, reason = INVENTIONS[invention]
    content = empty_content()
    content["status"] = [GOOD[key]]
    content["recent_activity"] = [planted]
    openai_server.add_chat(Reply.json(content))
    summary = summarize_case(case_id=_case(demo_firm, key).pk)
    assert [(d["text"], d["reason"]) for d in summary.verification["dropped"]] == [(planted["text"], reason)]
    assert GOOD[key]["text"] in _kept_texts(summary)
    assert planted["text"] not in summary.text


@pytest.mark.parametrize("variant", list(TRUE_VARIANTS))
def test_true_statements_in_every_format_variant_are_kept(
    variant: str, demo_firm: Firm, openai_server: OpenAIServer
) -> None:
    key, statement = TRUE_VARIANTS[variant]
    content = empty_content()
    content["status"] = [GOOD[key]]
    content["recent_activity"] = [statement]
    openai_server.add_chat(Reply.json(content))
    summary = summarize_case(case_id=_case(demo_firm, key).pk)
    assert summary.verification["dropped"] == []
    assert statement["text"] in summary.text


def _fenced_in_prose(content: dict[str, Any]) -> Reply:
    import json

    return Reply.raw(f"Here is the summary you asked for:\n```json\n{json.dumps(content)}\n```\nHope this helps!")


WHOLE_RESPONSE_FAILURES = {
    "prose": lambda good: Reply.raw("The case is open and the deal is going well."),
    "fenced JSON inside prose": _fenced_in_prose,
    "truncated": lambda good: Reply.raw('{"status": [{"text": "The purchase', finish_reason="length"),
    "HTTP 500": lambda good: Reply.error(500),
    "hang": lambda good: Reply.slow(5, Reply.json(good)),
}


@pytest.mark.parametrize("failure", list(WHOLE_RESPONSE_FAILURES))
def test_a_failed_whole_response_keeps_the_previous_summary(
    failure: str, demo_firm: Firm, openai_server: OpenAIServer, settings
) -> None:
    case = _case(demo_firm, "2026-014")
    good = empty_content()
    good["status"] = [GOOD["2026-014"]]
    good["open_questions"] = [stmt(CLOSING, CLOSING, "note:n1")]
    openai_server.add_chat(Reply.json(good))
    previous = summarize_case(case_id=case.pk)
    CaseSummary.objects.filter(pk=previous.pk).update(stale=True, stale_since=timezone.now())
    settings.GRAPH_MEMORY = {**getattr(settings, "GRAPH_MEMORY", {}), "OPENAI_TIMEOUT": 0.5, "OPENAI_MAX_RETRIES": 0}
    openai_server.add_chat(WHOLE_RESPONSE_FAILURES[failure](good))
    with pytest.raises(SummaryFailed):
        summarize_case(case_id=case.pk)
    now = CaseSummary.objects.get(pk=previous.pk)
    assert (now.text, now.content, now.written_at, now.stale) == (previous.text, previous.content, previous.written_at,
                                                                  True)  # fmt: skip
    assert SummaryVersion.objects.filter(case=case).count() == 1


def test_every_stored_summary_of_the_demo_is_field_facts_or_verbatim_quotes(
    demo_firm: Firm, openai_server: OpenAIServer
) -> None:
    cases = list(Case.objects.filter(firm=demo_firm).order_by("key"))
    # One case written by a model that also invents, the others offline (no model), as `make demo` does without a key.
    written = empty_content()
    written["status"] = [GOOD["2026-031"]]
    written["recent_activity"] = [
        INVENTIONS["one-word name"][1],
        INVENTIONS["year borrowed from another cited date"][1],
    ]
    openai_server.add_chat(Reply.json(written))
    summarize_case(case_id=_case(demo_firm, "2026-031").pk)
    for case in cases:
        summarize_case(case_id=case.pk, writer=ExtractiveWriter())  # a second version of 2026-031

    stored = [*CaseSummary.objects.filter(firm=demo_firm), *SummaryVersion.objects.filter(firm=demo_firm)]
    assert len(stored) == len(cases) * 2 + 1
    kinds = set()
    for summary in stored:
        context = build_context(case_id=summary.case_id)
        rendered = {(section, s["text"], *s["sources"]) for section, ss in field_facts(context).items() for s in ss}
        assert summary.text == render_text(summary.content) and summary.prompt_version == PROMPT_VERSION
        for section in SECTIONS:
            for statement in summary.content[section]:
                kinds.add((summary.writer, statement["kind"]))
                if statement["kind"] == "field":
                    assert (section, statement["text"], *statement["sources"]) in rendered, statement
                    continue
                assert statement["kind"] == "quote", statement
                (source,) = statement["sources"]
                assert 0 < len(statement["quote"]) <= MAX_QUOTE_CHARS
                assert quote_span(statement["quote"]) in normalise_quote(context.get(source).text), statement
    assert kinds == {("openai", "field"), ("openai", "quote"), ("extractive", "field"), ("extractive", "quote")}
