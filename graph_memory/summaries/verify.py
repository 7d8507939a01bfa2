"""A writer's selection made into statements: the records' own sentences, by construction.

The writer answers with points (rulebook.OUTPUT_SCHEMA): sentence ids of the
numbered slice (sentences.py), a label, and a shorter form of one sentence.
Nothing it writes is served as it wrote it:

- an id names a sentence of one record; what is served is that sentence's own
  text, citing that record. An id the slice does not have is dropped
  (`unknown_id`), and so is an id used before (`repeated_id`); ids are read
  forgivingly ("[s7]", "S7", "7" are s7). A point left with no sentence is
  dropped (`no_known_sentence`). Forgiving on partial failure, strict on total
  failure: an answer with no known sentence at all saves nothing.
- a short form is served only as shorten.py makes it from the sentence (words
  removed, none that carries meaning, built from the sentence's characters);
  otherwise the whole sentence is served (`shortening_refused`), never nothing.
- a label that is long, holds a date, number, amount, name, state word,
  meaning word, past participle, verb ("is", "has"), word that says how a
  thing is ("Refundable", "Vexatious") or a mark that is no letter, or a
  word its point's sentences do not have ("Escrow" over a sentence about rent;
  "Consent obtained" over "consent is not obtained"; a word only inside a
  quotation; "Guilty" over "did not find the director guilty"), or several
  words that do not stand in a row in its sentence or that pair a subject
  with what its sentence only qualifies ("Director knew" over "There is no
  evidence that the director knew"; "Lease continues" over "The claim that
  the lease continues was dismissed"), is dropped (`label_dropped`); the
  point stays.
- a point the writer put under key dates with no date in its sentences, or
  under money with no amount, is served under recent activity instead
  (`section_moved`): a heading is not a claim the records do not make.

So every served statement is a record's sentence or a deletion-only
shortening of it that keeps every meaning word (`shorten.faithful`), whatever
the writer answered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from graph_memory.summaries import meaning
from graph_memory.summaries.facts import (
    LEGAL_SUFFIXES,
    STOPWORDS,
    extract_facts,
    is_fact_word,
    name_key,
    proper_terms,
    stem,
    words,
)
from graph_memory.summaries.meaning import STATE_WORDS
from graph_memory.summaries.rulebook import MAX_LABEL_CHARS, MAX_SHORT_CHARS, SECTIONS
from graph_memory.summaries.sentences import NumberedSlice, Sentence
from graph_memory.summaries.shorten import (
    ARTICLES,
    AUXILIARIES,
    DETERMINERS,
    FUNCTION_WORDS,
    PARTICIPLES,
    POSSESSIVE,
    Token,
    shorten,
    tokens,
)

MAX_LABEL_WORDS = 3
REASONS = ("unknown_id", "repeated_id", "no_known_sentence", "shortening_refused", "label_dropped", "section_moved")
# A heading that is a claim: what a point under it must hold, else it is served under recent activity.
_NEEDS = {"key_dates": lambda f: bool(f.dates or f.months), "money": lambda f: bool(f.money)}
_ID = re.compile(r"^\[?\s*s?\s*(\d{1,6})\s*\]?$", re.I)


def sentence_id(raw: Any) -> str | None:
    """A selected id read forgivingly: "s7", "[s7]", "S7", " 7 " are "s7"; anything else is None."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        return None
    match = _ID.match(str(raw).strip())
    return f"s{int(match.group(1))}" if match else None


VerificationReport = dict[str, Any]


@dataclass(frozen=True)
class Verification:
    content: dict[str, list[dict[str, Any]]]
    report: VerificationReport

    @property
    def kept(self) -> int:
        return int(self.report["kept"])

    @property
    def ok(self) -> bool:
        return self.kept > 0

    @property
    def source_ids(self) -> list[str]:
        seen: dict[str, None] = {}
        for statements in self.content.values():
            for statement in statements:
                seen.update(dict.fromkeys(statement["sources"]))
        return list(seen)


class _Names:
    """Words that name someone or something in this case: a label may not hold one."""

    def __init__(self, numbered: NumberedSlice) -> None:
        context = numbered.context
        bodies = [item.body for item in context.items]
        lower = {w for body in bodies for w in re.findall(r"\b[a-z][\w'\u2019-]*", body)}
        party = {w for name in context.party_names for w in name_key(name).split()}
        proper = {w for body in bodies for term in proper_terms(body) for w in name_key(term).split()}
        self.words = (party | (proper - lower)) - STOPWORDS - LEGAL_SUFFIXES


# Words that are a number, a share, a frequency or a time of their own ("Third notice", "Double rent", "Quarterly
# rent", "Midnight"): a label may not hold one, as it may hold no digit.
NUMBER_LIKE = frozenset(
    {
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
        "eleventh", "twelfth", "twentieth", "hundredth", "thousandth", "millionth", "last", "final",
        "single", "double", "triple", "treble", "quadruple", "dual", "twofold", "threefold", "twice", "thrice",
        "half", "halves", "quarter", "quarters", "thirds", "fifths", "tenths",
        "daily", "weekly", "fortnightly", "monthly", "quarterly", "annual", "annually", "yearly", "biannual",
        "biennial", "hourly", "midnight", "midday", "noon", "morning", "afternoon", "evening", "overnight",
        "winter", "summer", "autumn", "spring", "today", "yesterday", "tomorrow",
    }
)  # fmt: skip


# Headings that group without naming anything in particular: a label may be one of these.
GENERIC_HEADINGS = frozenset(
    {
        "background", "overview", "context", "notes", "note", "documents", "correspondence", "timeline",
        "procedure", "history", "issues", "details", "summary", "matter", "general", "reports",
        "timetable", "evidence", "jurisdiction", "chronology", "parties", "costs",
    }
)  # fmt: skip


def _same_root(label_word: str, word: str) -> bool:
    """The same word in another form: "fee" and "fees", "termination" and "terminate", "deliveries" and
    "delivered" (a common stem, or the first letters of a long word)."""
    if label_word == word or stem(label_word) == stem(word):
        return True
    root = label_word[: max(5, len(label_word) - 3)]
    return len(label_word) > 5 and word.startswith(root)


# A quotation: someone's words, not the record's ("refers to a \u201cbinding deal\u201d").
_QUOTED = re.compile(r"\u201c[^\u201d]*\u201d|\"[^\"]*\"")
# What a noun follows: a word that opens a noun phrase, or a preposition.
_PREPOSITIONS = FUNCTION_WORDS - AUXILIARIES - {"that", "which", "who", "whom", "whose", "and", "or", "but", "as"}
_NOUN_OPENERS = DETERMINERS | _PREPOSITIONS


def _read(text: str) -> list[tuple[str, bool, Token]]:
    """The words of `text` as a label's words are read (case-folded, a hyphenated word as its parts:
    "strike-out" is "strike", "out"), each with whether it stands in a quotation and its token."""
    quoted = [m.span() for m in _QUOTED.finditer(text)]
    return [(part, any(a <= t.start < b for a, b in quoted), t) for t in tokens(text) for part in t.key.split("-")]


def _parts(text: str) -> list[tuple[str, bool]]:
    """The words of `text` as _read reads them, each with whether it stands in a quotation."""
    return [(part, quoted) for part, quoted, _ in _read(text)]


def _named_by(word: str, sentences: list[Sentence]) -> bool:
    """Whether a label word is a generic heading or a word of the point's sentences in some form, somewhere
    not right after a word that denies it ("Termination" over "no termination fee" would read as the
    opposite; "Price" over "disputes the price review" is that point's topic) and not inside a quotation
    ("Loan" over 'called the payment a "loan"': someone's word for it). After a word that denies, however far
    after, it must name a thing the sentence speaks of, a word after "the", "a", a possessive or a
    preposition, not what the sentence denies of it ("Assignment" over "has not consented to the
    assignment", "Termination" over "did not receive the notice of termination"; not "Guilty" over "The jury
    did not find the director guilty", nor "Binding" over "was not, on the evidence, binding")."""
    if word in GENERIC_HEADINGS:
        return True
    for sentence in sentences:
        found = [part for part, quoted in _parts(sentence.text) if not quoted]
        for position, other in enumerate(found):
            if not _same_root(word, POSSESSIVE.sub("", other)):
                continue
            before = [k for k in found[:position] if k not in ARTICLES][-1:]
            if before and meaning.denies(before[0]):
                continue
            opener = found[position - 1] if position else ""
            denied = any(meaning.denies(k) for k in found[:position])
            if denied and opener not in _NOUN_OPENERS and not POSSESSIVE.search(opener):
                continue
            return True
    return False


# Endings of words that say how a thing is, not what it is ("refundable", "vexatious", "unlawful",
# "worthless"): such a label states a property the sentence may deny, dispute or reject.
_PREDICATE_ENDINGS = ("able", "ible", "ous", "ful", "less")
# Words that open a clause inside the sentence: what stands after them is reported, asserted or denied by the
# rest ("The claim that the lease continues was dismissed").
_EMBEDDING = frozenset({"that", "whether"})


# What a label may hold besides letters: spaces, hyphens, apostrophes, "&" and "/" ("Fees & costs"). A tick, a
# cross, an arrow or an exclamation mark says how things stand.
_SYMBOL = re.compile(r"[^\w\s'\u2019&/-]|_")


# What joins two topics in one label.
_TOPICS_JOINED = re.compile(r"\s*(?:&|/|\band\b)\s*", re.IGNORECASE)


def _qualified(sentence: Sentence) -> bool:
    """Whether a sentence holds a word that carries meaning (meaning.py) or a clause inside it ("that",
    "whether"): what it says of a thing may then be supposed, questioned or denied."""
    words = [t.text for t in tokens(sentence.text)]
    return bool(meaning.protected_positions(words)) or any(w.casefold() in _EMBEDDING for w in words)


def _several_words_problem(label_words: list[str], sentences: list[Sentence]) -> str | None:
    """Why a label of several words may not stand over `sentences` (None when it may). Its words must stand in
    a row in one of them, outside quotation marks: words taken from here and there pair what the sentence
    does not ("Landlord's deposit" over "The landlord's agent received the tenant's deposit"; "Insolvent
    landlord" over "The landlord was solvent and the tenant was insolvent"), and a quotation is someone's
    words ("Binding deal" over 'refers to a "binding deal"'). When that sentence holds a word that carries
    meaning (meaning.py: a negation, a condition, a hedge, a quantity) or a clause inside it ("that",
    "whether"), the row may still pair a subject with what the sentence says of it without the qualifier
    ("Director knew" over "There is no evidence that the director knew"; "Lease continues" over "The claim
    that the lease continues was dismissed"), so it must be a noun phrase the sentence itself closes, outside
    such a clause: after a word that opens a noun phrase and before an auxiliary verb ("Escrow agent" over
    "The escrow agent may release ..."), where no verb can end it. One word names a topic and needs none of
    this."""
    width = len(label_words)
    rows = []
    for sentence in sentences:
        parts = _parts(sentence.text)
        keys = [part for part, _ in parts]
        qualified = _qualified(sentence)
        for start in range(len(keys) - width + 1):
            inside = any(quoted for _, quoted in parts[start : start + width])
            if keys[start : start + width] == label_words and not inside:
                rows.append((keys, start, qualified))
    if not rows:
        return "several words that do not stand in a row in its sentences, outside quotation marks"
    for keys, start, qualified in rows:
        opener = keys[start - 1] if start else ""
        after = keys[start + width] if start + width < len(keys) else ""
        embedded = any(k in _EMBEDDING for k in keys[:start])
        if not qualified or (
            (opener in DETERMINERS or POSSESSIVE.search(opener)) and after in AUXILIARIES and not embedded
        ):
            return None
    return "several words that are no noun phrase of a sentence that qualifies what it says"


def label_problem(label: str, names: _Names, sentences: list[Sentence] | None = None) -> str | None:
    """Why `label` may not be served (None when it may). A label groups points and never states: it holds
    no date, number, amount, mark that is no letter, name, state word, meaning word or past participle, several
    words only as a noun phrase of a sentence that qualifies what it says, and each of its words is a
    generic heading or a word of the point's own sentences in some form, not only right after a negation
    ("Escrow" over "The escrow agent may release ..."; not "Escrow" over a sentence about rent, nor
    "Consent obtained" over "... consent is not obtained ...")."""
    if len(label) > MAX_LABEL_CHARS or len(label.split()) > MAX_LABEL_WORDS:
        return "too long"
    if any(c.isdigit() for c in label) or any(c in label for c in "$€£¥%"):
        return "holds a number"
    if _SYMBOL.search(label):
        return "holds a mark that is no letter ('Rent ✓', 'Deposit ✗', 'Rent!')"
    label_words = [w for w in words(label) if w not in ARTICLES]
    if not label_words:
        return "no words"
    for word in label_words:
        if word in GENERIC_HEADINGS:
            continue  # "Notes" groups; it is not the verb of "X notes that"
        if (is_fact_word(word) and word != "and") or word in NUMBER_LIKE:
            return f"holds a date or amount word: {word}"
        if meaning.is_meaning_word(word):
            return f"holds a meaning word: {word}"
        if word in STATE_WORDS:
            return f"holds a state word: {word}"
        if word in PARTICIPLES or (len(word) > 4 and word.endswith("ed")):
            return f"holds a past participle: {word}"
        if word in AUXILIARIES:
            return f"holds a verb: {word} (a label that is a clause states: 'Deposit is refundable')"
        if len(word) > 5 and word.endswith(_PREDICATE_ENDINGS):
            return f"holds a word that says how a thing is: {word} ('Assignable' over 'denies that it is assignable')"
        if word in names.words:
            return f"holds a name: {word}"
    if sentences is None:
        return None
    for topic in _TOPICS_JOINED.split(label):  # "Fees & costs": two topics
        topic_words = [part for t in tokens(topic) if t.key not in ARTICLES for part in t.key.split("-")]
        if len(topic_words) > 1 and any(w not in GENERIC_HEADINGS for w in topic_words):
            problem = _several_words_problem(topic_words, sentences)
            if problem:
                return problem
    strangers = [w for w in label_words if not _named_by(w, sentences)]
    if strangers:
        return f"not a word of its sentences (or only right after a negation): {', '.join(strangers)}"
    if len(label_words) == 1 and not _names_a_thing(label_words[0], sentences):
        return (
            f"one word its sentences do not use as a thing's name: {label_words[0]}"
            " ('Insolvent' over 'may become insolvent')"
        )
    return None


# Endings that make a word a noun ("termination", "payment", "insolvency", "forgery", "ownership").
_NOUN_ENDINGS = (
    "tion", "sion", "ment", "ance", "ence", "ancy", "ency", "ity", "ness", "ship", "ery", "ure", "age", "ism",
)  # fmt: skip


def _names_a_thing(word: str, sentences: list[Sentence]) -> bool:
    """Whether a label of one word names a topic rather than saying how a thing is: a generic heading, a noun by
    its ending ("Termination" over "may terminate the lease"; "Forgery" over "alleges that he forged it"), or a
    word its sentences use as a thing's name, opening the sentence or after "the", a possessive or a
    preposition ("Escrow" over "The escrow agent may release ..."; "Consent" over "asked for consent"). Any
    other may be an adjective the sentence only supposes, questions or denies ("Insolvent" over "Castell may
    become insolvent", "Dishonest" over "rejected the suggestion that Hale was dishonest", "Unsafe" over "The
    claim that the building is unsafe was not made out"), and no list of words holds every adjective. Nor,
    over any sentence, a word it only uses for what someone or something is said to be ("Fraudster" over
    "Northwind's letter calls Hale a fraudster", "Culprit" over "The tabloids named Hale as the culprit")."""
    if word in GENERIC_HEADINGS or (len(word) > 5 and word.endswith(_NOUN_ENDINGS)):
        return True
    plural = word.endswith("s") and not word.endswith(("ss", "us", "is"))
    for sentence in sentences:
        found, names = _phrased(sentence.text)
        at = [i for i, other in enumerate(found) if other and _same_root(word, POSSESSIVE.sub("", other))]
        if any(_in_noun_phrase(found, names, i) for i in at):
            return True
        # A word in -s is a plural (no adjective ends so) or a verb: the verb where the sentence has it after
        # its subject ("Complies" over "It is unclear whether the plant complies"); not after a preposition
        # and plain words, which open a noun phrase ("Fees" over "seeks USD 2,310,000 in unpaid fees").
        if plural and not any(found[i] == word and i and _plain(found[i - 1]) and not _governed(found, i) for i in at):
            return True
        infinitive = bool(at) and all(i and found[i - 1] == "to" for i in at)  # "is unwilling to sign": a verb
        if not _qualified(sentence) and not infinitive and not any(_said_to_be(found, names, i) for i in at):
            return True  # over a sentence that qualifies nothing the word says what the sentence says
    return False


def _said_to_be(found: list[str], names: set[int], position: int) -> bool:
    """Whether the word at `position` ends a phrase that says what a thing is said or found to be: one "a" or
    "an" opens after a verb that may link it ("is a bankrupt") or after a thing named just before ("calls
    Hale a fraudster", "called the witness a liar"; not "holds a guarantee"), or one after "as" ("named
    Hale as the culprit")."""
    start = _phrase_start(found, position)
    opener = found[start - 1] if start else ""
    if opener == "as" or (start > 1 and found[start - 2] == "as"):
        return True
    if opener not in ("a", "an") or start < 2:
        return False
    before = start - 2  # the word before "a"
    if found[before] in AUXILIARIES or before in names:
        return True
    while before and _plain(found[before]):
        before -= 1
    return found[before] in DETERMINERS or bool(POSSESSIVE.search(found[before]))


def _phrased(text: str) -> tuple[list[str], set[int]]:
    """The words of `text` as _parts reads them, outside quotations, with "" where a mark sets a part apart
    (a comma, bracket, colon or dash): no phrase runs across one; and the positions of those capitalised
    inside the sentence (names)."""
    found: list[str] = []
    names: set[int] = set()
    last: Token | None = None
    for part, quoted, t in _read(text):
        if t is not last:
            if last and found and re.search(r"[^\s'\u2019-]", text[last.end : t.start]):
                found.append("")
            if found and not quoted and t.text[:1].isupper():
                names.add(len(found))
            last = t
        if not quoted:
            found.append(part)
    return found, names


def _in_noun_phrase(found: list[str], names: set[int], position: int) -> bool:
    """Whether the word at `position` stands in a noun phrase: right after a word that opens one ("the
    fees", "for consent", "the landlord's consent") or opening the sentence, or after such a word and plain
    words when a plain word or an auxiliary follows it (it names or qualifies a thing: "the first delivery
    milestone", "Annual fees are capped"). Not after an auxiliary or another verb ("may become insolvent",
    "is unsafe"), not at the end of a phrase that follows a noun ("find the director guilty"), and not in
    what a thing is said to be, after "a" or "as" ("calls Hale a fraudster", "named Hale as the
    culprit")."""
    start = _phrase_start(found, position)
    opener = found[start - 1] if start else ""
    following = found[position + 1] if position + 1 < len(found) else ""
    inside = _plain(following) or following in AUXILIARIES
    if opener == "to" and start == position:
        return False  # "to" before a verb: "does not wish to settle", "refused to resign"
    if start and opener in _CLAUSE_OPENERS:
        return inside  # the subject of a clause: "if consent is not obtained", not "if insolvent,"
    if start and opener and opener not in _NOUN_OPENERS and not POSSESSIVE.search(opener):
        return False
    if _said_to_be(found, names, position):
        return False
    # A run of several plain words that opens the sentence and ends at a mark heads it ("Purchase price: EUR
    # 48,000,000, subject to ...").
    return start == position or inside or (start == 0 and position > 0 and following == "")


def _governed(found: list[str], position: int) -> bool:
    """Whether the run of plain words that ends at `position` follows a preposition ("in unpaid fees")."""
    start = _phrase_start(found, position)
    return bool(start) and found[start - 1] in _PREPOSITIONS


def _phrase_start(found: list[str], position: int) -> int:
    """Where the run of plain words that ends at `position` starts ("first delivery" in "the first delivery")."""
    start = position
    while start and _plain(found[start - 1]):
        start -= 1
    return start


# Words that open a clause, its subject after them.
_CLAUSE_OPENERS = frozenset({"if", "unless", "that", "whether", "when", "once", "until", "because", "while"})


def _plain(word: str) -> bool:
    """A word that may stand inside a noun phrase ("first", "2024", "delivery"): no function word, meaning
    word or adverb in -ly, and no mark between."""
    return (
        bool(word)
        and not POSSESSIVE.search(word)
        and word not in FUNCTION_WORDS
        and word not in DETERMINERS
        and word not in _CLAUSE_OPENERS
        and not meaning.is_meaning_word(word)
        and not word.endswith("ly")
    )


def verify_selection(content: dict[str, Any], numbered: NumberedSlice) -> Verification:
    """The statements `content` (schema-valid) selects, and a report of what was dropped or refused and why.

    Each statement is {"text": the sentence or its checked shortening, "sources": [its record],
    "quote": the whole sentence, "kind": "sentence", "label", "point", "shortened"}.
    """
    by_id = numbered.by_id
    names = _Names(numbered)
    kept: dict[str, list[dict[str, Any]]] = {section: [] for section in SECTIONS}
    used: set[str] = set()
    dropped: list[dict[str, Any]] = []
    counts = dict.fromkeys(REASONS, 0)
    points = ids_asked = ids_kept = shortened = 0

    def note(section: str, reason: str, detail: str, **extra: Any) -> None:
        counts[reason] += 1
        dropped.append({"section": section, "reason": reason, "detail": detail, **extra})

    for section in SECTIONS:
        for point in content.get(section, []):
            points += 1
            chosen: list[Sentence] = []
            for raw in point.get("ids", []):
                ids_asked += 1
                sid = sentence_id(raw)
                if sid is None or sid not in by_id:
                    note(section, "unknown_id", str(raw)[:40])
                elif sid in used:
                    note(section, "repeated_id", sid)
                else:
                    used.add(sid)
                    chosen.append(by_id[sid])
            if not chosen:
                note(section, "no_known_sentence", "")
                continue
            ids_kept += len(chosen)
            needs = _NEEDS.get(section)
            if needs is not None and not any(needs(extract_facts(s.text)) for s in chosen):
                note(section, "section_moved", "recent_activity", id=chosen[0].id)
                target = "recent_activity"
            else:
                target = section
            label = " ".join(str(point.get("label", "")).split())
            problem = label_problem(label, names, chosen) if label else None
            if problem:
                note(section, "label_dropped", problem, label=label[:MAX_LABEL_CHARS * 2])
                label = ""
            served = _served(chosen, " ".join(str(point.get("short", "")).split())[: MAX_SHORT_CHARS * 2])
            for sentence, result in served:
                if result.refused:
                    note(section, "shortening_refused", result.refused, id=sentence.id)
                shortened += result.shortened
                kept[target].append(
                    {
                        "text": result.text, "sources": [sentence.source_id], "quote": sentence.text,
                        "kind": "sentence", "label": label, "point": points, "shortened": result.shortened,
                    }
                )  # fmt: skip

    n_kept = sum(len(v) for v in kept.values())
    report = {
        "kept": n_kept,
        "dropped": dropped,
        "counts": {
            "points": points, "ids": ids_asked, "ids_kept": ids_kept, "statements": n_kept,
            "kept": n_kept, "shortened": shortened, **counts,
        },
    }  # fmt: skip
    return Verification(content=kept, report=report)


def _served(chosen: list[Sentence], short: str) -> list[tuple[Sentence, Any]]:
    """Each chosen sentence with what is served for it: the short form goes to the one sentence it shortens."""
    results = [(sentence, shorten(sentence.text, "")) for sentence in chosen]
    if not short:
        return results
    attempts = [shorten(sentence.text, short) for sentence in chosen]
    fits = next((i for i, attempt in enumerate(attempts) if attempt.shortened), None)
    if fits is not None:
        results[fits] = (chosen[fits], attempts[fits])
        return results
    # Refused: reported once, against the sentence the proposal came closest to (the first, when none).
    closest = next((i for i, a in enumerate(attempts) if a.refused and not a.refused.startswith("not the")), 0)
    results[closest] = (chosen[closest], attempts[closest])
    return results
