"""What a lawyer reads is the records' own words: every served summary of the demo firm and of a generated
firm, walked statement by statement, through the stored summary, the brief service and the API.

Two writers: the offline extractive writer (the demo's), and a scripted model over real HTTP that selects
every sentence and proposes, for each point, a shortening made by deleting at random: words (many of them
meaning words, facts and parts of names), a clause between punctuation, or the articles. Whatever was proposed, each served statement is a field fact rendered
from its record, or a sentence of its cited record, or a deletion-only shortening of it that keeps every
meaning word (`shorten.faithful`).
"""

from __future__ import annotations

import datetime as dt
import random
import re
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import Firm, User
from graph_memory import services
from graph_memory.models import CaseSummary, Node
from graph_memory.summaries import meaning
from graph_memory.summaries.context import build_context
from graph_memory.summaries.extractive import ExtractiveWriter
from graph_memory.summaries.fields import field_facts
from graph_memory.summaries.rulebook import SECTIONS
from graph_memory.summaries.sentences import number
from graph_memory.summaries.shorten import faithful, tokens
from graph_memory.summaries.writers import OpenAIWriter
from practice.models import Case
from tests.factories import CaseFactory, DocumentFactory, DraftFactory, FirmFactory, NoteFactory, UserFactory
from tests.openai_server import OpenAIServer, Reply

pytestmark = pytest.mark.django_db

# Sentences that carry meaning words, facts and names, for the generated firm's records.
SENTENCES = [
    "Castell Components GmbH has not consented to the assignment of the supply contract.",
    "The buyer may withhold 10 % of the price only if the warranty claim is notified by 7 March 2027.",
    "Not all of the documents requested by Parkside Realty Partners have been produced.",
    "The court granted in part the motion to compel disclosure (Order No. 7, p. 3).",
    "Northwind Holdings owes Brightline Logistics LLC EUR 256,580 under the 2023 agreement.",
    "The escrow agent may release the funds unless either party objects within 10 days.",
    "The landlord allegedly served a draft notice proposing a 7% escalation effective 2025-09-01.",
    "At least two of the three former directors must sign before completion.",
    "Opposing counsel hinted at a settlement of up to USD 1.5 million, subject to board approval.",
    "Jordan Lee claims that the termination on 30 June 2026 was retaliation.",
    "The tenant paid the March rent late and still disputes the service charge.",
    "Red flag: the change-of-control clause allows termination on 30 days' notice (SPA 5.2, p. 54).",
    # sentences with no meaning word, where articles, connectives and asides may go
    "However, the supplier delivered the pallets to the warehouse in Leeds (letter of 6 April 2027).",
    "The buyer, Northwind Holdings, signed the share purchase agreement (the SPA) in Berlin.",
]


def random_deletion(sentence: str, rng: random.Random) -> str:
    """A proposal made by deleting: random words, or a random clause between punctuation, or the articles."""
    words = [t.text for t in tokens(sentence)]
    how = rng.random()
    if how < 0.4:
        return " ".join(w for w in words if rng.random() < 0.7)
    if how < 0.8:
        clauses = [c for c in re.split(r"[,;:()]", sentence) if c.strip()]
        dropped = rng.choice(clauses)
        return " ".join(c.strip() for c in clauses if c is not dropped)
    return " ".join(w for w in words if w.casefold() not in {"a", "an", "the"})


def selection(case_id: int, rng: random.Random) -> dict[str, Any]:
    """Every sentence of the case selected, in points of one to three, each with a random deletion proposed."""
    numbered = number(build_context(case_id=case_id))
    content: dict[str, list[dict[str, Any]]] = {section: [] for section in SECTIONS}
    sentences = list(numbered.sentences)
    while sentences:
        point = sentences[: rng.randint(1, 3)]
        sentences = sentences[len(point) :]
        section = rng.choice([s for s in SECTIONS if len(content[s]) < 6] or [SECTIONS[0]])
        if len(content[section]) >= 6:
            break
        content[section].append(
            {"ids": [s.id for s in point], "label": rng.choice(["", "Escrow", "Not paid", "EUR 5"]),
             "short": random_deletion(rng.choice(point).text, rng)}
        )  # fmt: skip
    return content


def generated_firm() -> tuple[Firm, User]:
    rng = random.Random(27)
    firm = FirmFactory(slug="served-property")
    admin = UserFactory(firm=firm, username="served-admin", role=User.Role.ADMIN)
    for c in range(8):
        case = CaseFactory(firm=firm, description=" ".join(rng.sample(SENTENCES, 2)))
        created = timezone.now() - dt.timedelta(days=c)
        DocumentFactory(case=case, created=created, pages=[" ".join(rng.sample(SENTENCES, 3)) for _ in range(2)])
        NoteFactory(case=case, created=created, text=" ".join(rng.sample(SENTENCES, 2)))
        DraftFactory(case=case, created=created, text=rng.choice(SENTENCES))
    return firm, admin


def check_served(firm: Firm, viewer: User) -> int:
    """Every statement served for the firm's cases is faithful; the number of statements checked."""
    checked = 0
    for case in Case.objects.filter(firm=firm):
        summary = CaseSummary.objects.get(case_id=case.pk)
        context = build_context(case_id=case.pk)
        own = {(s.source_id, s.text) for s in number(context).sentences}
        rendered = {(s["sources"][0], s["text"]) for section in field_facts(context).values() for s in section}
        node = Node.objects.get(firm=firm, kind=Node.Kind.CASE, ref_id=case.pk)
        brief = services.node_brief(viewer=viewer, node_id=str(node.pk), statements=True)
        served = brief.cases[0].statements
        assert [s["text"] for s in served] == [s["text"] for sec in SECTIONS for s in summary.content[sec]]
        for statement in served:
            assert not statement["legacy"]
            if statement["kind"] == "field":
                assert (statement["sources"][0], statement["text"]) in rendered
                continue
            stored = next(s for sec in SECTIONS for s in summary.content[sec] if s["text"] == statement["text"])
            assert statement["kind"] == "sentence" and (stored["sources"][0], stored["quote"]) in own
            assert faithful(statement["text"], stored["quote"]), (statement["text"], stored["quote"])
            kept = [t.key for t in tokens(statement["text"])]
            for word in {t.key for t in tokens(stored["quote"]) if meaning.is_meaning_word(t.key)}:
                assert kept.count(word) == [t.key for t in tokens(stored["quote"])].count(word)
            assert statement["text"] in brief.text
            checked += 1
    return checked


def test_every_served_statement_of_the_demo_is_a_records_own_words(
    demo_firm: Firm, demo_users: dict[str, User], openai_server: OpenAIServer
) -> None:
    services.graph_rebuild_firm(firm_id=demo_firm.pk)
    rng = random.Random(4)
    for case in Case.objects.filter(firm=demo_firm):
        services.summarize_case(case_id=case.pk, writer=ExtractiveWriter())
    assert check_served(demo_firm, demo_users["dana"]) >= 10
    for case in Case.objects.filter(firm=demo_firm):
        openai_server.add_chat(Reply.json(selection(case.pk, rng)))
        services.summarize_case(case_id=case.pk, writer=OpenAIWriter())
    assert check_served(demo_firm, demo_users["dana"]) >= 10


def test_every_served_statement_of_a_generated_firm_is_a_records_own_words(openai_server: OpenAIServer) -> None:
    firm, admin = generated_firm()
    services.graph_rebuild_firm(firm_id=firm.pk)
    rng = random.Random(12)
    shortened = 0
    for case in Case.objects.filter(firm=firm):
        openai_server.add_chat(Reply.json(selection(case.pk, rng)))
        summary = services.summarize_case(case_id=case.pk, writer=OpenAIWriter())
        shortened += sum(bool(s.get("shortened")) for sec in SECTIONS for s in summary.content[sec])
    assert check_served(firm, admin) >= 40
    # Some random deletions are deletion-only and keep every meaning word: those are served shortened.
    assert shortened > 0


def test_the_offline_demo_reads_well_no_cut_sentence_no_line_or_record_twice(demo_firm: Firm) -> None:
    for case in Case.objects.filter(firm=demo_firm):
        summary = services.summarize_case(case_id=case.pk, writer=ExtractiveWriter())
        lines = [line for line in summary.text.splitlines() if line.startswith("- ")]
        assert len(lines) == len(set(lines)) and "…" not in summary.text
        context = build_context(case_id=case.pk)
        titles = {item.fields["title"] for item in context.items if item.fields.get("title") and item.kind != "header"}
        for title in titles:
            assert sum(f"“{title}”" in line for line in lines) == 1, (title, summary.text)
        served = [s["quote"] for sec in SECTIONS for s in summary.content[sec] if s["kind"] == "sentence"]
        assert served and len(served) == len(set(served))
        # Each served sentence is whole: it ends as a sentence ends.
        assert all(q.rstrip("”\"')").endswith((".", "?", "!")) for q in served), served
