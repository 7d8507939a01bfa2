"""What a text states (facts.py): dates, amounts, percentages, numbers and identifiers normalised, names,
stems; and the slice's clip, which never ends on half a date or an amount."""

from __future__ import annotations

from decimal import Decimal

import pytest

from graph_memory.summaries.context import clip
from graph_memory.summaries.facts import Facts, extract_facts, parse_number, proper_terms, stem, words_value
from graph_memory.summaries.sentences import normalise_quote, quote_span


def _widened(text: str) -> Facts:
    """A text's facts with what another text may derive from them: a date's month and year, bare values."""
    facts = extract_facts(text)
    for iso in facts.dates:
        facts.months.add(iso[:7])
        facts.numbers.add(Decimal(iso[:4]))
    for month in facts.months:
        facts.numbers.add(Decimal(month[:4]))
    facts.numbers.update(value for _, value in facts.money)
    facts.numbers.update(facts.percents)
    return facts


def _says_no_more(text: str, source: str) -> bool:
    """Every fact of `text` is a fact of `source`, however each writes it."""
    said, known = extract_facts(text), _widened(source)
    return (
        said.dates <= known.dates
        and said.as_written <= known.as_written
        and said.months <= known.months
        and said.money <= known.money
        and said.percents <= known.percents
        and said.idents <= known.idents
        and said.numbers <= known.numbers
    )


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
def test_the_same_fact_written_two_ways_is_one_fact(statement: str, source: str, supported: bool) -> None:
    assert _says_no_more(statement, source) is supported

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
        assert _says_no_more(clipped, text), clipped


def test_quotes_are_normalised_for_whitespace_quote_marks_and_dashes_only() -> None:
    assert normalise_quote("Deadline  “Target\nsigning” \u2013 due") == 'Deadline "Target signing" - due'
    assert quote_span("“Escrow of EUR 4,800,000 held for 18 months.”") == "Escrow of EUR 4,800,000 held for 18 months"
    assert quote_span("held  for 18 months") == "held for 18 months"


