"""Verification of summaries: normalisation of facts, names, and each statement against its quote."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from graph_memory.summaries.context import ContextItem, ContextSlice, clip
from graph_memory.summaries.facts import (
    extract_facts,
    name_candidates,
    parse_number,
    proper_terms,
    source_facts,
    stem,
    unsupported,
    words_value,
)
from graph_memory.summaries.rulebook import MAX_QUOTE_CHARS, SECTIONS, empty_content, render_text
from graph_memory.summaries.verify import REASONS, normalise_quote, quote_span, verify_summary

# (statement, source, the statement is supported by the source)
NORMALISATION_TABLE = [
    # dates
    ("signing on 2026-12-15", "signing on 15 December 2026", True),
    ("Dec. 15, 2026", "due 2026-12-15", True),
    ("12/15/2026", "due 2026-12-15", True),
    ("15/12/2026", "December 15, 2026", True),
    ("15th December 2026", "2026-12-15", True),
    ("December 15 2026", "15 Dec 2026", True),
    ("15.12.2026", "2026-12-15", True),
    ("effective 01.09.2025.", "effective 2025-09-01", True),  # a dotted date ending a sentence
    ("Sept. 1, 2025", "effective 2025-09-01", True),
    ("1 of September 2025", "effective 2025-09-01", True),
    ("2026-12-16", "15 December 2026", False),
    ("2026-12-15", "12/15/2025", False),
    ("03/04/2026", "2026-03-04", False),  # ambiguous: day/month or month/day
    ("03/04/2026", "filed 03/04/2026", True),
    ("2026-02-30", "2026-03-02", False),  # impossible dates compare only as written
    ("December 2026", "due 2026-12-15", True),
    ("November 2026", "due 2026-12-15", False),
    ("in 2025", "reference date of 31 December 2025", True),
    ("in 2024", "reference date of 31 December 2025", False),
    # money
    ("USD 31,840.50", "$31,840.50", True),
    ("31840.50 USD", "USD 31,840.50", True),
    ("$31,840.5", "USD 31,840.50", True),
    ("USD 31,850.00", "USD 31,840.50", False),
    ("EUR 48,000,000", "EUR 48 million", True),
    ("EUR 48 Million", "EUR 48,000,000", True),  # scale words in any case
    ("EUR 48 MILLION", "EUR 48,000,000", True),
    ("EUR 48 mln", "EUR 48,000,000", True),
    ("USD 1.5M", "USD 1,500,000", True),
    ("USD 1.5M", "USD 15,000,000", False),
    ("€48m", "EUR 48,000,000", True),
    ("EUR 48.000.000", "EUR 48,000,000", True),
    ("USD 48,000,000", "EUR 48,000,000", False),  # same figure, other currency
    ("GBP 1.5 million", "£1,500,000", True),
    ("EUR 4.800,50", "EUR 4,800.50", True),
    ("USD 2.31 million", "USD 2,310,000", True),
    ("USD 2.3 million", "USD 2,310,000", False),
    ("48,000,000 euros", "EUR 48,000,000", True),
    ("USD 540,000", "annual base rent 540,000", False),  # a currency the source does not give
    ("48,000,000", "price EUR 48,000,000", True),  # a bare figure may repeat an amount
    # numbers written in words
    ("up to twelve million dollars", "claims USD 12,000,000", True),
    ("up to twelve million dollars", "claims USD 1,200,000", False),
    ("forty-eight million euros", "EUR 48,000,000", True),
    ("two prior warnings", "HR file shows two prior warnings", True),
    ("2 prior warnings", "HR file shows two prior warnings", True),
    ("three prior warnings", "HR file shows two prior warnings", False),
    ("held for eighteen months", "held for 18 months", True),
    ("forty-five days", "within 40 days", False),
    ("three percent", "capped at 3%", True),
    ("one of the parties", "the parties", True),  # "one" alone is not a count
    # percentages
    ("3 percent", "capped at 3%", True),
    ("3.5 per cent", "3.5 %", True),
    ("7%", "capped at 3%", False),
    ("7%", "7 days", False),
    # other numbers and identifiers
    ("held for 18 months", "Escrow held for 18 months", True),
    ("held for 24 months", "Escrow held for 18 months", False),
    ("Invoice INV-0057", "Invoice INV-0057 issued", True),
    ("Invoice INV-0058", "Invoice INV-0057 issued", False),
    ("30-day notice", "on 30 days' notice", True),
    ("warranty 14.2", "against warranty 14.2.", True),
    ("warranty 14.3", "against warranty 14.2.", False),
    ("the 3rd tranche", "paid in 3 tranches", True),
    ("case 2026-014", "Case 2026-014: Northwind", True),
    ("case 2026-015", "Case 2026-014: Northwind", False),
    ("Brightline may terminate", "may terminate on notice", True),  # "may" the verb is not a month
]


@pytest.mark.parametrize(("statement", "source", "supported"), NORMALISATION_TABLE)
def test_normalisation_table(statement: str, source: str, supported: bool) -> None:
    assert (unsupported(extract_facts(statement), source_facts(source)) is None) is supported


def test_table_is_large_enough_and_balanced() -> None:
    assert len(NORMALISATION_TABLE) >= 60
    assert sum(1 for *_, ok in NORMALISATION_TABLE if not ok) >= 20


@pytest.mark.parametrize(
    ("raw", "value"),
    [("31,840.50", "31840.50"), ("48.000.000", "48000000"), ("1,5", "1.5"), ("1,500", "1500"), ("4.800,50", "4800.50")],
)
def test_parse_number(raw: str, value: str) -> None:
    assert parse_number(raw) == Decimal(value)


@pytest.mark.parametrize(
    ("raw", "value"),
    [("forty-five", 45), ("twelve million", 12_000_000), ("three hundred and ten", 310), ("one million", 1_000_000)],
)
def test_words_value(raw: str, value: int) -> None:
    assert words_value(raw) == value


def test_extracted_facts_are_normalised() -> None:
    facts = extract_facts("Signing 15 December 2026; price EUR 48m; cap 3%; see INV-0057 and clause 9.")
    assert facts.dates == {"2026-12-15"}
    assert {(c, int(v)) for c, v in facts.money} == {("EUR", 48_000_000)}
    assert {int(v) for v in facts.percents} == {3}
    assert facts.idents == {"inv-0057"}
    assert {int(v) for v in facts.numbers} == {9}


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (
            "Northwind Holdings, Inc. buys Castell Components GmbH.",
            ["Northwind Holdings, Inc", "Castell Components GmbH"],
        ),
        ("The Share Purchase Agreement was signed.", ["Share Purchase Agreement"]),
        ("Client Alice Hale approved it.", ["Alice Hale"]),
        ("Signing is due on 15 December 2026.", []),
        ("Hale & Ward LLP acts for the buyer.", ["Hale & Ward LLP"]),
        ("Due December Northwind Holdings", ["Northwind Holdings"]),  # month names split a run
    ],
)
def test_name_candidates(text: str, names: list[str]) -> None:
    assert name_candidates(text) == names


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("Northwind pays USD 100.", []),  # a capitalised word opening a sentence is not checked
        ("Counsel for Oyelaran requested an extension.", ["Oyelaran"]),
        ("The “Target signing” deadline has been met.", ["Target"]),
        ("According to the Billing Ledger, INV-0057 is open.", ["Billing Ledger"]),  # identifiers are facts
        ("It was filed. Brightline objected; the SEC opened an inquiry.", ["SEC"]),
    ],
)
def test_proper_terms(text: str, terms: list[str]) -> None:
    assert proper_terms(text) == terms


def test_stems_join_the_forms_of_a_word() -> None:
    assert len({stem(w) for w in ("terminated", "termination", "terminate", "terminates")}) == 1
    assert len({stem(w) for w in ("party", "parties")}) == 1
    assert stem("submitted") == stem("submit")


def test_clip_never_ends_on_half_a_date_or_amount() -> None:
    text = "Purchase price EUR 48,000,000 with a reference date of 31 December 2025 and more words after it."
    for limit in range(20, len(text)):
        clipped = clip(text, limit)
        assert len(clipped) <= limit
        assert unsupported(extract_facts(clipped), source_facts(text)) is None, clipped


def test_quotes_are_normalised_for_whitespace_quote_marks_and_dashes_only() -> None:
    assert normalise_quote("Deadline  “Target\nsigning” \u2013 due") == 'Deadline "Target signing" - due'
    assert quote_span("“Escrow of EUR 4,800,000 held for 18 months.”") == "Escrow of EUR 4,800,000 held for 18 months"
    assert quote_span("held  for 18 months") == "held for 18 months"


# --- verify_summary on a slice built by hand --------------------------------------------------

HEADER = "Case 2026-014: Northwind / Castell acquisition. Status: Open. Opened: 2026-03-02. "
MEMO_LABEL = "Document “Due diligence memo” (2026-05-12), page 1: "
NOTE_LABEL = "Working note (2026-11-02): "
SPA_LABEL = "Document “Share purchase agreement, draft 3” (2026-04-01), page 2: "


def _slice() -> ContextSlice:
    items = (
        ContextItem(
            "case:header",
            "header",
            HEADER + "Buy-side counsel to Northwind Holdings on the purchase of all shares of Castell Components GmbH.",
            len(HEADER),
            {"title": "Northwind / Castell acquisition"},
        ),
        ContextItem("client:northwind", "client", "Client: Northwind Holdings, Inc.", 8),
        ContextItem("counterparty:castell", "counterparty", "Counterparty: Castell Components GmbH", 14),
        ContextItem("deadline:signing", "deadline", "Deadline “Target signing”: due 2026-12-15, open."),
        ContextItem("invoice:inv-57", "invoice", "Invoice INV-0057 issued 2026-10-01: USD 31,840.50, sent."),
        ContextItem(
            "document:dd-memo#p1",
            "document",
            MEMO_LABEL + "Castell's supply contract with Brightline Logistics LLC allows Brightline to terminate"
            " on 30 days' notice.",
            len(MEMO_LABEL),
            {"title": "Due diligence memo"},
        ),
        ContextItem(
            "document:spa-v3#p2",
            "document",
            SPA_LABEL + "Clause 9: the Buyer may terminate if the antitrust clearance is not obtained by 2026-12-15."
            " Escrow of EUR 4,800,000 held for 18 months.",
            len(SPA_LABEL),
            {"title": "Share purchase agreement, draft 3"},
        ),
        ContextItem(
            "note:n1",
            "note",
            NOTE_LABEL + "Client wants to close before year end; price adjustment talks continue.",
            len(NOTE_LABEL),
        ),
    )
    return ContextSlice(
        case_id=1,
        firm_id=1,
        case_key="2026-014",
        title="Northwind / Castell acquisition",
        description="",
        client_name="Northwind Holdings, Inc.",
        counterparty_names=("Castell Components GmbH",),
        items=items,
        omitted=0,
    )


NOTE_QUOTE = "Client wants to close before year end; price adjustment talks continue."
MEMO_QUOTE = "allows Brightline to terminate on 30 days' notice"
SPA_QUOTE = "the Buyer may terminate if the antitrust clearance is not obtained by 2026-12-15"
DEADLINE = "Deadline “Target signing”: due 2026-12-15, open."
INVOICE = "Invoice INV-0057 issued 2026-10-01: USD 31,840.50, sent."


def verdict(text: str, quote: str, sources: list[str]) -> tuple[str, str] | None:
    """The reason and detail one statement is dropped for, or None when it is kept."""
    content = empty_content()
    content["status"] = [{"text": text, "sources": sources, "quote": quote}]
    result = verify_summary(content, _slice())
    if result.kept:
        return None
    (entry,) = result.report["dropped"]
    return entry["reason"], entry["detail"]


KEPT = [
    ("Client wants to close before year end; price adjustment talks continue.", NOTE_QUOTE, ["note:n1"]),
    ("Northwind wants to close before year end.", "Client wants to close before year end", ["note:n1"]),
    ("The acquisition case is open since March 2, 2026.", "Castell acquisition. Status: Open. Opened: 2026-03-02.",
     ["case:header"]),
    ("Brightline Logistics may terminate on 30 days' notice.", "Brightline Logistics LLC " + MEMO_QUOTE,
     ["document:dd-memo#p1"]),
    ("Target signing is due Dec. 15, 2026.", DEADLINE, ["deadline:signing"]),
    ('The "Target signing" deadline is due 15 December 2026 and open.', DEADLINE, ["deadline:signing"]),
    ("The Buyer may terminate if the antitrust clearance is not obtained by 15.12.2026.", SPA_QUOTE,
     ["document:spa-v3#p2"]),
    ("Escrow of EUR 4.8 Million is held for eighteen months.", "Escrow of EUR 4,800,000 held for 18 months.",
     ["document:spa-v3#p2"]),
    # A heading of the cited record is not a stray name.
    ("According to the Due Diligence Memo, Brightline may terminate on 30 days' notice.", MEMO_QUOTE,
     ["document:dd-memo#p1"]),
    ("Northwind Holdings, Inc. is the client.", "Client: Northwind Holdings, Inc.", ["client:northwind"]),
    ("The working note records that the client wants to close before year end.", NOTE_QUOTE, ["note:n1"]),
    ("Castell Components GmbH is the counterparty.", "Counterparty: Castell Components GmbH",
     ["counterparty:castell"]),
    # Curly or straight quotation marks, any dash, any spacing: the same quote.
    ("Target signing is due on 2026-12-15.", 'Deadline "Target signing": due 2026-12-15,', ["deadline:signing"]),
    # The quote may be found in any cited record; the kept statement cites that one.
    ("Target signing is due on 2026-12-15.", DEADLINE, ["note:n1", "deadline:signing"]),
]  # fmt: skip


@pytest.mark.parametrize(("text", "quote", "sources"), KEPT)
def test_statements_backed_by_their_quote_are_kept(text: str, quote: str, sources: list[str]) -> None:
    assert verdict(text, quote, sources) is None


DROPPED = [
    # the quote itself
    ("Brightline may terminate on 30 days' notice.", "Brightline may end the contract", ["document:dd-memo#p1"],
     ("quote_not_in_source", "document:dd-memo#p1")),
    ("Brightline may terminate on 30 days' notice.", MEMO_QUOTE, ["note:n1"], ("quote_not_in_source", "note:n1")),
    ("Brightline may terminate on 30 days' notice.", "", ["document:dd-memo#p1"], ("no_quote", "")),
    ("Brightline may terminate on notice.", "x" * (MAX_QUOTE_CHARS + 1), ["document:dd-memo#p1"],
     ("quote_too_long", f"{MAX_QUOTE_CHARS + 1} characters")),
    # facts not in the quote
    ("The Buyer may terminate if clearance is not obtained by 2026-12-20.", SPA_QUOTE, ["document:spa-v3#p2"],
     ("unsupported_date", "2026-12-20")),
    # a month borrowed from another cited record (the invoice's October 2026)
    ("Target signing is due in October 2026.", DEADLINE, ["deadline:signing", "invoice:inv-57"],
     ("unsupported_date", "2026-10")),
    # a value from another cited record
    ("Invoice INV-0057 issued 2026-10-01: EUR 4,800,000.", INVOICE, ["invoice:inv-57", "document:spa-v3#p2"],
     ("unsupported_amount", "EUR 4800000")),
    ("The buyer may pay up to twelve million dollars.", SPA_QUOTE, ["document:spa-v3#p2"],
     ("unsupported_amount", "USD 12000000")),
    # words of state and negations
    ("The Target signing deadline has been met.", DEADLINE, ["deadline:signing"], ("unsupported_state", "met")),
    ("Invoice INV-0057 was paid.", INVOICE, ["invoice:inv-57"], ("unsupported_state", "paid")),
    ("The court granted the motion.", "Northwind Holdings, Inc.", ["client:northwind"],
     ("unsupported_state", "granted")),
    ("Brightline may not terminate on 30 days' notice.", MEMO_QUOTE, ["document:dd-memo#p1"],
     ("unsupported_negation", "not")),
    # roles
    ("Castell Components GmbH is the client and Northwind Holdings, Inc. is the counterparty.",
     "Client: Northwind Holdings, Inc.", ["client:northwind", "counterparty:castell"],
     ("wrong_role", "Northwind Holdings, Inc. is the client, not the counterparty")),
    ("The counterparty Northwind wants to close before year end.", "Client wants to close before year end",
     ["note:n1"], ("wrong_role", "Northwind Holdings, Inc. is the client, not the counterparty")),
    # names
    ("Counsel for Oyelaran wants to close before year end.", NOTE_QUOTE, ["note:n1"],
     ("unknown_name", "Oyelaran")),
    ("Acme Capital Partners wants to close before year end.", NOTE_QUOTE, ["note:n1"],
     ("unknown_name", "Acme Capital Partners")),
    # The cited record's own heading, used as a claim rather than as the source.
    ("Brightline may terminate the Due Diligence Memo on 30 days' notice.", MEMO_QUOTE, ["document:dd-memo#p1"],
     ("uncovered", "due, diligence, memo")),
    ("According to the Billing Ledger, Brightline may terminate on 30 days' notice.", MEMO_QUOTE,
     ["document:dd-memo#p1"], ("unknown_name", "Billing Ledger")),
    # the right word from the wrong record of the same case (cross-attribution)
    ("The client wants to close with Brightline before year end.", NOTE_QUOTE, ["note:n1"],
     ("name_not_in_quote", "Brightline")),
    # events and re-bound numbers: words the quote does not hold
    ("The court scheduled a hearing for the parties.", NOTE_QUOTE, ["note:n1"],
     ("uncovered", "court, scheduled, hearing, parties")),
    ("The team has identified 18 witnesses.", "Escrow of EUR 4,800,000 held for 18 months.",
     ["document:spa-v3#p2"], ("uncovered", "team, identified, witnesses")),
]  # fmt: skip


@pytest.mark.parametrize(("text", "quote", "sources", "expected"), DROPPED)
def test_statements_their_quote_does_not_back_are_dropped(
    text: str, quote: str, sources: list[str], expected: tuple[str, str]
) -> None:
    assert verdict(text, quote, sources) == expected


@pytest.mark.parametrize(
    "text", ["Yes", "No.", "N/A", "Open", "  ", "Northwind Holdings, Inc.", "Northwind v. Castell."]
)
def test_empty_and_contentless_statements_are_dropped(text: str) -> None:
    content = empty_content()
    content["status"] = [{"text": text, "sources": ["case:header"], "quote": "Status: Open."}]
    result = verify_summary(content, _slice())
    assert result.kept == 0 and not result.ok
    assert result.report["dropped"][0]["reason"] == ("empty" if not text.strip() else "contentless")


def test_duplicates_are_dropped_whatever_their_case_spacing_and_punctuation() -> None:
    content = empty_content()
    content["status"] = [
        {"text": "Client wants to close before year end.", "sources": ["note:n1"], "quote": NOTE_QUOTE}
    ]
    content["open_questions"] = [
        {"text": "client wants to close  before year end", "sources": ["note:n1"], "quote": NOTE_QUOTE}
    ]
    result = verify_summary(content, _slice())
    assert result.kept == 1
    assert [(d["section"], d["reason"]) for d in result.report["dropped"]] == [("open_questions", "duplicate")]


def _content(**sections: list[tuple[str, list[str], str]]) -> dict[str, Any]:
    content = empty_content()
    for section, statements in sections.items():
        content[section] = [{"text": t, "sources": s, "quote": q} for t, s, q in statements]
    return content


def test_verify_keeps_supported_and_drops_the_rest_with_reasons() -> None:
    content = _content(
        status=[("The case is open since March 2, 2026.", ["case:header"], "Status: Open. Opened: 2026-03-02.")],
        parties=[("Alice Hale leads the deal for Northwind.", ["client:northwind"], "Client: Northwind Holdings")],
        key_dates=[
            ("Target signing is due Dec. 15, 2026.", ["deadline:signing"], DEADLINE),
            ("Target signing is due 2026-12-20.", ["deadline:signing"], DEADLINE),
        ],
        money=[("Escrow of 10% applies.", ["invoice:inv-57"], INVOICE)],
        recent_activity=[
            ("A due diligence memo was filed.", ["document:dd-memo#p9"], "memo"),
            ("Memo filed.", [], "memo"),
            ("   ", ["case:header"], ""),
            ("Long. " * 100, ["case:header"], "Long."),
        ],
    )
    result = verify_summary(content, _slice())
    kept = {(section, s["text"]) for section in SECTIONS for s in result.content[section]}
    assert kept == {
        ("status", "The case is open since March 2, 2026."),
        ("key_dates", "Target signing is due Dec. 15, 2026."),
    }
    assert result.content["status"][0] == {
        "text": "The case is open since March 2, 2026.",
        "sources": ["case:header"],
        "quote": "Status: Open. Opened: 2026-03-02.",
        "kind": "quote",
    }
    reasons = {(d["section"], d["reason"], d["detail"]) for d in result.report["dropped"]}
    assert reasons == {
        ("parties", "unknown_name", "Alice Hale"),
        ("key_dates", "unsupported_date", "2026-12-20"),
        ("money", "unsupported_percentage", "10%"),
        ("recent_activity", "unknown_source", "document:dd-memo#p9"),
        ("recent_activity", "no_sources", ""),
        ("recent_activity", "empty", ""),
        ("recent_activity", "too_long", "599 characters"),
    }
    counts = result.report["counts"]
    assert (counts["statements"], counts["kept"], counts["dropped"]) == (9, 2, 7)
    assert set(counts) == {"statements", "kept", "dropped", *REASONS}
    assert result.report["kept"] == 2 and result.ok
    assert result.source_ids == ["case:header", "deadline:signing"]


def test_nothing_surviving_is_not_ok() -> None:
    content = _content(
        status=[("Open.", ["case:nowhere"], "Open")], money=[("USD 5 owed.", ["invoice:inv-57"], INVOICE)]
    )
    result = verify_summary(content, _slice())
    assert not result.ok
    assert result.report["kept"] == 0 and len(result.report["dropped"]) == 2
    assert render_text(result.content) == ""
