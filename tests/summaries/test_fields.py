"""Field facts: rendered from the records' own fields, each citing its item; merged with the verified narrative."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from accounts.models import Firm
from graph_memory.summaries.context import ContextItem, build_context
from graph_memory.summaries.extractive import ExtractiveWriter
from graph_memory.summaries.fields import field_facts, render, with_field_facts
from graph_memory.summaries.rulebook import SECTIONS
from graph_memory.summaries.sentences import number, split
from graph_memory.summaries.verify import verify_selection
from practice.models import Case
from tests.factories import NoteFactory
from tests.writer_support import CLAUSE_9, RED_FLAG, answer, point, sentence_id


@pytest.mark.parametrize(
    ("kind", "fields", "text"),
    [
        (
            "header",
            {"reference": "2026-014", "title": "Northwind / Castell", "status": "Open", "opened": dt.date(2026, 3, 2)},
            "Case 2026-014 “Northwind / Castell”: status Open, opened 2026-03-02.",
        ),
        ("header", {"reference": "A-1", "title": "T", "status": "Closed", "opened": None}, "Case A-1 “T”: status Closed."),
        ("client", {"name": "Northwind Holdings, Inc.", "role": "client"}, "Client: Northwind Holdings, Inc."),
        ("counterparty", {"name": "Jordan Lee", "role": "counterparty"}, "Counterparty: Jordan Lee."),
        (
            "deadline",
            {"title": "Target signing", "due": dt.date(2026, 12, 15), "done": False},
            "Deadline “Target signing”: due 2026-12-15, open.",
        ),
        ("deadline", {"title": "Filing", "due": dt.date(2026, 10, 1), "done": True}, "Deadline “Filing”: due 2026-10-01, done."),
        (
            "invoice",
            {"number": "INV-0057", "issued": dt.date(2026, 10, 1), "amount": Decimal("31840.5"), "currency": "USD",
             "status": "sent"},
            "Invoice INV-0057 issued 2026-10-01: USD 31,840.50, sent.",
        ),
        (
            "document",
            {"title": "Due diligence memo", "date": dt.datetime(2026, 5, 12, 14, 30, tzinfo=dt.UTC), "page": 1},
            "Document “Due diligence memo” dated 2026-05-12.",
        ),
        ("draft", {"title": "Disclosure letter", "date": dt.date(2026, 6, 3)}, "Draft “Disclosure letter” dated 2026-06-03."),
        ("note", {"title": "Call with client", "date": None}, "Working note “Call with client”."),
        ("note", {"title": "", "date": dt.date(2026, 11, 2)}, None),  # an untitled note has no field fact
        ("deadline", {}, None),
    ],
)  # fmt: skip
def test_render(kind: str, fields: dict, text: str | None) -> None:
    assert render(ContextItem(f"{kind}:x", kind, "whatever the item says", fields=fields)) == text


@pytest.mark.django_db
def test_field_facts_of_a_demo_case_cite_their_items(demo_firm: Firm) -> None:
    context = build_context(case_id=Case.objects.get(firm=demo_firm, key="2026-014").pk)
    facts = field_facts(context)
    assert facts == field_facts(build_context(case_id=context.case_id))  # the same records, the same facts
    assert {(s["text"], *s["sources"]) for section in SECTIONS for s in facts[section]} == {
        ("Case 2026-014 “Northwind / Castell acquisition”: status Open, opened 2026-03-02.", "case:header"),
        ("Client: Northwind Holdings, Inc.", "client:northwind"),
        ("Counterparty: Castell Components GmbH.", "counterparty:castell"),
        ("Deadline “Target signing”: due 2026-12-15, open.", "deadline:signing"),
        ("Deadline “Merger control filing (Bundeskartellamt)”: due 2026-10-01, done.", "deadline:filing"),
        ("Invoice INV-0057 issued 2026-10-01: USD 31,840.50, sent.", "invoice:inv-57"),
        ("Invoice INV-0042 issued 2026-05-01: USD 12,500.00, paid.", "invoice:inv-42"),
        ("Draft “Disclosure letter” dated 2026-06-03.", "draft:disc-letter"),
        ("Document “Due diligence memo” dated 2026-05-12.", "document:dd-memo#p1"),
        # Once per document, citing its first page, though the slice holds two.
        ("Document “Share purchase agreement, draft 3” dated 2026-04-01.", "document:spa-v3#p1"),
    }
    assert all(s["kind"] == "field" and "quote" not in s for section in SECTIONS for s in facts[section])
    assert [s["sources"][0] for s in facts["key_dates"]] == ["deadline:signing", "deadline:filing"]


@pytest.mark.django_db
def test_field_facts_come_first_and_a_selected_copy_of_one_is_a_duplicate(demo_firm: Firm) -> None:
    case = Case.objects.get(firm=demo_firm, key="2026-014")
    deadline = "Deadline “Target signing”: due 2026-12-15, open."
    NoteFactory(case=case, key="copy", text=deadline)  # a note that copies the deadline's line
    context = build_context(case_id=case.pk)
    selection = answer(
        key_dates=[point(sentence_id(case.pk, deadline)), point(sentence_id(case.pk, CLAUSE_9["text"]))],
        recent_activity=[point(sentence_id(case.pk, RED_FLAG["text"]))],
    )
    merged = with_field_facts(verify_selection(selection, number(context)), context)
    assert [s["kind"] for s in merged.content["key_dates"]] == ["field", "field", "sentence"]
    assert merged.content["key_dates"][2]["text"] == CLAUSE_9["text"]
    assert merged.report["dropped"] == [{"section": "key_dates", "reason": "duplicate", "detail": "a field fact"}]
    # A sentence selected alone reads right after its document's title and date, not after every field fact.
    assert [s["sources"][0] for s in merged.content["recent_activity"]][:3] == [
        "draft:disc-letter",
        "document:dd-memo#p1",
        "document:dd-memo#p1",
    ]
    assert merged.content["recent_activity"][2]["text"] == RED_FLAG["text"]
    counts = merged.report["counts"]
    # Counts are about selected statements; field facts are counted apart.
    assert (merged.kept, counts["ids"], counts["statements"], counts["kept"], counts["duplicate"]) == (2, 3, 3, 2, 1)
    assert merged.report["fields"] == counts["fields"] == 10
    assert "case:header" in merged.source_ids and "invoice:inv-57" in merged.source_ids


@pytest.mark.django_db
def test_the_extractive_writer_selects_only_whole_sentences_of_its_records(demo_firm: Firm) -> None:
    for case in Case.objects.filter(firm=demo_firm):
        context = build_context(case_id=case.pk)
        content = ExtractiveWriter().write(context).content
        points = [p for section in SECTIONS for p in content[section]]
        assert len(points) >= 3, case.key
        assert all(len(p["ids"]) == 1 and p["label"] == p["short"] == "" for p in points), case.key
        # Field facts are rendered, not selected: the writer has nothing to say about the parties.
        assert not content["parties"]
        result = verify_selection(content, number(context))
        assert result.report["dropped"] == [] and result.kept == len(points), case.key
        for statement in (s for section in SECTIONS for s in result.content[section]):
            (source,) = statement["sources"]
            assert (statement["kind"], statement["shortened"]) == ("sentence", False)
            assert statement["text"] == statement["quote"] in split(context.get(source).body), statement
