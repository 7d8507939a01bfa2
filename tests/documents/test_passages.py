"""The offline answer ranks passages by the question's words together: a different "release" does not qualify."""

from __future__ import annotations

from functools import cache

import pytest

from graph_memory.adapter import DocumentRef
from graph_memory.documents import answers
from graph_memory.documents.passages import Passage, passages, rank
from graph_memory.documents.routing import build_sections_offline
from graph_memory.documents.terms import quote_on_page
from tests.long_documents import Question, key_phrase, long_agreement, quote_is_precise

DEMO_QUESTION = "What does the SPA say about the escrow release?"  # demo/run.py ASK


@cache
def demo_document() -> tuple[list[str], list[Question], list[answers._Section]]:
    """The demo firm's long document (30 articles of 13 pages) and its offline index, as the demo builds it."""
    pages, questions = long_agreement(articles=30, pages_per_article=13)
    ref = DocumentRef(key="spa", title="Share Purchase Agreement", page_count=len(pages))
    sections = [answers._Section(f"spa#{s.id}", ref, s.id, s.title, s.first_page, s.last_page, tuple(s.terms),
                                 s.covers) for s in build_sections_offline(pages).sections]  # fmt: skip
    return pages, questions, sections


def ask(question: str) -> list[answers.Quote]:
    pages, _, sections = demo_document()
    chosen = answers.route_offline(sections, question)
    loaded = [(s, n, pages[n - 1]) for s in chosen for n in range(s.first_page, s.last_page + 1)]
    return answers.answer_offline(loaded, question, limit=answers.OFFLINE_QUOTES)


def test_the_demo_question_quotes_the_escrow_release_and_no_press_release() -> None:
    pages, questions, _ = demo_document()
    escrow = next(q for q in questions if "escrow amount released" in q.text)
    quotes = ask(DEMO_QUESTION)
    assert quotes and escrow.clause in quotes[0].text and quotes[0].page == escrow.page
    assert not any("press release" in q.text.casefold() for q in quotes), [q.text for q in quotes]
    assert all(q.section == "spa#article-5" for q in quotes)
    assert all(quote_is_precise(DEMO_QUESTION, pages, q.page, q.text) for q in quotes)


def test_every_quote_of_the_bench_questions_holds_the_key_phrase_and_recall_does_not_drop() -> None:
    pages, questions, _ = demo_document()
    served = precise = answered = 0
    for question in questions:
        quotes = ask(question.text)
        assert all(quote_on_page(q.text, pages[q.page - 1]) for q in quotes)
        served += len(quotes)
        precise += sum(quote_is_precise(question.text, pages, q.page, q.text) for q in quotes)
        answered += any(q.page == question.page and question.clause in q.text for q in quotes)
    assert served and precise == served, f"{precise}/{served} quotes hold the question's key phrase"
    # One question ("non-compete") has its clause under another clause's heading, in other words: none of
    # its passages qualifies, and it gets no quote rather than a wrong one. The rest are answered first.
    assert answered >= len(questions) - 1, f"{answered}/{len(questions)}"


def test_the_key_phrase_comes_from_the_question_words_the_document_uses() -> None:
    pages, _, _ = demo_document()
    assert key_phrase(DEMO_QUESTION, pages) == ["escrow", "relea"]  # "SPA" names the document, not its text
    press = next(p for p in pages if "press release concerning" in p)
    assert not quote_is_precise(DEMO_QUESTION, pages, pages.index(press) + 1, "No party shall make any press release")


def passage(text: str, heading: str = "", page: int = 1) -> Passage:
    return Passage(page, text, heading)


def test_a_passage_qualifies_only_with_the_words_close_together() -> None:
    near = passage("The escrow amount is released to the sellers after eighteen months.")
    far = passage("The escrow agent is appointed by the parties. " + "The parties act in good faith. " * 6
                  + "A press release needs the consent of both parties.")  # fmt: skip
    other = passage("No party shall issue any press release about this agreement without consent.")
    ranked = rank([far, other, near], "escrow release")
    assert [r.passage for r in ranked] == [near]


def test_the_heading_a_passage_sits_under_supplies_words() -> None:
    page = ("ARTICLE 5 ESCROW\n\n5.2 Release of the Escrow Amount\n\n"
            "The amount is paid to the sellers eighteen months after completion of the sale.\n\n"
            "ARTICLE 6 ANNOUNCEMENTS\n\nNo party shall make any press release without the consent of the other.")  # fmt: skip
    found = passages([("s", 1, page)])
    headings = ["ARTICLE 5 ESCROW / 5.2 Release of the Escrow Amount", "ARTICLE 6 ANNOUNCEMENTS"]
    assert [p.heading for p in found] == headings
    ranked = rank(found, "What about the escrow release?")
    assert [r.passage.text for r in ranked] == [found[0].text]
    assert ranked[0].own == 0 and ranked[0].coverage == 1.0  # held by the heading alone


def test_the_clause_that_says_it_outranks_the_one_only_filed_under_it() -> None:
    heading = "ARTICLE 5 ESCROW / 5.2 Release of the Escrow Amount"
    filed = passage("Any dispute about the amount shall be notified in writing within twenty days.", heading)
    says = passage("The escrow amount shall be released to the sellers eighteen months after completion.", heading)
    assert [r.passage for r in rank([filed, says], "escrow release")] == [says, filed]


def test_boilerplate_repeated_word_for_word_ranks_behind_a_clause_said_once() -> None:
    boiler = "Nothing in this clause shall limit any other right of a party."
    repeated = [passage(f"Any dispute about the capital expenditure is notified in writing. {boiler}", page=p)
                for p in (1, 2)]  # fmt: skip
    clause = passage("Until completion the company incurs no capital expenditure above EUR 250,000.", page=3)
    others = [passage(f"The landlord reviews the rent of unit {n} every five years under the lease.", page=4)
              for n in range(6)]  # fmt: skip
    ranked = rank([*repeated, clause, *others], "What capital expenditure limit applies before completion?")
    assert ranked[0].passage == clause
    # They qualify (the words are there, close together), but what they say is said twice word for word.
    assert {r.passage for r in ranked[1:]} == set(repeated) and all(r.distinct == 0 for r in ranked[1:])


@pytest.mark.parametrize("question", ["", "What does it say?", "zebra quokka nonesuch"])
def test_a_question_without_words_the_pages_use_gets_no_passage(question: str) -> None:
    assert rank([passage("The escrow amount is released to the sellers after eighteen months.")], question) == []
