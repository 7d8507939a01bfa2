"""Verification of summaries: normalisation of dates, amounts and numbers; names; the report."""

from __future__ import annotations

import pytest

from graph_memory.summaries.context import ContextItem, ContextSlice, clip
from graph_memory.summaries.rulebook import SECTIONS, empty_content, render_text
from graph_memory.summaries.verify import extract_facts, name_candidates, parse_number, source_facts, unsupported

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
    ("two prior warnings", "HR file shows two prior warnings", True),
]


@pytest.mark.parametrize(("statement", "source", "supported"), NORMALISATION_TABLE)
def test_normalisation_table(statement: str, source: str, supported: bool) -> None:
    assert (unsupported(extract_facts(statement), source_facts(source)) is None) is supported


def test_table_is_large_enough_and_balanced() -> None:
    assert len(NORMALISATION_TABLE) >= 30
    assert sum(1 for *_, ok in NORMALISATION_TABLE if not ok) >= 12


@pytest.mark.parametrize(
    ("raw", "value"),
    [("31,840.50", "31840.50"), ("48.000.000", "48000000"), ("1,5", "1.5"), ("1,500", "1500"), ("4.800,50", "4800.50")],
)
def test_parse_number(raw: str, value: str) -> None:
    from decimal import Decimal

    assert parse_number(raw) == Decimal(value)


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
            ["Northwind Holdings, Inc.", "Castell Components GmbH"],
        ),
        ("The Share Purchase Agreement was signed.", ["Share Purchase Agreement"]),
        ("Client Alice Hale approved it.", ["Alice Hale"]),
        ("Signing is due on 15 December 2026.", []),
        ("Hale & Ward LLP acts for the buyer.", ["Hale & Ward LLP"]),
        ("Northwind pays USD 100.", []),  # one capitalised word is never a candidate
        ("Due December Northwind Holdings", ["Northwind Holdings"]),  # month names split a run
    ],
)
def test_name_candidates(text: str, names: list[str]) -> None:
    assert name_candidates(text) == names


def test_clip_never_ends_on_half_a_date_or_amount() -> None:
    text = "Purchase price EUR 48,000,000 with a reference date of 31 December 2025 and more words after it."
    for limit in range(20, len(text)):
        clipped = clip(text, limit)
        assert len(clipped) <= limit
        assert unsupported(extract_facts(clipped), source_facts(text)) is None, clipped


# --- verify_summary on a slice built by hand --------------------------------------------------


def _slice() -> ContextSlice:
    items = (
        ContextItem(
            "case:header", "header", "Case 2026-014: Northwind / Castell acquisition. Status: Open. Opened: 2026-03-02."
        ),
        ContextItem("client:northwind", "client", "Client: Northwind Holdings, Inc.", 8),
        ContextItem("counterparty:castell", "counterparty", "Counterparty: Castell Components GmbH", 14),
        ContextItem("deadline:signing", "deadline", "Deadline “Target signing”: due 2026-12-15, open."),
        ContextItem("invoice:inv-57", "invoice", "Invoice INV-0057 issued 2026-10-01: USD 31,840.50, sent."),
        ContextItem(
            "document:dd-memo#p1",
            "document",
            "Document “Due diligence memo” (2026-05-12), page 1: Castell's supply contract with Brightline Logistics LLC"
            " allows Brightline to terminate on 30 days' notice.",
            52,
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


def _content(**sections: list[tuple[str, list[str]]]) -> dict:
    content = empty_content()
    for section, statements in sections.items():
        content[section] = [{"text": t, "sources": s} for t, s in statements]
    return content


def test_verify_keeps_supported_and_drops_the_rest_with_reasons() -> None:
    from graph_memory.summaries.verify import verify_summary

    content = _content(
        status=[("The acquisition case is open since March 2, 2026.", ["case:header"])],
        parties=[
            ("Northwind Holdings buys Castell Components.", ["client:northwind", "counterparty:castell"]),
            ("Alice Hale leads the deal for Northwind.", ["client:northwind"]),
            ("Brightline Logistics may terminate on 30 days' notice.", ["document:dd-memo#p1"]),
            ("Acme Capital Partners finances the deal.", ["case:header"]),
        ],
        key_dates=[
            ("Target signing is due Dec. 15, 2026.", ["deadline:signing"]),
            ("Target signing is due 2026-12-20.", ["deadline:signing"]),
            ("Signing is due 2026-12-15.", ["case:header"]),  # true, but not in the cited source
        ],
        money=[
            ("INV-0057 for $31,840.50 is outstanding.", ["invoice:inv-57"]),
            ("INV-0057 for USD 31,850.00 is outstanding.", ["invoice:inv-57"]),
            ("Escrow of 10% applies.", ["invoice:inv-57"]),
        ],
        recent_activity=[
            ("A due diligence memo was filed.", ["document:dd-memo#p9"]),
            ("Memo filed.", []),
            ("   ", ["case:header"]),
            ("Long. " * 100, ["case:header"]),
            ("Memo of 2026-05-12 reviewed 2 issues.", ["document:dd-memo#p1"]),
        ],
    )
    result = verify_summary(content, _slice())
    kept = {(section, s["text"]) for section in SECTIONS for s in result.content[section]}
    assert kept == {
        ("status", "The acquisition case is open since March 2, 2026."),
        ("parties", "Northwind Holdings buys Castell Components."),
        ("parties", "Brightline Logistics may terminate on 30 days' notice."),
        ("key_dates", "Target signing is due Dec. 15, 2026."),
        ("money", "INV-0057 for $31,840.50 is outstanding."),
    }
    reasons = {(d["section"], d["reason"], d["detail"]) for d in result.report["dropped"]}
    assert reasons == {
        ("parties", "unknown_name", "Alice Hale"),
        ("parties", "unknown_name", "Acme Capital Partners"),
        ("key_dates", "unsupported_date", "2026-12-20"),
        ("key_dates", "unsupported_date", "2026-12-15"),
        ("money", "unsupported_amount", "USD 31850.00"),
        ("money", "unsupported_percentage", "10%"),
        ("recent_activity", "unknown_source", "document:dd-memo#p9"),
        ("recent_activity", "no_sources", ""),
        ("recent_activity", "empty", ""),
        ("recent_activity", "too_long", "599 characters"),
        ("recent_activity", "unsupported_number", "2"),
    }
    counts = result.report["counts"]
    assert (counts["statements"], counts["kept"], counts["dropped"]) == (16, 5, 11)
    assert counts["unknown_name"] == 2 and counts["unsupported_date"] == 2 and counts["unknown_source"] == 1
    assert result.report["kept"] == 5 and result.ok
    assert result.source_ids == ["case:header", "client:northwind", "counterparty:castell", "document:dd-memo#p1",
                                 "deadline:signing", "invoice:inv-57"]  # fmt: skip


def test_nothing_surviving_is_not_ok() -> None:
    from graph_memory.summaries.verify import verify_summary

    content = _content(status=[("Open.", ["case:nowhere"])], money=[("USD 5 owed.", ["invoice:inv-57"])])
    result = verify_summary(content, _slice())
    assert not result.ok
    assert result.report["kept"] == 0 and len(result.report["dropped"]) == 2
    assert render_text(result.content) == ""
