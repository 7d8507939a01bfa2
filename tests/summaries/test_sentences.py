"""Sentence splitting and numbering (sentences.py): abbreviations never cut a sentence, ids are stable."""

from __future__ import annotations

import pytest

from graph_memory.summaries.context import ContextItem, ContextSlice
from graph_memory.summaries.sentences import ABBREVIATIONS, COMPANY_FORMS, CUT_MARK, NARRATIVE_KINDS, number, split

ABBRS = sorted(ABBREVIATIONS)


def _forms(abbr: str) -> list[str]:
    """As written in the list, capitalised ("No.", "Art.", "Mr.") and in capitals ("U.S.")."""
    return sorted({abbr, abbr[:1].upper() + abbr[1:], abbr.upper()})


@pytest.mark.parametrize(
    ("abbr", "following"),
    [
        (abbr, following)
        for abbr in ABBRS
        for following in ["12", "Lee", "(3)", "\u201cClosing\u201d"]
        # a capitalised word after a company form opens a sentence: test_a_company_form_closes_its_name
        if not (abbr in COMPANY_FORMS and following[:1].isalpha())
    ],
)
def test_an_abbreviation_does_not_end_a_sentence(abbr: str, following: str) -> None:
    for form in _forms(abbr):
        sentence = f"The note cites {form} {following} and the buyer agreed to it."
        assert split(sentence) == [sentence]
        assert split(f"{sentence} The seller objected.") == [sentence, "The seller objected."]


@pytest.mark.parametrize("abbr", sorted(COMPANY_FORMS))
def test_a_company_form_closes_its_name(abbr: str) -> None:
    """"... signed by Aster Capital LLC. Damages are claimed ...": the name ends there, and so does the sentence;
    another company form, a bracket, a number, a lower-case word, or two capitalised words ("Pension
    Trustees Limited": a name that may go on) after it continue the sentence."""
    for form in _forms(abbr):
        first = f"The release was not signed by Aster Capital {form}"
        assert split(f"{first} Damages are claimed in full.") == [first, "Damages are claimed in full."]
        for going_on in ("Ltd. was served.", "(the Buyer) was served.", "12 shares were sold.", "was served.",
                         "Pension Trustees Limited was served."):
            assert split(f"{first} {going_on}") == [f"{first} {going_on}"]


@pytest.mark.parametrize(
    "sentence",
    [
        "The rate is 5.2 per cent and the buyer agreed.",
        "The claim is EUR 2.5 million under cl. 9.2 of the SPA.",
        "J. Lee signed the release on behalf of the seller.",
        "The U.S. Treasury approved the transfer.",
        "Counsel for J. R. R. Tolkien Ltd. objected.",
        "The warranty (SPA 5.2, p. 54) covers the tax claim.",
        "See e.g. Art. 5 and No. 7 of the schedule.",
        "The agreement was signed on Jan. 5 by Dr. Okafor of Castell Co. Ltd.",
    ],
)
def test_sentences_that_stay_whole(sentence: str) -> None:
    assert split(sentence) == [sentence]


def test_a_note_ending_with_a_citation_comes_out_whole() -> None:
    """The issue's example: "(SPA 5.2, p. 54)" was served as "…(SPA 5.2, p."."""
    text = "The seller gave no tax warranty. The buyer relies on the indemnity instead (SPA 5.2, p. 54)"
    assert split(text) == [
        "The seller gave no tax warranty.",
        "The buyer relies on the indemnity instead (SPA 5.2, p. 54)",
    ]
    assert split(text + ".")[-1] == "The buyer relies on the indemnity instead (SPA 5.2, p. 54)."


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("The buyer signed. The seller did not.", ["The buyer signed.", "The seller did not."]),
        ("Is the release signed? Yes, on Friday.", ["Is the release signed?", "Yes, on Friday."]),
        ("Stop the transfer! Next, call the agent.", ["Stop the transfer!", "Next, call the agent."]),
        ('He said "we will pay." Then he left.', ['He said "we will pay."', "Then he left."]),
        ("It was filed (see p. 54). The court agreed.", ["It was filed (see p. 54).", "The court agreed."]),
        ("The deadline passed. 2026 will be busy.", ["The deadline passed.", "2026 will be busy."]),
        ("The release is signed.\n\n  The funds moved.", ["The release is signed.", "The funds moved."]),
        ("It was signed. the funds moved.", ["It was signed. the funds moved."]),  # no capital: not an end
        ("", []),
    ],
)
def test_real_ends_split(text: str, sentences: list[str]) -> None:
    assert split(text) == sentences


# --- numbering ---------------------------------------------------------------------------------

HEADER_LABEL = "Case M-1: Loan recovery. Status: open. Opened: 2026-01-05. "
NOTE_LABEL = "Working note (2026-02-01): "


def _slice(*extra: ContextItem) -> ContextSlice:
    items = (
        ContextItem(
            "case:header",
            "header",
            HEADER_LABEL + "Brightline Logistics LLC owes the client EUR 256,580. The client sued in March.",
            body_start=len(HEADER_LABEL),
        ),
        ContextItem("client:c1", "client", "Client: Castell Holdings GmbH. A second sentence.", body_start=8),
        ContextItem("counterparty:p1", "counterparty", "Counterparty: Brightline Logistics LLC", body_start=14),
        ContextItem("deadline:d1", "deadline", "Deadline \u201cReply\u201d: due 2026-03-01, open. Really."),
        ContextItem("invoice:i1", "invoice", "Invoice INV-0057 issued 2026-01-02: EUR 1,000.00, unpaid. Yes."),
        ContextItem(
            "note:n1",
            "note",
            NOTE_LABEL + "The buyer relies on the indemnity (SPA 5.2, p. 54). Brightline has not paid.",
            body_start=len(NOTE_LABEL),
        ),
        ContextItem(
            "draft:d1",
            "draft",
            "Draft \u201cLetter\u201d: We will sue. The claim is due now and the seller kn" + CUT_MARK,
            body_start=len("Draft \u201cLetter\u201d: "),
        ),
        ContextItem(
            "document:doc1#p1",
            "document",
            "Document \u201cSPA\u201d, page 1: The buyer pays EUR 2.5 million. The seller gives warranties.",
            body_start=len("Document \u201cSPA\u201d, page 1: "),
        ),
        *extra,
    )
    return ContextSlice(
        1, 1, "M-1", "Loan recovery", "", "Castell Holdings GmbH", ("Brightline Logistics LLC",), items, 0
    )


def test_number_gives_every_narrative_sentence_an_id_in_slice_order() -> None:
    numbered = number(_slice())
    assert [(s.id, s.source_id, s.text) for s in numbered.sentences] == [
        ("s1", "case:header", "Brightline Logistics LLC owes the client EUR 256,580."),
        ("s2", "case:header", "The client sued in March."),
        ("s3", "note:n1", "The buyer relies on the indemnity (SPA 5.2, p. 54)."),
        ("s4", "note:n1", "Brightline has not paid."),
        ("s5", "draft:d1", "We will sue."),
        ("s6", "document:doc1#p1", "The buyer pays EUR 2.5 million."),
        ("s7", "document:doc1#p1", "The seller gives warranties."),
    ]


def test_ids_are_stable_and_each_belongs_to_one_record() -> None:
    context = _slice()
    first, second = number(context), number(context)
    assert first.sentences == second.sentences
    assert first.text == second.text
    assert len(first.by_id) == len(first.sentences)
    for sentence in first.sentences:
        item = context.get(sentence.source_id)
        assert item is not None and item.kind in NARRATIVE_KINDS
        assert sentence.text in " ".join(item.body.split())


def test_field_records_and_the_headers_own_fields_get_no_ids() -> None:
    numbered = number(_slice())
    sources = {s.source_id for s in numbered.sentences}
    assert not sources & {"client:c1", "counterparty:p1", "deadline:d1", "invoice:i1"}
    texts = " ".join(s.text for s in numbered.sentences)
    assert "Status" not in texts and "Castell" not in texts and "INV-0057" not in texts


def test_a_cut_last_sentence_gets_no_id() -> None:
    numbered = number(_slice())
    drafts = [s.text for s in numbered.sentences if s.source_id == "draft:d1"]
    assert drafts == ["We will sue."]
    assert all(CUT_MARK not in s.text for s in numbered.sentences)


def test_a_record_cut_inside_its_only_sentence_has_no_ids_and_reads_as_a_line() -> None:
    cut = ContextItem(
        "note:n2", "note", NOTE_LABEL + "The seller may not have sig" + CUT_MARK, body_start=len(NOTE_LABEL)
    )
    numbered = number(_slice(cut))
    assert all(s.source_id != "note:n2" for s in numbered.sentences)
    assert cut.line in numbered.text.splitlines()


def test_more_records_after_do_not_change_earlier_ids() -> None:
    later = ContextItem("note:n3", "note", NOTE_LABEL + "A later note. It adds two.", body_start=len(NOTE_LABEL))
    before, after = number(_slice()), number(_slice(later))
    assert after.sentences[: len(before.sentences)] == before.sentences
    assert [s.id for s in after.sentences[len(before.sentences) :]] == ["s8", "s9"]


def test_numbered_text_lists_sentences_under_their_record() -> None:
    lines = number(_slice()).text.splitlines()
    assert "[note:n1] Working note (2026-02-01):" in lines
    assert "  [s3] The buyer relies on the indemnity (SPA 5.2, p. 54)." in lines
    assert "[client:c1] Client: Castell Holdings GmbH. A second sentence." in lines
    assert lines.index("[note:n1] Working note (2026-02-01):") + 1 == lines.index(
        "  [s3] The buyer relies on the indemnity (SPA 5.2, p. 54)."
    )
