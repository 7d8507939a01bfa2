"""Model answers in the summary-v3 selection shape: planted falsehoods and true points, from one numbered slice.

Used by bench_faithfulness.py. A point is what a model answers
({"ids", "label", "short"}, rulebook.OUTPUT_SCHEMA). Everything here reads only
the case's numbered slice (sentences.number) and a seeded `random.Random`, so a
run is reproducible and works on the demo firm and generated firms alike.

- A planted falsehood is a short form, a label, or text meant by an id that
  states what the sentence does not: `false_text` must appear nowhere served.
  Every class of issue 27's table has a transform, and so do classes the issue
  does not name. `crafted_sentences` gives each case sentences the transforms
  apply to (injected as notes), so every class is planted from real records.
- A true point is what a good model writes: a sentence selected whole, a
  deletion-only shortening that removes no meaning word, fact or part of a
  name and is not what a falsehood transform makes of the sentence (one text
  cannot be both), two sentences of one record under a plain label. `expect`
  is what should be served for each of its sentences.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from graph_memory.summaries import meaning, rulebook
from graph_memory.summaries.sentences import NumberedSlice, Sentence, statement_key

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]  # fmt: skip
_MONTH = "|".join(MONTHS)
_FACT = re.compile(rf"\d|\b(?:EUR|USD|GBP|CHF|{_MONTH}|million|billion|thousand|percent)\b|[$€£%]")
_CAPITAL = re.compile(r"(?<!^)\b[A-Z]")
EVENTS = ["The court granted the motion.", "The parties signed the settlement agreement.",
          "The board approved the transaction.", "The claim was dismissed with costs.",
          "The client accepted the offer in full.", "The regulator closed its investigation.",
          "Opposing counsel agreed to an extension.", "The injunction was lifted."]  # fmt: skip
INVENTED_NAMES = ["Oyelaran", "Whitcombe", "Castellanos", "Lindqvist", "Moreau", "Nakamura", "Delacroix", "Achebe"]
PEOPLE = ["Dana Whitlock", "Samir Qureshi", "Ingrid Solberg", "Marcus Abernathy", "Lucia Ferrante"]
TOPICS = [("escrow", "Escrow"), ("rent", "Rent"), ("terminat", "Termination"), ("hearing", "Hearing"),
          ("guarantee", "Guarantee"), ("settle", "Settlement"), ("disclos", "Disclosure"), ("shipment", "Deliveries"),
          ("deliver", "Deliveries"), ("fee", "Fees"), ("damages", "Damages"), ("witness", "Witnesses"),
          ("consent", "Consent"), ("warrant", "Warranties"), ("assign", "Assignment"), ("price", "Price"),
          ("licen", "Licence"), ("invoice", "Invoices"), ("deposit", "Deposit"), ("report", "Reports"),
          ("lease", "Lease"), ("hearing", "Hearing"), ("cost", "Costs"), ("insur", "Insurance")]  # fmt: skip
# A label made of a sentence's own words that states what the sentence denies or restricts.
OPPOSITES = [(r"has not consented to the (\w+)", "{0} consented"), (r"consent is not obtained", "Consent obtained"),
             (r"^Not all of the (\w+) .* have been (\w+)", "{0} {1}"), (r"did not receive the (\w+)", "{0} received"),
             (r"scarcely complied with the (\w+ \w+)", "{0} complied"), (r"have largely been (\w+)", "Arrears {0}"),
             (r"every unit, the (\w+) aside", "{0} vacated"), (r"has not formally accepted the (\w+)", "{0} accepted"),
             (r"The (\w+) was not signed", "{0} signed"), (r"owns the (\w+), on paper", "{0} owned"),
             (r"The (\w+ \w+) remains unpaid", "{0} paid"), (r"has paid the (\w+), .* told us", "{0} paid")]  # fmt: skip
KIND_LABELS = {"header": "Background", "note": "Notes", "document": "Documents", "draft": "Letters"}


@dataclass(frozen=True)
class Plant:
    kind: str  # "falsehood" or "true"
    label: str  # the class of falsehood, or the variant of true point
    point: dict[str, Any]  # {"ids", "label", "short"} as a model answers it
    false_text: str = ""  # falsehood: what must appear nowhere served
    sentences: tuple[Sentence, ...] = ()  # the slice's sentences the point's ids name
    expect: tuple[str, ...] = ()  # true: what should be served for each of `sentences`
    expect_label: str = ""


def point(ids: list[str], label: str = "", short: str = "") -> dict[str, Any]:
    return {"ids": ids, "label": label, "short": short}


def short_name(name: str) -> str:
    """How a note names a party: a company by its first word, a person (two words) in full."""
    return name.split()[0] if len(name.split()) >= 3 else name


def crafted_sentences(client: str, other: str, rng: random.Random) -> list[str]:
    """Sentences a case's notes could hold, so that every class of plant applies to real records."""
    c, o = short_name(client), short_name(other)
    day = f"{rng.randrange(1, 28)} {rng.choice(MONTHS)} {rng.choice([2026, 2027])}"
    day2 = f"{rng.randrange(1, 28)} {rng.choice(MONTHS)} {rng.choice([2029, 2031])}"
    cur = rng.choice(["EUR", "USD", "GBP"])
    m = f"{cur} {rng.randrange(12, 990):,}{rng.choice([',000', ',500'])}"
    k, pct, person = rng.choice([14, 21, 30, 60]), rng.choice([5, 10, 15]), rng.choice(PEOPLE)
    agr = rng.choice(["Supply Agreement", "Lease", "Licence Agreement", "Services Agreement"])
    return [
        f"{o} has not consented to the assignment of the {agr}.", f"{c} did not receive the notice of termination.",
        f"The buyer may withhold {pct}% of the price.", f"{o} may terminate the {agr} on {k} days' notice.",
        f"The escrow agent may release the {m} only if both parties sign the release notice.",
        f"{c} will pay the retention unless the audit finds a shortfall.",
        f"Subject to board approval, {c} will acquire the remaining shares.",
        f"The licence lapses if consent is not obtained by {day}.", f"Completion must take place before {day}.",
        f"Not all of the documents requested by {o} have been produced.",
        f"Some of the invoices issued to {c} remain unpaid.", f"{c} owes {o} {m} under the {agr}.",
        f"{o} sued {c} for breach of the exclusivity undertaking.",
        "The court granted the motion to strike in part.", f"The alleged breach of warranty by {c} is disputed.",
        f"The proposed settlement with {o} would end the dispute.",
        f"The claim against {o} is valued at {cur} {rng.randrange(2, 60)}.{rng.randrange(1, 9)} million.",
        f"Legal costs so far are {cur} {rng.randrange(12, 90)} thousand.",
        f"The hearing is listed for {day}.", f"The limitation period for the claim ends on {day2}.",
        f"{c} seeks damages of at least {m}.", f"The agency fee is up to {m} a year.",
        f"{o} argues that {c} breached the delivery schedule.", f"{c} claims that the termination notice was invalid.",
        f"{c} has paid the deposit, {o}'s counsel told us.", f"In {o}'s view, {c} owes the service charge.",
        f"{person}, the former finance director of {c}, signed the guarantee.",
        f"The interim chair of {o} approved the budget.", f"Has {o} paid the deposit?",
        f"Is the claim against {c} time-barred?", "All of the witnesses have signed statements, the site foreman aside.",
        "The tenant has vacated every unit, the basement aside.",
        "The court granted the application, as to costs.", f"{c} owns the warehouse, on paper.",
        f"{c} has not formally accepted the offer.", f"{o} has not duly served the counter-notice.",
        "The fit-out works are substantially complete.", "The arrears have largely been cleared.",
        f"{o} scarcely complied with the reporting duty.", f"{c} barely met the first delivery milestone.",
        "The deputy registrar sealed the order.", f"The assistant company secretary of {o} certified the minutes.",
        f"The parent company of {o} guaranteed the rent.", f"A subsidiary of {c} holds the licence.",
        f"The licence granted to {c} is non-exclusive.", "The second instalment remains unpaid.",
        f"The {agr} (SPA 5.2, p. 54) caps liability at {m}.", f"{c} accepted the new timetable (letter of {day}).",
        f"Red flag: {o} has not paid the second instalment.", f"For the file: {c} signed the engagement letter.",
        f"{c} paid the deposit of {m}, as the bank statement shows.",
        f"The site visit took place on {day}, as the file copy confirms.",
        f"The landlord, however, has accepted the rent from {c}.", f"{o} also served a counter-notice.",
        f"Clause {rng.randrange(3, 30)} of the {agr} caps rent increases at {pct}% (Superseded 2025).",
        f"{c} holds exclusive distribution rights in France (Terminated 2026).",
        f"The injunction restrains {o} from trading; the Court of Appeal discharged the injunction on {day}.",
        f"{o} is the tenant of the warehouse; the landlord forfeited the lease in {day[day.index(' ') + 1 :]}.",
        f"{o}'s defence is not very strong.",
        f"The detailed expert report was served on {day}.", f"A lengthy witness statement from {person} was filed.",
    ]  # fmt: skip


# --- falsehood transforms: a sentence's text -> a short form stating what it does not (or None) -------------


def _sub(pattern: str, repl: str | Callable[[re.Match[str]], str], flags: int = 0) -> Callable[[str], str | None]:
    compiled = re.compile(pattern, flags)

    def transform(text: str) -> str | None:
        new = compiled.sub(repl, text, count=1)
        return _tidy(new) if new != text else None

    return transform


def _tidy(text: str) -> str:
    text = re.sub(r"\s+([,.;:?])", r"\1", " ".join(text.split()))
    return text[:1].upper() + text[1:]


def _first(*transforms: Callable[[str], str | None]) -> Callable[[str], str | None]:
    return lambda text: next((t for t in (f(text) for f in transforms) if t), None)


def _cycle(options: list[str], pattern: str) -> Callable[[str], str | None]:
    """Replace the first match by each of `options` in turn (group references allowed)."""
    turn = iter(range(1_000_000))
    return _sub(pattern, lambda m: m.expand(options[next(turn) % len(options)]))


def _question(text: str) -> str | None:
    subject = r"the [\w-]+(?: against [A-Z][\w-]*(?: [A-Z][\w-]*)*)?|[A-Z][\w-]*(?: [A-Z][\w-]*)*"
    found = re.match(rf"^(Has|Is|Was|Will) ({subject}) (.+)\?$", text)
    if found:
        return _tidy(f"{found[2]} {found[1].lower()} {found[3]}.")
    found = re.match(r"^Does (the [\w-]+) (\w+) (.+)\?$", text)
    return _tidy(f"{found[1]} {found[2]}s {found[3]}.") if found else None


def _digit(text: str) -> str | None:
    found = re.search(r"\d[\d,.]*", text)
    if not found:
        return None
    number = found[0].rstrip(",.")
    last = max(i for i, ch in enumerate(number) if ch.isdigit())
    changed = number[:last] + str((int(number[last]) + 3) % 10) + number[last + 1 :]
    return text[: found.start()] + changed + text[found.start() + len(number) :]


_AUX = r"\b(is|was|are|were|has|have|had|will|must|may|can|shall)\b"
# (class, named in issue 27's table, transform)
TRANSFORMS: list[tuple[str, bool, Callable[[str], str | None] | None]] = [
    ("negation dropped", True, _sub(r"\s(?:not|never)\b|n't\b", "")),
    ("modality: may -> will / must", True, _cycle(["will", "must"], r"\bmay\b")),
    ("condition or restriction dropped", True, _first(
        _sub(r"^(?:Subject to|Unless|If|Provided that) [^,]+, ", ""),
        _sub(r",? (?:only if|unless|provided that|subject to|if|except) [^,.;]+", ""), _sub(r"\bonly ", ""))),
    ("time relation: by/before/within/until -> after", True, _sub(
        rf"\b(?:by|before|within|until)\b(?= (?:\d|the end|year end|{_MONTH}))", "after")),
    ("quantity: not all -> none, some -> all", True, _first(
        _sub(r"\b[Nn]ot all\b", "None"), _sub(r"\b[Ss]ome\b", "all"), _sub(r"\bmost\b", "all"),
        _sub(r"\ball\b", "some"))),
    ("parties swapped", True, None),  # needs the parties: see falsehoods()
    ("hedge dropped: in part, alleged, proposed, draft", True, _sub(
        r" in part\b|\b(?:alleged|proposed|draft|provisional|preliminary|purported|allegedly|reportedly) ", " ")),
    ("scale word dropped (million, thousand)", False, _sub(r" (?:million|billion|thousand|mln|bn)\b", "")),
    ("part of a date dropped (day or year)", False, _cycle(
        [r"\2 \3", r"\1 \2"], rf"\b(\d{{1,2}}) ({_MONTH}) (\d{{4}})\b")),
    ("'at least' / 'up to' dropped", False, _sub(
        r"\b(?:at least|up to|at most|no more than|not less than|more than|less than|a maximum of) ", "")),
    ("attribution dropped ('X claims that')", False, _sub(
        r"^(?:.{3,60}? (?:claims|alleges|argues|contends|says|asserts|maintains) that |According to [^,]+, )", "")),
    ("attribution clause dropped (', X's counsel told us')", False, _first(
        _sub(r", [^,]{3,60}? (?:told us|reports|writes|wrote|informed us|confirmed)\.$", "."),
        _sub(r"^In [\w'\u2019. ]+ view, ", ""))),
    ("'former' / 'interim' dropped", False, _sub(r"\b(?:former|previous|interim|acting|outgoing) ", "")),
    ("question served as a statement", False, _question),
    ("exception dropped (', X aside')", False, _sub(r", (?:[^,]{3,40} aside|bar [^,]{3,40}|save [^,]{3,40})\.$", ".")),
    ("scope dropped (', as to costs', ', on paper')", False, _sub(
        r", (?:as to [^,]{3,40}|on paper|in name only|in respect of [^,]{3,40})\.$", ".")),
    ("adverb under a negation dropped ('not formally')", False, _sub(
        r"\b(not|never|n't)( yet)? (?:formally|duly|simply|really|very) ", r"\1\2 ")),
    ("degree word dropped ('substantially', 'largely')", False, _sub(
        r"\b(?:substantially|largely|mostly|practically|virtually|broadly|essentially|partly|nearly) ", "")),
    ("negative adverb dropped ('scarcely', 'barely')", False, _sub(r"\b(?:scarcely|barely|hardly|seldom|rarely) ", "")),
    ("role qualifier dropped ('deputy', 'assistant')", False, _sub(r"\b(?:deputy|assistant|vice|junior) ", "")),
    ("head of a noun phrase dropped ('the parent of X' -> 'X')", False, _sub(
        r"^(?:The|A|An) (?:parent company|subsidiary|holding company|insurer|guarantor|lender) of ", "")),
    ("negative prefix dropped ('non-exclusive', 'unpaid')", False, _first(
        _sub(r"\bnon-(?=\w)", ""), _sub(r"\bun(?=paid|signed|conditional|contested|successful|enforceable)", ""))),
    ("status aside dropped ('(Superseded 2025)')", False, _sub(
        r" \((?:Superseded|Terminated|Overruled|Lapsed|Amended|Replaced) \d{4}\)", "")),
    ("superseding last clause dropped ('; the landlord forfeited the lease')", False, _sub(
        r"; the (?:Court of Appeal|landlord|licensor|bank) [^;]+\.$", ".")),
    ("word added ('not', 'never', 'already', 'fully')", False, None),  # see falsehoods()
    ("number replaced", False, _digit),
]  # fmt: skip
OPPOSITE = "label of the sentence's own words stating the opposite ('Consent obtained')"
OTHER_CLASSES = [
    ("sentence spliced from two records", False), ("label with an amount, number or date", False),
    ("label with a meaning word ('not', 'may', 'only', 'alleged')", False), ("label with a party's name", False),
    ("label with a state word ('paid', 'settled')", False), ("label with an invented name", False),
    ("label stating an outcome ('Consent given')", False),
    (OPPOSITE, False),
    ("unknown or hallucinated ids", False),
    ("id from another case's slice", False), ("prose written instead of ids", False),
]  # fmt: skip
CLASSES = [(name, issue) for name, issue, _ in TRANSFORMS] + OTHER_CLASSES
PER_CASE = 3  # planted instances of one class per case, at most


def _party_swap(text: str, parties: list[str]) -> str | None:
    found = sorted({(m.start(), m.end(), name) for full in parties for name in {full, short_name(full)}
                    for m in re.finditer(rf"\b{re.escape(name)}(?![\w])", text)})  # fmt: skip
    spans = [f for i, f in enumerate(found) if not any(g[0] <= f[0] and f[1] <= g[1] and g != f for g in found)]
    pairs = [(a, b) for a in spans for b in spans if a[0] < b[0] and short_name(a[2]) != short_name(b[2])]
    if not pairs:
        return None
    a, b = pairs[0]
    between = text[a[1] : b[0]]
    if re.fullmatch(r"\s*(?:and|,|or)\s*", between) or " between " in text[: a[0]]:
        return None  # a symmetric relation: the swap says the same
    return text[: a[0]] + b[2] + between + a[2] + text[b[1] :]


def _no_meaning(text: str) -> bool:
    return not any(meaning.is_meaning_word(w) for w in re.findall(r"[\w'\u2019-]+", text))


def shortenings(text: str) -> Iterator[tuple[str, str]]:
    """(variant, short) for each deletion a good model would make: no meaning word, fact or part of a name
    goes, and none makes what a falsehood transform makes of the sentence (false_forms)."""
    false = false_forms(text)
    for variant, short in _deletions(text):
        if statement_key(short) not in false:
            yield variant, short


def _deletions(text: str) -> Iterator[tuple[str, str]]:
    aside = re.search(r" ?\(([^()]*)\)", text)
    if aside and _no_meaning(aside[1]):
        yield "shortening: bracketed aside removed", _tidy(text[: aside.start()] + text[aside.end() :])
    intro = re.match(r"^(Red flag|Update|Note|For the file|Background|Summary): (.+)$", text)
    if intro:
        yield "shortening: introductory tag removed", _tidy(intro[2])
    trail = re.match(r"^(.+?)[,;] ([^,;]+?)([.?!])$", text)
    # the sentence's only break: after "X, the former director of Y, signed it" the last part is the verb's
    if trail and not re.search(r"[,;] ", trail[1]) and len(trail[1].split()) >= 4 and len(trail[2].split()) <= 7:
        tail = trail[2]
        if _no_meaning(tail) and not _FACT.search(tail) and not re.search(r"[A-Z]", tail):
            yield "shortening: trailing clause removed", trail[1] + trail[3]
    discourse = re.search(r",? \b(?:however|also|moreover|furthermore|indeed|meanwhile)\b,?", text)
    if discourse:
        yield "shortening: discourse word removed", _tidy(text[: discourse.start()] + " " + text[discourse.end() :])
    adjective = re.search(r"\b(?:detailed|lengthy|comprehensive|helpful) ", text)
    if adjective:
        yield (
            "shortening: descriptive word inside a clause removed",
            _tidy(text[: adjective.start()] + text[adjective.end() :]),
        )


# Transforms that replace a word or cut part of a date: no true shortening makes what they make, and calling
# them moves their cycle, so false_forms() leaves them out.
_CYCLING = {"modality: may -> will / must", "part of a date dropped (day or year)"}


def false_forms(text: str) -> set[str]:
    """What this bench's falsehood transforms make of `text` (as statement keys). A shortening equal to one
    of them is a planted falsehood ("The court granted the application, as to costs." -> "... application."
    is "scope dropped"), so it is no true point: one text cannot be both."""
    made = (transform(text) for name, _, transform in TRANSFORMS if transform is not None and name not in _CYCLING)
    return {statement_key(short) for short in made if short}


def topic_label(*sentences: Sentence) -> tuple[str, str]:
    """(variant, label) a good model groups a point under: the topic its sentences name ("Escrow" over a
    sentence about escrow), else a generic heading for the kind of record ("Background", "Notes")."""
    low = " ".join(s.text.casefold() for s in sentences)
    topic = next((label for stem, label in TOPICS if re.search(rf"\b{stem}", low)), "")
    if topic:
        return "a topic the sentences name", topic
    return "a generic heading ('Background', 'Notes')", KIND_LABELS.get(sentences[0].source_id.split(":")[0], "Notes")


def true_points(numbered: NumberedSlice, rng: random.Random) -> Iterator[Plant]:
    """Every true point a good model could write of this slice, each variant that applies."""
    sentences = list(numbered.sentences)
    for s in sentences:
        yield Plant("true", "sentence selected whole", point([s.id]), sentences=(s,), expect=(s.text,))
        if rng.random() < 0.4:
            raw = rng.choice([f"[{s.id}]", s.id.upper(), s.id[1:]])
            yield Plant("true", "sentence selected whole, id as '[s7]', 'S7' or '7'", point([raw]),
                        sentences=(s,), expect=(s.text,))  # fmt: skip
        if rng.random() < 0.5:
            kind, label = topic_label(s)
            yield Plant("true", f"sentence under a plain label: {kind}", point([s.id], label), sentences=(s,),
                        expect=(s.text,), expect_label=label)  # fmt: skip
        for variant, short in shortenings(s.text):
            if statement_key(short) != statement_key(s.text) and len(short.split()) >= 3:
                yield Plant("true", variant, point([s.id], "", short), sentences=(s,), expect=(short,))
    for a, b in itertools.pairwise(sentences):
        if a.source_id == b.source_id:
            kind, label = topic_label(a, b)
            yield Plant("true", f"two sentences of one record under a plain label: {kind}", point([a.id, b.id], label),
                        sentences=(a, b), expect=(a.text, b.text), expect_label=label)  # fmt: skip


def falsehoods(numbered: NumberedSlice, rng: random.Random, foreign: list[tuple[str, str]]) -> Iterator[Plant]:
    """Planted falsehoods of every class that applies to this slice, at most PER_CASE of each.
    `foreign` holds (id, sentence) of other cases' slices."""
    sentences = list(numbered.sentences)
    context = numbered.context
    parties = [p for p in context.party_names if p]
    own = {statement_key(s.text) for s in sentences}

    def false(label: str, s: tuple[Sentence, ...], p: dict[str, Any], text: str) -> Plant:
        return Plant("falsehood", label, p, false_text=text, sentences=s)

    adders = iter(range(1_000_000))
    for name, _, transform in TRANSFORMS:
        made = 0
        for s in rng.sample(sentences, len(sentences)):
            if transform is not None:
                short = transform(s.text)
            elif name == "parties swapped":
                short = _party_swap(s.text, parties)
            else:  # a word added after the first auxiliary verb
                word = ["not", "never", "already", "fully"][next(adders) % 4]
                short = re.sub(_AUX, rf"\1 {word}", s.text, count=1) if re.search(_AUX, s.text) else None
            if not short or statement_key(short) in own or made >= PER_CASE:
                continue
            made += 1
            yield false(name, (s,), point([s.id], "", short), short)
    # Two records' sentences spliced into one short form.
    for _ in range(PER_CASE):
        a, b = rng.sample(sentences, 2)
        wa, wb = a.text.rstrip(".?!").split(), b.text.split()
        if a.source_id != b.source_id and len(wa) > 3 and len(wb) > 3:
            short = " ".join(wa[: len(wa) // 2] + wb[len(wb) // 2 :])
            if statement_key(short) not in own:
                yield false("sentence spliced from two records", (a, b), point([a.id, b.id], "", short), short)
    # Labels that state something: facts, meaning words, names, states, outcomes.
    facts = [m[0] for s in sentences for m in re.finditer(rf"(?:EUR|USD|GBP|CHF) [\d,.]+|\d{{1,2}} (?:{_MONTH})"
                                                           r"|\d{4}-\d{2}-\d{2}|\d+ (?:days|months)", s.text)]  # fmt: skip
    who = [short_name(p) for p in parties]
    invented = [n for n in INVENTED_NAMES if n.casefold() not in context.text.casefold()]
    options = {
        "label with an amount, number or date": [*facts, "EUR 2.5 million", "Clause 14"],
        "label with a meaning word ('not', 'may', 'only', 'alleged')": [
            "Consent not given", "Buyer must pay", "Release only on signing", "Alleged breach", "No objection"],
        "label with a party's name": [f"{w} {t}" for w in who for t in ("guarantee", "position", "liability")],
        "label with a state word ('paid', 'settled')": [
            "Invoice paid", "Claim settled", "Deadline missed", "Motion granted", "Offer accepted"],
        "label with an invented name": [f"{n} {t}" for n in invented for t in ("guarantee", "payment")],
        "label stating an outcome ('Consent given')": [
            "Consent given", "Funds released", "Deposit returned", "Liability admitted", "Works finished"],
    }  # fmt: skip
    labels = {name: [(s, rng.choice(o)) for s in rng.sample(sentences, min(2, len(sentences)))] if o else []
              for name, o in options.items()}  # fmt: skip
    opposite = [(s, template.format(*found.groups()).capitalize()) for s in sentences for pattern, template in OPPOSITES
                for found in [re.search(pattern, s.text)] if found]  # fmt: skip
    labels[OPPOSITE] = rng.sample(opposite, min(2, len(opposite)))
    for name, pairs in labels.items():
        for s, label in pairs:
            yield false(name, (s,), point([s.id], label), label)
    # Ids: hallucinated, from another case, prose in their place.
    n = len(sentences)
    for raw in (f"s{n + rng.randrange(1, 40)}", rng.choice(["s0", "s-1", "sentence 4", "note:n1", "s12a"])):
        event = rng.choice([e for e in EVENTS if statement_key(e) not in own])
        yield false("unknown or hallucinated ids", (), point([raw], "", event), event)
    s = rng.choice(sentences)
    event = rng.choice([e for e in EVENTS if statement_key(e) not in own])
    yield false("unknown or hallucinated ids", (s,), point([s.id, f"s{n + 99}"], "", event), event)
    for fid, text in rng.sample(foreign, min(2, len(foreign))):
        if statement_key(text) not in own:
            claimed = tuple(x for x in sentences if x.id == fid)
            yield false("id from another case's slice", claimed, point([fid], "", text), text)
    for s in rng.sample(sentences, min(2, len(sentences))):
        prose = _sub(r"\s(?:not|never)\b", "")(s.text) or _party_swap(s.text, parties) or rng.choice(EVENTS)
        if statement_key(prose) not in own:
            yield false("prose written instead of ids", (), point([prose]), prose)


def claimed_ids(plant: Plant) -> set[str]:
    return {s.id for s in plant.sentences}


def pack(plants: list[Plant], rng: random.Random) -> list[tuple[dict[str, Any], list[Plant]]]:
    """Plants into schema-valid answers: at most MAX_POINTS_PER_SECTION points per section, no sentence
    named twice in one answer (a repeated id would be dropped, and the point measured with it)."""
    rng.shuffle(plants)
    answers: list[tuple[dict[str, Any], list[Plant], set[str]]] = []
    for plant in plants:
        ids = claimed_ids(plant)
        for content, members, used in answers:
            section = next((x for x in rng.sample(rulebook.SECTIONS, len(rulebook.SECTIONS))
                            if len(content[x]) < rulebook.MAX_POINTS_PER_SECTION), None)  # fmt: skip
            if section and not ids & used:
                content[section].append(plant.point)
                members.append(plant)
                used |= ids
                break
        else:
            content = rulebook.empty_content()
            content["status"].append(plant.point)
            answers.append((content, [plant], set(ids)))
    return [(content, members) for content, members, _ in answers]


def good_answers(numbered: NumberedSlice) -> tuple[dict[str, Any], dict[str, Any]]:
    """(v2, v3) answers for the same points: every sentence once (as many as the schema holds), shortened
    where a good model would. v2 writes each point's text beside its quote; v3 gives its id."""
    v2, v3 = rulebook.empty_content(), rulebook.empty_content()
    for s in numbered.sentences:
        section = ("open_questions" if s.text.endswith("?") else "money" if re.search(r"EUR|USD|GBP|CHF", s.text)
                   else "key_dates" if _FACT.search(s.text) else "status" if s.source_id == "case:header"
                   else "recent_activity")  # fmt: skip
        free = [x for x in (section, *rulebook.SECTIONS) if len(v3[x]) < rulebook.MAX_POINTS_PER_SECTION]
        if not free:
            break
        short = next((short for _, short in shortenings(s.text)), "")
        v3[free[0]].append(point([s.id], "", short))
        v2[free[0]].append({"text": short or s.text, "sources": [s.source_id], "quote": s.text})
    return v2, v3
