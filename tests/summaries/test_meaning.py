"""The closed class of meaning words (meaning.py): one test per word and per phrase.

Each test plants the word in a sentence, proposes the sentence without it, and
checks that shorten() refuses the proposal *because of that word* and serves
the whole sentence: a shortening may drop words, never one that bends the
truth of the rest. The word is planted inside a clause and also inside each
unit shorten() would otherwise let go whole (a citing aside, a name between
commas), as the control with an ordinary word shows.
"""

from __future__ import annotations

import pytest

from graph_memory.summaries import meaning
from graph_memory.summaries.shorten import faithful, shorten

# A plausible place for a word of each class (mid-sentence, lower case).
TEMPLATES = {
    "negation": "The seller has {word} consented to the assignment of the loan.",
    "modality": "The buyer {word} withhold the retention amount from the purchase price.",
    "condition": "The escrow agent releases the funds {word} both parties sign the notice.",
    "time": "The consent was obtained {word} the closing of the share purchase.",
    "quantity": "The seller produced {word} of the documents in the data room.",
    "hedge": "The buyer relies on the {word} warranty breach against the seller.",
    "identity": "The guarantee was signed by a {word} director of the seller.",
}
# The word as a unit the sentence's punctuation sets apart; "{Word}" is the word capitalised.
SHORT = "The buyer signed the retention agreement with the seller."
UNITS = {
    "citing aside": ("The buyer signed the retention agreement with the seller (SPA 5.2, p. 54, {word}).", SHORT),
    "name between commas": ("The buyer, {Word} Holdings, signed the retention agreement with the seller.", SHORT),
}
# What stands in each unit for the control: a word the unit may hold and still go.
CONTROL = {"citing aside": "Annex", "name between commas": "Northwind"}
PHRASE_TEMPLATE = "The buyer pays {phrase} the retention amount into the escrow account."
MEANING_REFUSAL = "removes a word that carries meaning"

WORDS = sorted((name, word) for name, members in meaning.CLASSES.items() for word in members)


def _without(sentence: str, planted: str) -> str:
    """`sentence` with the first occurrence of `planted` (a whole word or phrase) deleted."""
    if sentence.startswith(planted + " "):
        return sentence[len(planted) + 1 :]
    assert f" {planted} " in sentence
    return sentence.replace(f" {planted} ", " ", 1)


def _assert_refused(sentence: str, proposal: str, *, why: str = MEANING_REFUSAL) -> None:
    result = shorten(sentence, proposal)
    assert result.shortened is False, (sentence, proposal, result)
    assert result.text == sentence
    assert result.refused.startswith(why), result.refused
    assert not faithful(proposal, sentence)


def _capitalised(word: str) -> str:
    return word[:1].upper() + word[1:]


def test_every_class_is_tested() -> None:
    assert set(TEMPLATES) == set(meaning.CLASSES)
    assert all(members for members in meaning.CLASSES.values())


@pytest.mark.parametrize(("name", "word"), WORDS, ids=[f"{name}-{word}" for name, word in WORDS])
def test_deleting_a_meaning_word_is_refused(name: str, word: str) -> None:
    sentence = TEMPLATES[name].format(word=word)
    _assert_refused(sentence, _without(sentence, word))


@pytest.mark.parametrize("unit", sorted(UNITS))
@pytest.mark.parametrize(("name", "word"), WORDS, ids=[f"{name}-{word}" for name, word in WORDS])
def test_a_meaning_word_keeps_its_own_unit(name: str, word: str, unit: str) -> None:
    template, proposal = UNITS[unit]
    _assert_refused(template.format(word=word, Word=_capitalised(word)), proposal)


@pytest.mark.parametrize("unit", sorted(UNITS))
def test_the_same_unit_without_a_meaning_word_may_go(unit: str) -> None:
    """The control: what makes the units above stay is the meaning word alone."""
    template, proposal = UNITS[unit]
    result = shorten(template.format(word=CONTROL[unit], Word=_capitalised(CONTROL[unit])), proposal)
    assert (result.text, result.shortened, result.refused) == (SHORT, True, "")


@pytest.mark.parametrize(("name", "word"), WORDS, ids=[f"{name}-{word}" for name, word in WORDS])
def test_class_of_names_the_class(name: str, word: str) -> None:
    classes = {other for other, members in meaning.CLASSES.items() if word in members}
    assert meaning.class_of(word) in classes
    assert meaning.class_of(word.upper()) == meaning.class_of(word)
    assert meaning.class_of(word.replace("'", "\u2019")) == meaning.class_of(word)
    assert meaning.is_meaning_word(word)


@pytest.mark.parametrize("word", ["buyer", "agreement", "signed", "the", "escrow", "Castell"])
def test_ordinary_words_have_no_class(word: str) -> None:
    assert meaning.class_of(word) is None
    assert not meaning.is_meaning_word(word)


PHRASES = [" ".join(phrase) for phrase in meaning.PHRASES]


@pytest.mark.parametrize("phrase", PHRASES)
def test_deleting_a_meaning_phrase_is_refused(phrase: str) -> None:
    sentence = PHRASE_TEMPLATE.format(phrase=phrase)
    _assert_refused(sentence, _without(sentence, phrase))
    template, proposal = UNITS["citing aside"]
    _assert_refused(template.format(word=phrase), proposal)


PHRASE_WORDS = [(" ".join(phrase), i) for phrase in meaning.PHRASES for i in range(len(phrase))]


@pytest.mark.parametrize(("phrase", "position"), PHRASE_WORDS, ids=[f"{p}-{i}" for p, i in PHRASE_WORDS])
def test_each_word_of_a_meaning_phrase_is_protected(phrase: str, position: int) -> None:
    """A phrase protects even its words outside the class ("to" of "subject to", "in" of "in part")."""
    sentence = PHRASE_TEMPLATE.format(phrase=phrase)
    kept = phrase.split()
    del kept[position]
    # Refused whatever the reason given: when the word occurs twice ("if and only if", the "the" of
    # "in the event"), shorten's _why_not names no meaning word and reports "part of a clause".
    _assert_refused(sentence, sentence.replace(f" {phrase} ", f" {' '.join(kept)} ", 1), why="removes")


def test_no_article_may_go_from_a_sentence_that_holds_a_meaning_word() -> None:
    """Not the "the" of "in the event", nor any other: under a condition, a denial or a permission, a thing
    without its article is any such thing ("in the event of default" is any default; "did not sell shares"
    is no share at all). In a sentence with no meaning word they may go."""
    sentence = "The agent releases the funds in the event of a default by the buyer."
    _assert_refused(sentence, "The agent releases the funds in event of a default by the buyer.", why="removes")
    _assert_refused(sentence, "The agent releases the funds in the event of default by the buyer.", why="removes")
    _assert_refused("Castell did not sell the shares.", "Castell did not sell shares.", why="removes")
    assert shorten("Castell sold the shares to Hale.", "Castell sold shares to Hale.").shortened


@pytest.mark.parametrize(
    ("words", "protected"),
    [
        (["the", "buyer", "is", "subject", "to", "the", "audit"], {3, 4}),
        (["the", "payment", "to", "the", "seller"], set()),  # "to" only inside a phrase
        (["granted", "in", "part"], {1, 2}),
        (["filed", "in", "court"], set()),
        (["paid", "no", "later", "than", "Friday"], {1, 2, 3}),
        (["It", "hasn\u2019t", "been", "signed"], {1}),
    ],
)
def test_protected_positions(words: list[str], protected: set[int]) -> None:
    assert meaning.protected_positions(words) == protected
