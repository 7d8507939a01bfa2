"""Name normalisation: which names are the same party, and which are not."""

from __future__ import annotations

import pytest
from django.db import connection

from graph_memory.map import names
from graph_memory.map.names import lookup_key, party_key

SAME_PARTY = [
    ("Northwind Holdings, Inc.", "NORTHWIND HOLDINGS INC"),
    ("Northwind Holdings, Inc.", "Northwind Holdings"),
    ("ACME Corp.", "Acme Corporation"),
    ("Acme Corporation", "acme"),
    ("The Acme Company", "ACME CO"),
    ("Acme, L.L.C.", "Acme LLC"),
    ("Acme Ltd", "ACME LIMITED"),
    ("Castell Components GmbH", "Castell Components"),
    ("Müller GmbH & Co. KG", "MULLER"),
    ("Société Générale S.A.", "Societe Generale SA"),
    ("Société Générale S. A.", "SOCIÉTÉ GÉNÉRALE"),
    ("Grupo Bimbo, S.A. de C.V.", "Grupo Bimbo"),
    ("Tesco plc", "TESCO PLC"),
    ("Philips N.V.", "Philips NV"),
    ("Heineken B.V.", "heineken"),
    ("Polska Sp. z o.o.", "Polska"),
    ("O'Brien & Sons Ltd.", "OBrien and Sons"),
    ("O\u2019Brien & Sons", "o'brien & sons"),
    ("Straße AG", "STRASSE"),
    ("  Brightline   Logistics LLC ", "brightline logistics"),
    ("Crème Brûlée Pty Ltd", "creme brulee"),
    ("\uff21\uff23\uff2d\uff25 Inc", "Acme"),  # full-width letters
]

DIFFERENT_PARTIES = [
    ("Northwind Holdings, Inc.", "Northwind"),
    ("Northwind Holdings", "Northwind Holdings Europe"),
    ("Acme Corp.", "Acme Widgets Corp."),
    ("Jordan Lee", "Jordan Leigh"),
    ("Meridian Foods Corp.", "Meridian Food Corp."),
    ("Parkside Realty Partners", "Parkside Realty"),
    ("Hale & Ward LLP", "Hale Ward"),
    ("Limited", "Inc."),
    ("Castell Components GmbH", "Castel Components GmbH"),
    ("Acme Holdings Inc", "Acme Inc Holdings"),
    ("Co-operative Bank", "Operative Bank"),
    ("AB InBev", "InBev"),
]


@pytest.mark.parametrize(("a", "b"), SAME_PARTY)
def test_same_party(a: str, b: str) -> None:
    assert party_key(a) == party_key(b)


@pytest.mark.parametrize(("a", "b"), DIFFERENT_PARTIES)
def test_different_parties(a: str, b: str) -> None:
    assert party_key(a) != party_key(b)


def test_table_is_large_enough() -> None:
    assert len(SAME_PARTY) + len(DIFFERENT_PARTIES) >= 20
    assert len(SAME_PARTY) >= 10 and len(DIFFERENT_PARTIES) >= 10


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Northwind Holdings, Inc.", "northwind holdings inc"),
        ("ÉCOLE  de  Música", "ecole de musica"),
        ("2026-014 Northwind / Castell acquisition", "2026 014 northwind castell acquisition"),
        ("O'Brien", "obrien"),
        ("Hale & Ward", "hale and ward"),
        ("!!!", ""),
        ("", ""),
    ],
)
def test_lookup_key(text: str, key: str) -> None:
    assert lookup_key(text) == key


def test_lookup_keeps_legal_forms_and_party_key_never_empties_a_name() -> None:
    # Lookup finds "Inc" in a label; the conflict check compares names without it.
    assert "inc" in lookup_key("Northwind Holdings, Inc.").split()
    assert party_key("Inc.") == "inc"
    assert party_key("The") == "the"
    assert party_key("") == ""


def test_party_key_is_a_token_prefix_of_the_lookup_key_after_the_article() -> None:
    for name, _ in SAME_PARTY + DIFFERENT_PARTIES:
        words = lookup_key(name).split()
        if words[:1] == ["the"] and len(words) > 1:
            words = words[1:]
        assert words[: len(party_key(name).split())] == party_key(name).split()


# --- Conflict matching (names.conflict_query / conflict_match) ---------------------------------

MATCHES = [
    # (asked, party's name, kind or None)
    ("Acme Corporation", "ACME Corp.", "exact"),
    ("Société Générale", "Societe Generale S.A.", "exact"),
    ("Northwind", "Northwind Holdings, Inc.", "words"),
    ("Meridian Foods", "Meridian Foods Corp.", "exact"),
    ("Castell", "Castell Components GmbH", "words"),
    ("Northwind Holdings", "Northwind Holdings Europe", "words"),
    ("Lee, Jordan", "Jordan Lee", "reordered"),
    ("J. Lee", "Jordan Lee", "reordered"),
    ("Lee J", "Jordan Lee", "reordered"),
    ("Jordan Lee", "J. Lee", "reordered"),
    ("Holdings Northwind", "Northwind Holdings Inc", "reordered"),
    ("Nortwind Holdings", "NORTHWIND HOLDINGS INC", "similar"),
    ("Nortwind", "Northwind Holdings", "similar"),
    ("Northwnid Holdings", "Northwind Holdings", "similar"),  # two letters swapped: one edit
    ("Jordan Lwr", "Jordan Lee", "similar"),  # two edits in a ten-letter name
    ("NorthwindHoldings", "Northwind Holdings", "similar"),  # a missing space
    ("Northw ind Holdings", "Northwind Holdings", "similar"),  # a space too many
    ("Northwind Holdings Incorporatd", "Northwind Holdings Inc", "similar"),  # a misspelt legal form
    ("Meridian Food", "Meridian Foods Corp.", "similar"),
    ("Broundzoux,g Inc.", "Broundzoux, Inc.", "similar"),  # a stray keystroke after the comma
    ("Broundzoux G", "Broundzoux, Inc.", None),  # but a letter on its own may be an initial: not left out
    # Not the same name: three edits or more, or a word missing from the name.
    ("Northgate Holdings", "Northwind Holdings", None),
    ("Northwind Logistics", "Northwind Holdings", None),
    ("Acme", "Apex", None),
    ("Jordan Leigh", "Jordan Lee", None),
    ("Kim", "Kit", None),  # three letters: no typo allowed
    ("Casey Lee", "Jordan Lee", None),
    ("K. Lee", "Jordan Lee", None),
    ("Northwind Holdings", "Northwind", None),
    ("!!!", "Northwind", None),
]


@pytest.mark.parametrize(("asked", "name", "kind"), MATCHES)
def test_conflict_match(asked: str, name: str, kind: str | None) -> None:
    found = names.conflict_match(names.conflict_query(asked), party_key(name), lookup_key(name))
    assert (found.kind if found else None) == kind
    if found:
        assert 0 < found.similarity <= 1 and (found.kind != "exact" or found.similarity == 1.0)


def test_thresholds() -> None:
    assert [names.word_edits_allowed(n) for n in (1, 2, 3, 8)] == [0, 1, 2, 2]
    assert [names.name_edits_allowed(n) for n in (3, 4, 6, 7, 30)] == [0, 1, 1, 2, 2]
    assert names.deletions("abc", 1) == {"abc", "bc", "ac", "ab"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "name", ["Northwind Holdings, Inc.", "Jordan Lee", "A B", "X", "Müller GmbH & Co. KG", "The Acme Co", "Мюллер", "東京 Trading", "", "Inc."]
)
def test_the_sql_functions_and_python_agree_on_a_partys_variants_and_their_numbers(name: str) -> None:
    key, lookup = party_key(name), lookup_key(name)
    with connection.cursor() as cursor:
        cursor.execute("SELECT graph_memory_party_variants(%s, %s, %s), graph_memory_party_hashes(%s, %s, %s)",
                       [42, key, lookup] * 2)  # fmt: skip
        variants, hashes = cursor.fetchone()
    assert set(variants) == names.party_variants(42, key, lookup)
    assert set(hashes) == names.party_hashes(42, key, lookup) and len(hashes) == len(set(hashes))
    assert all(-(2**31) <= h < 2**31 for h in hashes) and bool(hashes) == bool(key)


def test_every_accepted_typo_is_found_by_the_index_strings() -> None:
    """The symmetric-deletion rule: whenever conflict_match accepts a `similar` match, the party's
    index strings share one with every word list of some reading of the query."""
    for asked, name, kind in MATCHES:
        query, key = names.conflict_query(asked), party_key(name)
        if kind is None or not query.key:
            continue
        held = names.party_variants(7, key, lookup_key(name))
        assert any(all(set(lst) & held for lst in lists) for lists in query.index_groups(7)) or query.key == key, asked
