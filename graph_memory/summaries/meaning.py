"""Words that carry meaning: the closed class a shortening may never delete.

A shortened sentence (shorten.py) is the sentence with words removed. Most
words can go without changing what the rest says ("the signed share purchase
agreement" -> "the share purchase agreement"); the words below cannot: each
one bends the truth of the words around it, so removing it can turn a true
sentence into a false one ("has not consented" -> "has consented", "may
withhold" -> "withhold", "only if both sign" -> "", "in part" -> "").

They are grammatical words, a closed class, grouped by what they do (and the
few modifiers that change what a noun names: "deputy", "fake"). Every
form of each is listed (a verb's -s, -ed, -ing forms), so the class is a plain
lookup. A phrase ("no later than", "subject to", "at least") protects each of
its words where the phrase occurs, so "to" is protected in "subject to" and
nowhere else. A word outside the class may still be protected by shorten.py
(facts and names). One test per word (tests/summaries/test_meaning.py).
"""

from __future__ import annotations

import re


def _verb(*bases: str) -> set[str]:
    """A regular verb's forms: base, -s, -ed, -ing (and a noun in -ion or -al where there is one, listed by hand)."""
    forms: set[str] = set()
    for base in bases:
        stem = base[:-1] if base.endswith("e") else base
        forms |= {base, base + "s", stem + "ed", stem + "ing"}
        if base.endswith("y") and base[-2] not in "aeiou":
            forms |= {base[:-1] + "ies", base[:-1] + "ied"}
        if re.search(r"(s|sh|ch|x|z)$", base):
            forms.add(base + "es")
    return forms


CLASSES: dict[str, frozenset[str]] = {
    # not, never, no one: the sentence says the opposite without them.
    "negation": frozenset(
        {
            "not", "no", "never", "none", "nor", "neither", "nobody", "nothing", "nowhere", "cannot", "can't",
            "won't", "don't", "doesn't", "didn't", "isn't", "aren't", "wasn't", "weren't", "hasn't", "haven't",
            "hadn't", "shouldn't", "wouldn't", "couldn't", "mustn't", "needn't", "shan't", "mightn't", "n't",
            "without", "unable", "non", "lack", "lacks", "lacked", "lacking", "absent", "absence",
            *_verb("fail", "refuse", "decline", "deny", "reject", "dispute", "contest", "oppose", "object", "omit",
                   "neglect", "cease", "prevent", "preclude", "prohibit", "forbid", "bar", "exclude", "waive",
                   "withhold", "withdraw", "revoke", "rescind", "cancel", "void", "avoid", "block", "stop"),
            "failure", "refusal", "denial", "rejection", "objection", "omission", "forbidden", "forbade",
            "barred", "withheld", "withdrew", "withdrawn", "stopped", "stopping",
        }
    ),
    # may, must, will: what is possible, required or to come is not what is done.
    "modality": frozenset(
        {
            "may", "might", "must", "shall", "should", "will", "would", "can", "could", "ought", "need", "needs",
            "needed", "required", "require", "requires", "obliged", "obligation", "obligated", "entitled",
            "permitted", "allowed", "able", "possible", "possibly", "likely", "unlikely", "probably",
            "perhaps", "maybe", "optional", "mandatory", "option", "right", "discretion",
        }
    ),
    # if, unless, subject to: the rest holds only under the condition.
    "condition": frozenset(
        {
            "if", "unless", "provided", "providing", "subject", "only", "except", "excepting", "excluding",
            "exception", "save", "conditional", "conditionally", "condition", "conditions", "conditioned",
            "contingent", "depending", "depends", "dependent", "assuming", "whether", "otherwise", "when",
            "whenever", "where", "wherever", "once", "event", "lest", "solely", "sole", "exclusively",
            "merely", "but", "unconditional", "unconditionally", "aside", "barring",
        }
    ),
    # by, before, within: when the rest holds.
    "time": frozenset(
        {
            "before", "after", "by", "within", "until", "till", "upon", "since", "prior", "following",
            "during", "pending", "later", "earlier", "earliest", "latest", "thereafter", "then",
            "previously", "subsequently", "yet", "still", "already", "again", "anymore", "longer", "ever",
            "from", "between", "through", "throughout", "expiry", "expires", "expired",
            "overdue", "late", "early", "first", "last", "next", "former", "formerly", "previous", "current",
            "currently", "now", "temporarily", "temporary", "permanent", "permanently", "interim",
            "acting", "deadline",
        }
    ),
    # all, some, in part, at least: how much of it holds.
    "quantity": frozenset(
        {
            "all", "any", "some", "every", "each", "both", "either", "most", "least", "more", "less",
            "fewer", "few", "many", "much", "several", "half", "part", "partly", "partial", "partially",
            "whole", "wholly", "entire", "entirely", "full", "fully", "total", "totally", "majority",
            "minority", "maximum", "minimum", "up", "over", "under", "above", "below", "exceed", "exceeds",
            "exceeded", "exceeding", "than", "approximately", "about", "around", "roughly", "nearly",
            "almost", "circa", "ca.", "approx.", "ca", "approx", "just", "even", "per", "plus", "minus", "net", "gross",
            "additional", "further", "another", "other", "remaining", "balance", "outstanding", "whatever",
            "whichever", "or", "alternatively", "instead", "rather", "jointly", "severally", "respectively",
            "aggregate", "cap", "capped", "limit", "limited", "limits", "little",
        }
    ),
    # alleged, proposed, draft, in the seller's view: whose claim, or how settled, the rest is.
    "hedge": frozenset(
        {
            "alleged", "allegedly", "allegation", "allegations", "allege", "alleges", "alleging",
            "proposed", "propose", "proposes", "proposal", "draft", "drafts", "expected", "expects", "expect",
            "intended", "intends", "intend", "intention", "planned", "plans", "plan", "anticipated",
            "potential", "potentially", "prospective", "purported", "purportedly", "putative", "apparent",
            "apparently", "reportedly", "suspected", "suspects", "suspect", "claimed", "claims", "claim",
            "claiming", "contends", "contended", "contend", "argues", "argued", "argue", "asserts",
            "asserted", "assert", "believes", "believed", "believe", "considers", "considered", "consider",
            "thinks", "thought", "think", "seems", "seem", "seemed", "appears", "appear", "appeared",
            "suggests", "suggested", "suggest", "hinted", "hints", "hint", "according", "says", "said", "say",
            "states", "stated", "maintains", "maintained", "insists", "insisted", "seeks", "sought", "seek",
            "asks", "asked", "ask", "requests", "requested", "request", "wants", "wanted", "want", "hopes",
            "hoped", "hope", "tries", "tried", "try", "attempts", "attempted", "attempt", "threatens",
            "threatened", "threaten", "offers", "offered", "offer", "tentative", "tentatively",
            "preliminary", "provisional", "provisionally", "unconfirmed", "unverified", "disputed",
            "contested", "estimated", "estimate", "projected", "forecast", "assumed", "presumably", "pending",
            "unsigned", "unexecuted",
            # who says or knows it: verbs of saying and knowing, and the nouns of a point of view
            *_verb("tell", "write", "report", "inform", "advise", "indicate", "mention", "note", "acknowledge",
                   "admit", "concede", "recall", "remember", "learn", "understand", "confirm", "verify",
                   "question", "query", "doubt", "check", "rumour", "rumor", "speculate", "guess"),
            "told", "wrote", "written", "hear", "hears", "heard",  # not "hearing": a court's, mostly "learnt", "understood", "queried", "view", "views",
            "position", "version", "account", "opinion", "perspective", "understanding", "recollection",
            "impression", "belief", "tbc", "tbd", "unclear", "uncertain", "unknown", "doubtful", "questionable",
            "unsure", "rumours", "rumors", "speculation", "reputedly", "supposedly", "ostensibly",
            "seemingly", "arguably",
            # who complains of it or accuses someone of it: "the buyer complains of defective goods"
            *_verb("complain", "accuse", "describe", "characterise", "characterize"), "complaint", "complaints",
            "accusation", "accusations",
        }
    ),
    # deputy, fake, so-called: the noun then names someone or something else ("the deputy registrar" is not
    # the registrar, "a forged deed" is no deed); not a modifier a shortening may drop as it drops "lengthy".
    "identity": frozenset(
        {
            "deputy", "assistant", "vice", "junior", "associate", "honorary", "nominal", "titular", "designate",
            "elect", "ex", "erstwhile", "onetime", "outgoing", "incoming", "future", "shadow", "nominee",
            "alternate", "substitute", "trainee", "fake", "false", "counterfeit", "forged", "fictitious", "sham",
            "mock", "imitation", "pseudo", "quasi", "so-called", "would-be", "self-styled", "supposed", "dissolved",
            "defunct", "toy", "replica", "dummy", "decoy", "model", "specimen", "template", "notional",
            "hypothetical", "theoretical", "deemed", "constructive", "fictional", "imaginary", "virtual",
            "phantom", "illusory", "ostensible",
        }
    ),
}

# Phrases whose every word is protected where the phrase occurs (each as case-folded words).
PHRASES: tuple[tuple[str, ...], ...] = (
    ("no", "later", "than"), ("not", "later", "than"), ("subject", "to"), ("provided", "that"),
    ("only", "if"), ("if", "and", "only", "if"), ("in", "part"), ("in", "full"), ("at", "least"),
    ("at", "most"), ("up", "to"), ("in", "the", "event"), ("on", "condition"), ("as", "of"), ("other", "than"),
    ("rather", "than"), ("more", "than"), ("less", "than"), ("fewer", "than"), ("no", "more", "than"),
    ("in", "excess", "of"), ("on", "or", "before"), ("on", "or", "after"), ("as", "soon", "as"),
    ("so", "long", "as"), ("as", "long", "as"), ("in", "case"), ("except", "for"), ("save", "for"),
    ("apart", "from"), ("instead", "of"), ("on", "behalf", "of"), ("in", "principle"), ("in", "theory"),
    ("to", "be"), ("close", "to"),
)  # fmt: skip

MEANING_WORDS: frozenset[str] = frozenset().union(*CLASSES.values())

# The negation words that deny the word after them ("no termination fee", "not consented"): not the verbs of
# the class, which take what follows as their object ("disputes the price review" is about the price review).
NEGATORS = frozenset(
    {
        "not", "no", "never", "none", "nor", "neither", "nobody", "nothing", "nowhere", "cannot", "without",
        "non", "unable", "absent",
    }
)  # fmt: skip

# Words of state: not a class of their own here (a shortening keeps a clause whole or drops it whole,
# state word and all), but what a label or a citing aside may not hold: a label groups points and a
# citation points at a record; neither says how things stand.
STATE_WORDS = frozenset(
    {
        "paid", "repaid", "unpaid", "outstanding", "overdue", "met", "unmet", "missed", "open", "opened",
        "reopened", "done", "complete", "completed", "incomplete", "pending", "granted", "denied", "signed",
        "unsigned", "countersigned", "executed", "settled", "filed", "served", "dismissed", "agreed",
        "refused", "rejected", "accepted", "approved", "declined", "closed", "terminated", "withdrawn",
        "expired", "cancelled", "canceled", "resolved", "unresolved", "won", "lost", "breached", "upheld",
        "overturned", "reversed", "vacated", "sent", "received", "submitted", "delivered", "void", "voided",
        "lapsed", "suspended", "revoked", "concluded", "abandoned", "finalised", "finalized", "due", "late",
        "valid", "invalid", "enforceable", "unenforceable", "liable", "breach", "default", "defaulted",
    }
)  # fmt: skip



def _key(word: str) -> str:
    """How a word is looked up: case-folded, curly apostrophes straightened."""
    return word.casefold().replace("\u2019", "'")


def class_of(word: str) -> str | None:
    """The class a word belongs to (case-folded, curly apostrophes straightened), or None."""
    key = _key(word)
    return next((name for name, members in CLASSES.items() if key in members), None)


def is_meaning_word(word: str) -> bool:
    key = _key(word)
    return key in MEANING_WORDS or key.endswith("n't")


def denies(word: str) -> bool:
    """Whether `word` denies the word after it: a negator, or a contraction in n't ("hasn't")."""
    key = _key(word)
    return key in NEGATORS or key.endswith("n't")


def _month(words: list[str], i: int) -> bool:
    """Whether the word at `i` is the month "May" of a date ("on 4 May", "May 2027"), not the modal verb: a
    capital inside the sentence, beside a number. A date is a fact, and stays as one."""
    beside = [words[j] for j in (i - 1, i + 1) if 0 <= j < len(words)]
    return i > 0 and words[i] == "May" and any(w[:1].isdigit() for w in beside)


def protected_positions(words: list[str]) -> set[int]:
    """The positions in `words` that may not be deleted: meaning words and the words of protected phrases."""
    keys = [_key(w) for w in words]
    found = {i for i, w in enumerate(keys) if is_meaning_word(w) and not _month(words, i)}
    for phrase in PHRASES:
        width = len(phrase)
        for start in range(len(keys) - width + 1):
            if tuple(keys[start : start + width]) == phrase:
                found.update(range(start, start + width))
    return found
