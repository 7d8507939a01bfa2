"""Deletion-only shortening (shorten.py): what a writer may drop, what it may not, and a property test."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graph_memory.summaries import meaning
from graph_memory.summaries.sentences import normalise_quote
from graph_memory.summaries.shorten import MIN_WORDS, Token, faithful, shorten, tokens

CITED = "The buyer relies on the tax warranty, which the seller gave at signing, to withhold the retention (SPA 5.2, p. 54)."
OWES = "Brightline Logistics LLC owes Castell Holdings GmbH EUR 2.5 million under the loan agreement."
DELIVERED = "The seller, Brightline Logistics LLC, delivered the disclosure letter on 7 March 2027 to the buyer\u2019s counsel."


@pytest.mark.parametrize(
    ("sentence", "proposal", "served"),
    [
        # a clause that carries no meaning word
        (CITED, "The buyer relies on the tax warranty to withhold the retention (SPA 5.2, p. 54).",
         "The buyer relies on the tax warranty to withhold the retention (SPA 5.2, p. 54)."),
        # a bracketed citation aside, facts and all, when it goes whole
        (CITED, "The buyer relies on the tax warranty, which the seller gave at signing, to withhold the retention.",
         "The buyer relies on the tax warranty, which the seller gave at signing, to withhold the retention."),
        (CITED, "The buyer relies on the tax warranty to withhold the retention.",
         "The buyer relies on the tax warranty to withhold the retention."),
        # a whole run of capitalised words
        (DELIVERED, "The seller delivered the disclosure letter on 7 March 2027.",
         "The seller delivered the disclosure letter on 7 March 2027."),
        # an ordinary adjective; no final stop in the proposal, and the sentence's own stop is served
        (OWES, "Brightline Logistics LLC owes Castell Holdings GmbH EUR 2.5 million under the agreement",
         "Brightline Logistics LLC owes Castell Holdings GmbH EUR 2.5 million under the agreement."),
    ],
)  # fmt: skip
def test_accepted_deletions(sentence: str, proposal: str, served: str) -> None:
    result = shorten(sentence, proposal)
    assert result == type(result)(served, shortened=True, refused="")
    assert faithful(result.text, sentence)


@pytest.mark.parametrize(
    ("sentence", "proposal", "why"),
    [
        (CITED, "The buyer relies on the great tax warranty to withhold the retention.", "not the sentence"),
        (CITED, "The buyer relies on the tax warranty to withhold the deposit.", "not the sentence"),
        (CITED, "The buyer relies on the tax warranty to retention the withhold.", "not the sentence"),
        ("A owes B EUR 256,580 for the freight.", "B owes A EUR 256,580 for the freight.", "not the sentence"),
        (OWES, "Castell Holdings GmbH owes Brightline Logistics LLC EUR 2.5 million under the loan agreement.",
         "not the sentence"),
        (OWES, "Brightline Logistics owes Castell Holdings GmbH EUR 2.5 million under the loan agreement.",
         "part of a name"),
        (OWES, "Brightline Logistics LLC owes Castell EUR 2.5 million under the loan agreement.", "part of a name"),
        (OWES, "Brightline Logistics LLC owes Castell Holdings GmbH EUR 2.5 under the loan agreement.", "a fact"),
        (OWES, "Brightline Logistics LLC owes Castell Holdings GmbH 2.5 million under the loan agreement.", "a fact"),
        (DELIVERED, "The seller delivered the disclosure letter on 7 March to the buyer's counsel.", "a fact"),
        (DELIVERED, "The seller delivered the disclosure letter in March 2027.", "not the sentence"),
        (DELIVERED, "The seller delivered the disclosure letter on March 2027.", "a fact"),
        (CITED, "The buyer relies on the tax warranty to withhold the retention (SPA 5.2).", "a fact"),
        (OWES, "Brightline Logistics LLC owes Castell Holdings GmbH EUR 2.5 million the loan agreement.", "meaning"),
        ("The buyer (a Delaware company) signed the release.", "The buyer (a Delaware signed the release.", "bracket"),
        ("The agent said \u201cthe funds are ready\u201d and the buyer agreed to the release.",
         "The agent said the funds are ready.", "quotation mark"),
        (CITED, "buyer relies", "too short"),
        ("The purchase price is approx. EUR 5 million.", "The purchase price is EUR 5 million.", "meaning"),
        ("The purchase price is ca. EUR 5 million.", "The purchase price is EUR 5 million.", "meaning"),
    ],
)  # fmt: skip
def test_refused_proposals_serve_the_whole_sentence(sentence: str, proposal: str, why: str) -> None:
    result = shorten(sentence, proposal)
    assert (result.text, result.shortened) == (sentence, False)
    assert why in result.refused
    assert not faithful(proposal, sentence)
    assert faithful(result.text, sentence)


@pytest.mark.parametrize("proposal", ["", "   ", OWES, OWES.upper(), " ".join(OWES.split()) + "  "])
def test_no_proposal_or_the_sentence_itself_serves_the_sentence_unrefused(proposal: str) -> None:
    assert shorten(OWES, proposal) == type(shorten(OWES, ""))(OWES, shortened=False, refused="")


def test_served_text_is_built_from_the_sentences_own_characters() -> None:
    sentence = "The seller\u2019s counsel said \u201cthe Escrow Agent\u2019s fee is paid\u201d to the buyer\u2019s bank on 7 March 2027."
    proposal = 'the SELLER\'S counsel said "the escrow agent\'s fee is paid" on 7 march 2027'
    result = shorten(sentence, proposal)
    assert result.shortened
    assert result.text == "The seller\u2019s counsel said \u201cthe Escrow Agent\u2019s fee is paid\u201d on 7 March 2027."


def test_a_shortening_starting_mid_sentence_is_capitalised_from_the_sentence() -> None:
    result = shorten("Brightline says the buyer has not paid the retention.", "the buyer has not paid the retention")
    assert result.refused == "" or "name" not in result.refused
    if result.shortened:
        assert result.text == "The buyer has not paid the retention."


# --- the property: whatever is proposed, what is served is the sentence or a faithful deletion of it -----

MEANING_SAMPLE = sorted(meaning.MEANING_WORDS)
PHRASES = [" ".join(phrase) for phrase in meaning.PHRASES]
NAMES = ["Brightline Logistics LLC", "Castell Holdings GmbH", "J. Lee", "Ms. Okafor", "the U.S. Treasury", "Castell"]
FACTS = ["EUR 2.5 million", "7 March 2027", "10 %", "USD 256,580", "5.2", "INV-0057", "2026-03-01", "$31,840.50",
         "ten per cent", "in May", "on Friday", "three thousand euros"]  # fmt: skip
ORDINARY = ["the", "buyer", "seller", "signed", "agreement", "retention", "escrow", "agent", "release", "notice",
            "of", "to", "a", "and", "with", "counsel", "letter", "disclosure", "was", "has", "is", "for", "buyer\u2019s",
            "share", "purchase", "paid", "loan", "court", "motion", "granted", "owes", "in", "on", "at", "that"]  # fmt: skip
ASIDES = ["(SPA 5.2, p. 54)", "(the purchaser)", "[sic]", "(see cl. 9)", "(not signed)", "\u201cthe funds are ready\u201d",
          "(if any)", "(EUR 3 million)", "\u201cClosing\u201d", "(Castell Holdings GmbH)", '"as is"']  # fmt: skip
PUNCTUATION = [",", ";", ":", " \u2013", " -"]

piece = st.one_of(
    st.sampled_from(MEANING_SAMPLE),
    st.sampled_from(PHRASES),
    st.sampled_from(NAMES),
    st.sampled_from(FACTS),
    st.sampled_from(ORDINARY),
    st.sampled_from(ORDINARY),
    st.sampled_from(ASIDES),
    st.sampled_from(PUNCTUATION),
)


@st.composite
def sentences(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(piece, min_size=3, max_size=16))
    text = ""
    for part in pieces:
        text += part if part in PUNCTUATION else (" " if text else "") + part
    text = text.lstrip(",;: \u2013-") or "The buyer signed"
    text = text[:1].upper() + text[1:]
    return text + draw(st.sampled_from([".", ".", "?", "", "!"]))


def _keys(words: list[Token]) -> list[str]:
    return [w.key for w in words]


def _is_subsequence(short: list[str], long: list[str]) -> bool:
    rest = iter(long)
    return all(any(key == other for other in rest) for key in short)


def _meaning_counts(words: list[Token]) -> Counter[str]:
    return Counter(w.key.replace("\u2019", "'") for w in words if meaning.is_meaning_word(w.text))


def _protected_counts(words: list[Token]) -> Counter[str]:
    hard = meaning.protected_positions([w.text for w in words])
    return Counter(words[i].key for i in hard)


def _assert_served_faithfully(sentence: str, proposal: str) -> None:
    result = shorten(sentence, proposal)
    if not result.shortened:
        assert result.text == sentence
        return
    assert not result.refused
    whole, served = tokens(sentence), tokens(result.text)
    assert len(served) >= MIN_WORDS
    assert _is_subsequence(_keys(served), _keys(whole))
    # every meaning word, and every word of a protected phrase, as often as in the sentence
    assert not _meaning_counts(whole) - _meaning_counts(served), (sentence, proposal, result)
    protected = _protected_counts(whole)
    assert all(Counter(_keys(served))[key] >= n for key, n in protected.items()), (sentence, proposal, result)
    # facts go only inside a whole bracketed aside: a sentence without one keeps every figure
    if not any(c in sentence for c in "(["):
        figures = Counter(w.key for w in whole if any(c.isdigit() for c in w.text))
        assert not figures - Counter(w.key for w in served if any(c.isdigit() for c in w.text))
    # nothing but the sentence's characters: each served word as the sentence writes it (a first
    # letter aside, capitalised when the shortening starts mid-sentence)
    written = [w.text for w in whole]
    for n, word in enumerate(served):
        assert word.text in written or (n == 0 and word.text[:1].lower() + word.text[1:] in written)
    assert set(normalise_quote(result.text)) <= set(normalise_quote(sentence)) | set(
        result.text[:1].upper()
    ), (sentence, result.text)
    assert faithful(result.text, sentence)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), sentence=sentences())
def test_any_deletion_set_serves_the_sentence_or_a_faithful_shortening(data: st.DataObject, sentence: str) -> None:
    words = tokens(sentence)
    keep = data.draw(st.lists(st.booleans(), min_size=len(words), max_size=len(words)))
    kept = [w.text for w, k in zip(words, keep, strict=True) if k]
    proposal = " ".join(kept)
    if data.draw(st.booleans()):
        proposal = proposal.lower().replace("\u2019", "'")
    _assert_served_faithfully(sentence, proposal)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), sentence=sentences())
def test_any_proposal_at_all_serves_the_sentence_or_a_faithful_shortening(data: st.DataObject, sentence: str) -> None:
    """Words added, replaced, moved: the proposal is never served as written."""
    own = [w.text for w in tokens(sentence)]
    pool = own + ORDINARY + MEANING_SAMPLE[:40] + ["EUR", "5", "million", "(", ")", "\u201c"]
    proposal = " ".join(data.draw(st.lists(st.sampled_from(pool), max_size=len(own) + 3)))
    _assert_served_faithfully(sentence, proposal)
