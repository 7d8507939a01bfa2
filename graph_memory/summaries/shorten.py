"""Deletion-only shortening: a sentence with words removed, never one with words added, replaced or moved.

A writer may propose a shorter form of a sentence it selected. `shorten`
keeps it only if it is the sentence with words removed (the proposal's
words, in order, are words of the sentence; case, curly quotation marks and
dashes aside), none of them a word that carries meaning (meaning.py), and
every removal is one whose *form* shows it adds no claim to the rest:

- an article ("the", "a", "an") in a sentence that holds no meaning word
  (an upward context, below: without "the" a denial, a permission or a
  condition speaks of any such thing, "did not sell the shares" is no "did
  not sell shares"), but not where it opens a quantity ("a few" is
  not "few") or a second noun phrase after "and" or "or" ("the
  chairman and the chief executive" are two people), stands before a fact, a
  meaning word or a word that picks out one thing ("the only person", "the
  latter"), or is a capital "A" inside the sentence (a letter: "the A shares");
  "a" or "an" only opening the sentence before a word in lower case ("is a
  director" is no "is director"; "A Mr Patel telephoned" is someone so called);
- a connective set apart by commas ("However, ...", "In addition, ...",
  "..., however, ..."), not one between two clauses ("The buyer paid,
  however, the seller shipped" is no "The buyer paid the seller shipped");
- a note's filing tag before a colon ("Red flag:", "Update:", "For the
  file:"): an allowed list, so any other opening ("Rumour:") stays;
- a bracketed aside that only cites: numbers, dates, citation words and
  short abbreviations of what it cites ("(SPA 5.2, p. 54)", "(Order No. 7)",
  "(letter of 6 April 2027)", "[B/233]", "(¶ 12)"), and not one a capitalised
  word follows, which is part of a name ("Greenfield Estates (2015) Limited");
- a bracketed aside that only gives the words before it a short name that
  adds nothing to them: their own words or initials ("The share purchase
  agreement (the SPA) was signed"), or the side of a deal or a suit a name
  takes, as a defined term for a name that opens its clause ('Northwind
  Holdings (the "Buyer") signed') or bare after a name wherever it stands
  ("between Northwind Holdings, Inc. (Buyer) and ..."); not a capacity ("Mr
  Roy (the Witness) signed the will", "Mr Hale (Trustee)"), a term that says
  which of the things before it are meant ('The lenders (the "Consenting
  Lenders")'), nor any other bare capitalised word ("(Superseded)",
  "(Minor)");
- a name set between commas after the role it renames ("the buyer,
  Northwind Holdings, signed"), or a description after a name that names the
  side it takes ("Northwind Holdings, the buyer, signed"; not a capacity,
  "Halden, the seller's director, signed the guarantee"): the sentence's only
  pair of commas with no "and" or "or" after it (in a series, "only the
  claimant, Ms Bell, and Mr Ali", the name may be an item of its own; after
  any other word, the subject of a clause whose verb is left out, "Aster paid
  £2m and, Birch, £500,000");
- an as-clause set apart by a comma whose verb vouches for the rest ("...,
  as the bank statement shows", "..., as the minutes confirm"): what a
  record that keeps what happened shows or confirms, or what someone admits,
  "as" takes as true (not "as the buyer says", whose account it is, nor "as
  the indictment shows", which accuses);
- "also" in a statement's main clause (not "a tenant who also runs a
  business") before any meaning word that bends it ("Castell also failed to
  pay"; not "only if Castell also consents");
- in a sentence that holds no meaning word (an upward context: whatever is
  true of a thing is true of any larger set it belongs to), the descriptive
  words that open the noun phrase "a/an ..." opening it ("A lengthy witness
  statement from X was filed" -> "A witness statement from X was filed"):
  something that is a lengthy witness statement is a witness statement.
  Only words of a closed list that say how long, full or formal a thing is
  ("lengthy", "brief", "detailed", "handwritten"): any other may say what
  the thing is or how it stands ("a trade secret claim" is no "secret
  claim"; "a voidable transfer", "a defective notice"), and no form tells
  them apart. Only of one event that took place ("was filed", "has been
  served": a closed list of verbs), not a rule ("A foreign judgment is
  enforceable" says nothing of every judgment) nor one that did not take place
  ("A formal hearing was dispensed with" is no "A hearing was ..."); not
  in "the ..." (which thing is meant changes), not after the verb (a verb
  can deny: "escaped a lengthy sentence").

Nothing else may go. Removing single words inside a clause changes meaning
far beyond any list ("allows termination on 30 days' notice" -> "allows 30
days"; "has not formally accepted" -> "has not accepted"), and so does
removing a part that qualifies the rest ("in the seller's view", "its
counsel wrote", "as to costs", "Rumour:", "(Superseded 2025)") or a clause of
its own that overrules it ("...; the Court of Appeal discharged the
injunction"). Those look like any aside, and no list of words can tell them
apart, so none is trusted to. And only marks that punctuate (commas,
brackets, quotation marks, dashes, full stops) may go with what is removed:
any other ("?", "✗", "~", "*") may say whether the rest holds ("[?] However,
the licence is exclusive" queries what "The licence is exclusive" states).

What is served is never the proposal's own text: it is built from the
sentence's own characters (the kept words with the punctuation between
them), so nothing can be added by construction. A proposal that fails any
rule is replaced by the whole sentence, never by nothing: a true point is not
lost because its shortening was wrong.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from graph_memory.summaries import meaning
from graph_memory.summaries.facts import CURRENCY_CODES, LEGAL_SUFFIXES, is_fact_word
from graph_memory.summaries.meaning import STATE_WORDS
from graph_memory.summaries.sentences import ABBREVIATIONS, normalise_quote

# A word: letters, digits and the marks that join them inside one word ("Castell's", "5.2", "INV-0057", "7%").
_WORD = re.compile(r"[\w$€£¥%]+(?:[\u2019'.,\-/:][\w%]+)*")
_CLOSERS = ")]\u201d\u2019\"'"
_OPENERS = "“\"\u2018'(["
_PAIRS = (("(", ")"), ("[", "]"), ("“", "”"))
# Fewest words a shortening keeps: less reads as a fragment, not a point.
MIN_WORDS = 3


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int
    key: str  # what compares equal: case, curly quotation marks and dashes aside (made once: alignment compares often)


def tokens(text: str) -> list[Token]:
    return [Token(m.group(), m.start(), m.end(), normalise_quote(m.group()).casefold()) for m in _WORD.finditer(text)]


def _is_fact(token: Token) -> bool:
    bare = token.text.strip(".,").casefold()
    return (
        any(c.isdigit() for c in token.text)
        or any(c in token.text for c in "$€£¥%")
        or token.text.strip(".,") in CURRENCY_CODES
        or (bare != "and" and is_fact_word(bare))
    )


# Words that never carry content: they may go from a clause that is otherwise kept (not every one: _article).
# Only articles: an adverb, however empty it looks, bends what a negation around it denies ("not formally
# accepted").
ARTICLES = frozenset({"a", "an", "the"})
# Connectives that only link a sentence to the one before: they may go when commas set them apart
# ("However, the seller ...", "The landlord, however, has ...", "In addition, ..."), where nothing in the
# sentence governs them; a phrase only whole ("by contrast": its "by" is no time word there). Not one that
# makes the rest conditional or one option of several ("otherwise", "alternatively", "then", "instead"), that
# bounds it in time ("In the meantime, the buyer may not sell the shares" is no rule for good; "meanwhile")
# or that weighs it ("Overall, the claim succeeded": on some points it may have failed).
CONNECTIVES = frozenset(
    {
        ("however",), ("moreover",), ("furthermore",), ("additionally",), ("also",), ("indeed",),
        ("accordingly",), ("therefore",), ("thus",), ("hence",), ("notably",), ("importantly",), ("separately",),
        ("finally",), ("nevertheless",), ("nonetheless",), ("consequently",), ("firstly",), ("secondly",),
        ("thirdly",), ("lastly",), ("besides",), ("likewise",), ("similarly",), ("ultimately",), ("further",),
        ("in", "addition"), ("in", "particular"), ("in", "fact"), ("in", "any", "event"), ("as", "a", "result"),
        ("in", "contrast"), ("by", "contrast"), ("on", "the", "other", "hand"), ("that", "said"),
        ("for", "the", "avoidance", "of", "doubt"), ("by", "way", "of", "background"),
    }
)  # fmt: skip
# What sets a part of a sentence apart: a comma, semicolon, colon, dash (not a hyphen in a word) or bracket.
_BREAK = re.compile(r"[,;:()\[\]\u2013\u2014]|\s-\s")
# Words a citation is made of, besides its numbers and the short capitalised abbreviations of what it
# cites ("SPA", "LSA"): a capitalised word is not enough ("(Superseded 2025)" says how things stand).
CITATION_WORDS = frozenset(
    {
        "p", "pp", "no", "nos", "art", "arts", "cl", "cls", "s", "ss", "sec", "secs", "para", "paras", "sch",
        "clause", "clauses", "section", "sections", "page", "pages", "paragraph", "paragraphs", "article",
        "articles", "schedule", "schedules", "annex", "annexes", "exhibit", "exhibits", "tab", "rule", "rules",
        "appendix", "recital", "recitals", "part", "chapter", "order", "ruling", "judgment", "doc", "bundle", "ref", "dkt",
        "and", "at", "of", "the", "see", "cf", "fn", "n", "vol", "ch", "ibid", "id",
        # what a record cites by its kind and date: "(letter of 6 April 2027)"
        "letter", "letters", "email", "emails", "memo", "memorandum", "minutes", "call", "meeting", "dated",
        "transcript",
    }
)  # fmt: skip
# Tags a note opens with that only file it ("Red flag: ..."): such an opening may go. Any other opening
# before a colon stays ("Rumour:", "Brightline's position:", "To confirm with the client:").
FILING_TAGS = frozenset(
    {
        ("red", "flag"), ("update",), ("note",), ("nb",), ("fyi",), ("background",), ("summary",),
        ("for", "the", "file"), ("file", "note"), ("attendance", "note"), ("important",), ("key", "point"),
        ("action",),
    }
)  # fmt: skip
_ACRONYM = re.compile(r"[A-Z]{2,5}")
# Letters then digits in one word ("WS1", "PoC2"): a document named and numbered, not a place in one.
_NUMBERED_NAME = re.compile(r"[A-Za-z]+\d+")
# A page of a bundle ("B/233", "A1/23/4"): letters before the slashes, so no share ("1/3") reads as one.
_BUNDLE_PAGE = re.compile(r"[A-Z]{1,3}\d*(?:/\d+)+")
# A defined term as a bracket holds it (quotation marks made straight): "the" and words, or a quoted term; the
# small words its initials skip ("BIS" for "Bank for International Settlements").
_DEFINED = re.compile(r'the (?P<plain>[^"]+)|(?:the )?"(?P<quoted>[^"]+)"')
_LINKS = frozenset({"of", "and", "for", "&"})
# A possessive ("landlord's"): the word it ends is read without it.
POSSESSIVE = re.compile(r"['\u2019]s$")
# Verbs of an as-clause by which someone admits the rest: it holds whoever admits it ("as Castell concedes").
ADMISSIONS = frozenset(
    {"admit", "admits", "admitted", "concede", "concedes", "conceded", "acknowledge", "acknowledges", "acknowledged"}
)
# Verbs of an as-clause that vouch for the rest: what a record shows, records or proves holds ("the buyer paid,
# as the bank statement shows"), and so does what someone confirms or admits, as the clause has it ("Castell
# voted against, as the minutes confirm"; "..., as its own witness admits"): "as" takes the rest as true.
# Other verbs of saying stay ("as the buyer says" is the buyer's account): they are meaning words (meaning.py).
EVIDENTIAL_VERBS = frozenset(
    {
        "show", "shows", "showed", "shown", "record", "records", "recorded", "reflect", "reflects", "reflected",
        "evidence", "evidences", "evidenced", "prove", "proves", "proved", "proven", "demonstrate",
        "demonstrates", "demonstrated", "establish", "establishes", "established", "confirm", "confirms",
        "confirmed", "verify", "verifies", "verified", "corroborate", "corroborates", "corroborated",
    }
) | ADMISSIONS  # fmt: skip
# Records that keep what happened, whose showing an as-clause may vouch by ("as the ledger shows", "as the
# minutes confirm", "as the certificate of service confirms"): a closed list. Any other may accuse or report
# ("as the indictment shows", "as the statutory demand shows", "as the press coverage shows"), and a lawyer
# must see that it rests on that.
VOUCHING_RECORDS = frozenset(
    {
        "ledger", "ledgers", "minutes", "register", "registers", "certificate", "receipt", "receipts", "invoice",
        "invoices", "accounts", "transcript", "log", "logs", "records", "record", "deed", "contract", "lease",
        "agreement", "order", "judgment", "ruling", "timesheet", "timesheets", "recording", "footage", "docket",
        "postmark", "bank statement", "bank statements", "account statement",
    }
)  # fmt: skip
# What may stand before the record's name in a vouching as-clause: a word that says whose or how reliable the
# record is stays with it ("as the unaudited accounts show", "as the Seller's accounts show", "as the
# backdated minutes record").
_RECORD_DETERMINERS = frozenset({"the", "its", "their", "his", "her", "our"})
# Words that only add the sentence to what came before ("Castell also served a counter-notice"): they may go
# from a statement's main clause before any word that bends it (_fillers): in a clause that restricts a noun
# ("a tenant who also runs a business from the flat") the word narrows what the sentence speaks of, and after
# "only if" or "not" it is part of what is required or denied.
ADDITIVES = frozenset({"also"})
# Words that open a clause restricting the noun before them.
RELATIVES = frozenset({"who", "whom", "whose", "which", "that", "where", "whereby", "wherein"})
# A comma between words, not one inside a number ("EUR 256,580"); and the words that join a series.
_COMMA = re.compile(r",(?!\d)")
_SERIES = frozenset({"and", "or", "nor"})
# Meaning words (of the "time" class) that leave a context upward: what holds from, by, after or during a thing
# holds of it ("A lengthy statement from the buyer was filed"). Any other meaning word may bend the sentence.
UPWARD_TIME = frozenset({"from", "by", "after", "during", "upon", "since", "following", "through", "throughout"})
# The verbs that may follow a noun phrase as its sentence's first verb ("was", "has", "may").
AUXILIARIES = frozenset(
    {
        "is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "do", "does", "did", "will",
        "would", "shall", "should", "may", "might", "must", "can", "could",
    }
)  # fmt: skip
# What ends the noun phrase "a/an ..." that opens a sentence: a preposition, an auxiliary or a relative word.
FUNCTION_WORDS = AUXILIARIES | frozenset(
    {
        "of", "from", "to", "in", "on", "at", "for", "with", "by", "about", "against", "into", "onto", "under",
        "over", "between", "through", "within", "without", "after", "before", "during", "since", "until", "upon",
        "across", "among", "per", "via", "towards", "that", "which", "who", "whom", "whose", "and", "or", "but",
        "as",
    }
)  # fmt: skip
# Past participles that do not end in -ed ("has been paid", "held"): a label holding one states something
# ("Consent given", verify.py), and a part between commas holding one may be a clause, no description.
PARTICIPLES = frozenset(
    {
        "given", "taken", "written", "broken", "chosen", "proven", "forgotten", "hidden", "spoken", "stolen",
        "sworn", "drawn", "shown", "known", "grown", "thrown", "withdrawn", "begun", "done", "gone", "made",
        "sold", "held", "won", "lost", "paid", "met", "sent", "found", "told", "brought", "bought", "caught",
        "sought", "taught", "thought", "built", "dealt", "felt", "kept", "left", "lent", "meant", "spent",
        "struck", "understood", "set", "put", "cut", "let", "shut", "quit", "hit", "overturned", "seen",
    }
)  # fmt: skip
# Participles that say a thing came to be, was made or passed on ("A lengthy statement was filed"): what the
# descriptive words of an opening "a/an ..." may go before. A closed list: any other may say it did not come
# to be ("was dispensed with", "was omitted", "was bypassed", "was discouraged"), and then "A hearing was
# dispensed with" denies every hearing where "A formal hearing" did not.
HAPPENED = frozenset(
    {
        "filed", "served", "sent", "received", "signed", "issued", "lodged", "submitted", "produced", "delivered",
        "made", "held", "found", "enclosed", "prepared", "written", "disclosed", "provided", "obtained",
        "recorded", "exchanged", "circulated", "published", "given", "presented", "attached", "uploaded",
        "emailed", "posted", "handed", "drafted", "executed", "registered", "read", "shown",
    }
)  # fmt: skip
# Words that say only how long, how full or in what form a thing is ("A lengthy witness statement was filed"
# is a witness statement filed): the words before a noun that may go, a closed list. Any other may say what
# the thing is or how it stands, and no form tells them apart: a "trade secret claim" is no "secret claim", a
# "voidable transfer", a "defective notice", a "stale cheque" or a "handshake deal" is one a lawyer must know
# of; so a word not listed here stays.
DESCRIPTIVE = frozenset(
    {
        "brief", "short", "long", "lengthy", "detailed", "elaborate", "comprehensive", "thorough", "extensive",
        "concise", "succinct", "helpful", "useful", "handwritten", "typed", "typewritten", "printed", "formal",
        "urgent", "polite", "courteous", "terse", "angry", "strongly-worded",
    }
)  # fmt: skip

@dataclass(frozen=True)
class Unit:
    """Word positions the sentence's punctuation sets apart, and whether they may be removed together."""

    positions: tuple[int, ...]
    removable: bool


def _citation(sentence: str, words: list[Token], positions: list[int]) -> bool:
    """A bracketed aside that only cites: numbers, citation words and short abbreviations of what it cites,
    each such abbreviation followed by the number or citation word that says where ("SPA 5.2", "LSA cl. 4"):
    one on its own may say how things stand ("(STC, letter of 6 April 2027)": subject to contract). Not one a
    capitalised word follows inside the sentence with nothing but its closing bracket between: that aside is
    part of a name ("Greenfield Estates (2015) Limited"; not "If Northwind defaults (SPA 7.1), Castell may
    ..."); one that opens the sentence files it ("[Doc 14] The tenant paid ...")."""
    after = positions[-1] + 1
    if positions[0] and after < len(words) and words[after].text[:1].isupper():
        if not sentence[words[after - 1].end : words[after].start].strip(_CLOSERS + " "):
            return False

    def citation_word(i: int) -> bool:
        return words[i].key.rstrip(".") in CITATION_WORDS

    def cites(i: int) -> bool:
        # not a name with a number in it ("WS1": a witness statement, whose account the aside attributes)
        return (_is_fact(words[i]) and not _NUMBERED_NAME.fullmatch(words[i].text)) or citation_word(i)

    def abbreviation(i: int) -> bool:
        where = i + 1
        return (
            bool(_ACRONYM.fullmatch(words[i].text))
            and words[i].key not in STATE_WORDS
            and where in positions
            and not sentence[words[i].end : words[where].start].strip()
            and cites(where)
        )

    opened = words[positions[0] - 1].end if positions[0] else 0
    marked = any(mark in sentence[opened : words[positions[-1]].end] for mark in "\u00a7\u00b6")  # "(§ 4)", "(¶ 12)"
    return (
        any(any(c.isdigit() for c in words[i].text) for i in positions)
        and (marked or any(citation_word(i) or abbreviation(i) or _BUNDLE_PAGE.fullmatch(words[i].text) for i in positions))
        and not any(c in words[i].text for i in positions for c in "$€£¥%")
        and all(cites(i) or abbreviation(i) for i in positions)
    )


def _defined_term(sentence: str, words: list[Token], positions: list[int]) -> bool:
    """A bracketed aside that only gives the words before it a short name: "the" and capitalised words, or a
    term in quotation marks, that adds nothing to what those words say. Its words are among them ("The lease
    dated 4 July 2010 (the Lease)") or are their initials ("The share purchase agreement (the SPA)"), or
    it gives a side of a deal or a suit (PARTY_SIDES) to a name that opens its clause ('Northwind Holdings
    (the "Buyer") signed'): a name means one party whatever side it takes. Not a capacity ('Mr Roy (the
    Witness) signed the will': not as testator; "(the Receiver)", "(the Executor)"). Any other term may say which of the things before it are
    meant ('The lenders (the "Consenting Lenders") agreed': not all of them), which one ('The company (the
    "Parent")') or how things stand ('The price (the "Asking Price")'). It holds no fact, state word or -ed
    word, sits right after a word (no comma or colon between) and no capitalised word follows it (part of
    a name: "Greenfield Estates (the Second) Limited"). A bare capitalised word may say how things stand
    ("(Superseded)", "(Withdrawn)"), so it stays."""
    first, last = positions[0], positions[-1]
    if first == 0 or (last + 1 < len(words) and words[last + 1].text[:1].isupper()):
        return False
    opened = sentence.rfind("(", words[first - 1].end, words[first].start)
    closed = sentence.find(")", words[last].end)
    if opened < 0 or closed < 0:
        return False
    gap = sentence[words[first - 1].end : opened].strip()
    if gap and not (gap == "." and f"{words[first - 1].key}." in ABBREVIATIONS):  # "Acme Inc. (the Borrower)"
        return False
    if _bare_role(sentence[opened + 1 : closed], words, first - 1):
        return True  # "Northwind Holdings, Inc. (Buyer) and the shareholders of ..."
    term = _DEFINED.fullmatch(normalise_quote(sentence[opened + 1 : closed]))
    if not term:
        return False
    named = [words[i] for i in positions if words[i].key != "the" or i != first]
    if not all(
        not _is_fact(w)
        and w.key not in STATE_WORDS
        and not w.key.endswith("ed")
        and (term["quoted"] is not None or w.text[:1].isupper())
        for w in named
    ):
        return False
    def parts(ws: list[Token]) -> set[str]:
        return {part for w in ws for part in POSSESSIVE.sub("", w.key).split("-")}

    before = _phrase_before(sentence, words, first)
    keys = parts(before)
    if parts(named) <= keys:
        return True  # "(the Lease)" after "The lease dated 4 July 2010"
    if len(named) == 1 and _ACRONYM.fullmatch(named[0].text):
        initials = "".join(w.key[0] for w in before if w.key not in _LINKS)
        if initials.endswith(named[0].key):
            return True  # "(the SPA)" after "The share purchase agreement"
    # A name: capitalised words, not "The ..." and not one word opening the sentence ("Lenders (the
    # "Consenting Lenders") agreed" is a plural, capitalised as a sentence's first word), none of them
    # a word of the term (which would then name part of it).
    return (
        before[0].key not in ARTICLES
        and all(w.text[:1].isupper() for w in before)
        and (len(before) > 1 or first > 1)
        and not keys & {w.key for w in named}
        and all(w.key in PARTY_SIDES for w in named)  # not '(the Witness)', '(the Receiver)': a capacity
    )


# The sides of a deal or a suit ("Buyer", "Tenant", "Claimant"): a party so named is that party whatever side it
# takes. A closed list: any other role may say in what capacity someone acts or how they stand ("Mr Hale
# (Trustee) sold the land" is no sale of his own; "Jamie Hale (Minor)", "Mr Patel, a minor, signed"), and a
# lawyer must see it.
PARTY_SIDES = frozenset(
    {
        "buyer", "seller", "purchaser", "vendor", "lender", "borrower", "licensor", "licensee", "lessor", "lessee",
        "landlord", "tenant", "assignor", "assignee", "employer", "employee", "claimant", "defendant", "applicant",
        "respondent", "appellant", "plaintiff", "petitioner", "customer", "supplier", "contractor", "client",
    }
)  # fmt: skip


def _bare_role(inner: str, words: list[Token], before: int) -> bool:
    """Whether the bracket holds only a side (PARTY_SIDES, capitalised) given to the name that ends at `before`
    (_closes_name)."""
    inner = inner.strip()
    return inner[:1].isupper() and inner.casefold() in PARTY_SIDES and _closes_name(words, before)


def _phrase_before(sentence: str, words: list[Token], first: int) -> list[Token]:
    """The words before position `first`, back to the sentence's start or a mark that sets a part apart."""
    start = first - 1
    while start > 0 and not _BREAK.search(sentence[words[start - 1].end : words[start].start]):
        start -= 1
    return words[start:first]


def _appositive(sentence: str, words: list[Token], positions: list[int]) -> bool:
    """A name set between commas after the word it renames: "the buyer, Northwind Holdings, signed". The pair
    must be the sentence's only commas, and no "and", "or" or "nor" may follow it: in a series ("only the
    claimant, Ms Bell, and Mr Ali attended"; "the trustee, Mr Ali, the beneficiary and nobody else") the name
    may be an item of its own, and dropping it drops a person from what "only" or "except" says. The word
    before must be a noun of a role (_role): after any other word the name may be the subject of a clause
    whose verb is left out ("Aster paid £2m and, Birch, £500,000"; "Aster signed the lease, Birch, the
    guarantee")."""
    named = [i for i in positions if words[i].key not in ARTICLES]
    return (
        _between_commas(sentence, words, positions)
        and _role(words[positions[0] - 1])
        and bool(named)
        and all(words[i].text[:1].isupper() and not _is_fact(words[i]) for i in named)
    )


def _between_commas(sentence: str, words: list[Token], positions: list[int]) -> bool:
    """Whether the words at `positions` stand between the sentence's only pair of commas, inside it, with no
    "and", "or" or "nor" after them (a name or description in a series may be an item of its own)."""
    first, last = positions[0], positions[-1]
    if first == 0 or last == len(words) - 1:
        return False
    if len(_COMMA.findall(sentence)) != 2 or any(w.key in _SERIES for w in words[last + 1 :]):
        return False
    before = sentence[words[first - 1].end : words[first].start].strip()
    after = sentence[words[last].end : words[last + 1].start].strip()
    return before == "," and after.startswith(",")


def _closes_name(words: list[Token], i: int) -> bool:
    """Whether the word at `i` ends a name: capitalised, or a company form after a capitalised word ("Redwood
    Holdings plc"; not "The company", which describes)."""
    if words[i].key in DETERMINERS:
        return False
    if words[i].text[:1].isupper():
        return True
    return words[i].key.rstrip(".") in LEGAL_SUFFIXES and i > 0 and _closes_name(words, i - 1)


def _description(sentence: str, words: list[Token], positions: list[int]) -> bool:
    """A description set between commas after the name it describes, naming the side it takes: "Northwind, the
    buyer, signed the SPA"; "Halden Ltd, the seller's landlord, served notice". The commas as for a name
    (_appositive); the description a noun phrase by its form: it opens with a determiner or a possessive,
    holds no verb, fact or clause word, and ends in a side of a deal or a suit (PARTY_SIDES), so no clause set
    between commas reads as one ("Castell, the buyer fears, has not paid"), and no capacity or standing goes
    ("Halden, the seller's director, signed the guarantee": as director or in person; "Mr Patel, a minor,
    signed")."""
    first, last = positions[0], positions[-1]
    opening, end = words[first], words[last]
    return (
        len(positions) <= 8
        and _between_commas(sentence, words, positions)
        and _closes_name(words, first - 1)
        and (opening.key in DETERMINERS or bool(POSSESSIVE.search(opening.key)))
        and not any(
            _is_fact(w) or w.key in AUXILIARIES or w.key in RELATIVES or w.key in PARTICIPLES or w.key.endswith("ed")
            for w in words[first : last + 1]
        )
        and end.text.islower()
        and end.key in PARTY_SIDES
    )


# Endings of the nouns that name a role or a kind of body ("director", "guarantor", "trustee", "accountant",
# "agent", "company", "subsidiary"), and such nouns of other endings: what a name between commas renames.
ROLE_ENDINGS = ("er", "or", "ee", "ist", "ant", "ent", "ian", "ary", "ny")
ROLE_NOUNS = frozenset(
    {
        "landlord", "counsel", "firm", "bank", "trust", "son", "wife", "husband", "chief", "head", "expert",
        "judge", "witness", "client", "party",
    }
)  # fmt: skip


def _role(word: Token) -> bool:
    """Whether `word` is a noun of a role in lower case ("buyer", "claimant", "landlord"), not a function word."""
    key = POSSESSIVE.sub("", word.key)
    return (
        word.text.islower()
        and key not in FUNCTION_WORDS
        and key not in _SERIES
        and (key in ROLE_NOUNS or (key.endswith(ROLE_ENDINGS) and not key.endswith("s")))
    )


def _vouching(sentence: str, words: list[Token], positions: list[int]) -> bool:
    """An as-clause set apart by a comma whose verb vouches for the rest: "..., as the ledger shows." (or
    opening the sentence: "As the ledger records, ..."): "as", the record, the verb. The record one that
    keeps what happened (VOUCHING_RECORDS: not "as the indictment shows", which accuses), or the verb one
    of admitting ("as its own witness admits"). It holds no fact (a date in it stays) and no function word
    ("as in the records" is no clause of a record showing)."""
    first, last = positions[0], positions[-1]
    if len(positions) < 3 or words[first].key != "as" or words[last].key not in EVIDENTIAL_VERBS:
        return False
    if any(_is_fact(words[i]) or words[i].key in FUNCTION_WORDS for i in positions[1:-1] if i == first + 1 or words[i].key != "of"):
        return False  # "of" inside the record's name stays possible ("as the certificate of service confirms")
    source = next((i - 1 for i in positions[2:-1] if words[i].key == "of"), last - 1)
    head = POSSESSIVE.sub("", words[source].key)
    pair = f"{words[source - 1].key} {head}"  # "bank statement", not "witness statement"
    named = source - (2 if pair in VOUCHING_RECORDS else 1)  # the words before the record's name
    if words[last].key not in ADMISSIONS and (
        (head not in VOUCHING_RECORDS and pair not in VOUCHING_RECORDS)
        or any(words[i].key not in _RECORD_DETERMINERS for i in range(first + 1, named + 1))
    ):
        return False  # "as the indictment shows"; "as the unaudited accounts show", "as the Seller's accounts show"
    before = sentence[words[first - 1].end : words[first].start].strip() if first else ""
    after = sentence[words[last].end : words[last + 1].start if last + 1 < len(words) else None].strip()
    if first == 0:
        return after == ","
    return before == "," and (after in ("", ".", "!") if last == len(words) - 1 else after == ",")


def _statement(sentence: str) -> bool:
    """Whether the sentence states (not a question, not an exclamation)."""
    return sentence.rstrip(_CLOSERS + " ").endswith(".")


def _bent_from(words: list[Token], hard: set[int]) -> int:
    """The first position of a meaning word that may bend what follows it (any but the time words that keep a
    context upward); len(words) when there is none."""
    return min((i for i in hard if words[i].key not in UPWARD_TIME), default=len(words))


def _upward(sentence: str, words: list[Token], hard: set[int]) -> bool:
    """A statement (not a question) with no meaning word but the time words that keep a context upward."""
    return _statement(sentence) and _bent_from(words, hard) == len(words)


def _opening_end(sentence: str, words: list[Token]) -> int:
    """The position of the function word that ends the noun phrase "a/an ..." opening the sentence (0 when the
    sentence opens no such phrase, or the phrase does not end before a function word)."""
    if len(words) < 4 or words[0].key not in ("a", "an") or sentence[: words[0].start].strip():
        return 0
    if sentence[words[0].end : words[1].start] != " ":
        return 0  # "A. Lee", "A, B and C"
    end = next((i for i in range(1, len(words)) if words[i].key in FUNCTION_WORDS), 0)
    return end if end > 1 else 0


def _number_signs(sentence: str, words: list[Token]) -> set[int]:
    """Positions of "No." as the sign of a number ("Order No. 7", "claim no. 1234", "(Dkt. No. 45)"): "no" or
    "nos" with its full stop, or a capital "No" inside the sentence, before a number. Not the word that denies
    ("no 3-bedroom flats were let": no stop)."""
    found = set()
    for i, word in enumerate(words[:-1]):
        if word.key not in ("no", "nos") or not words[i + 1].text[:1].isdigit():
            continue
        if sentence[word.end : word.end + 1] == "." or (i and word.text[:1] == "N"):
            found.add(i)
    return found


def _saying_head(words: list[Token], end: int) -> set[int]:
    """The head of the opening "a/an ..." (which `end`, _opening_end, closes) when it is a noun of saying or
    knowing ("report", "claim", "note", "complaint" in "A brief expert report from X was served"): a meaning
    word as a verb ("X reports that"), the name of a thing after an article. It bends nothing around it, so
    the context may still be upward."""
    head = words[end - 1] if end else None
    return {end - 1} if head and head.text.islower() and meaning.class_of(head.text) == "hedge" else set()


def _modifiers(sentence: str, words: list[Token], hard: set[int], end: int) -> tuple[int, ...]:
    """The descriptive words (DESCRIPTIVE) that open the noun phrase "a/an ..." opening the sentence (which
    `end`, _opening_end, closes), in order ("lengthy" in "A lengthy witness statement from X was filed"),
    before its head (the last word before a function word) and any other word of it; () when the phrase does
    not end before a function word, a mark stands inside it, or the sentence is no single event."""
    if not end or _BREAK.search(sentence[words[0].end : words[end].start]) or not _episodic(words, end):
        return ()  # "A short, handwritten note": a mark inside the phrase would be left behind
    run = 1
    while run < end - 1 and words[run].key in DESCRIPTIVE and words[run].text.islower() and run not in hard:
        run += 1
    return tuple(range(1, run))


def _episodic(words: list[Token], start: int) -> bool:
    """Whether the first verb from `start` tells of one event that took place: "was/were" or "has/have/had been"
    and a participle of HAPPENED ("A lengthy statement from X was filed", "has been sent"). Not one that says
    it did not ("A formal hearing was dispensed with" is no "A hearing was dispensed with": a short one may
    have been held), and no other verb, which may read as a rule about every such thing ("A foreign judgment
    is enforceable after registration" says nothing of every judgment)."""
    verbs = [i for i in range(start, len(words)) if words[i].key in AUXILIARIES]
    if not verbs:
        return False
    at = verbs[0]
    if words[at].key in ("has", "have", "had") and at + 1 < len(words) and words[at + 1].key == "been":
        at += 1
    elif words[at].key not in ("was", "were"):
        return False
    return at + 1 < len(words) and words[at + 1].key in HAPPENED


# Words after "the" that pick out one thing among others: without the article the sentence speaks of any such
# thing ("the one director who voted against" is not "one director who voted against").
_PICKING = frozenset({"one", "same", "latter", "very", "said", "selfsame"})


def _article(words: list[Token], i: int, hard: set[int]) -> bool:
    """Whether the article at `i` may go, in an upward context (_fillers asks nowhere else, so never one
    inside a protected phrase, "in the event", nor one that opens a quantity, "a few of the invoices were
    paid": their words carry meaning, and the context is no upward one): not a capital "A" inside the
    sentence (a letter: "the A shares", "Schedule A"), not one after "and" or "or" (it opens a second noun
    phrase: "the chairman and the chief executive" are two people), and not one before a fact, a time word
    or a word that picks out one thing ("the following day", "the one director", "the latter"). "A" or "an"
    only opening the sentence before a word in lower case: elsewhere it says one of several ("Ms Ode is a
    director of Birch" is no "is director"), and before a name, someone so called ("A Mr Patel telephoned")."""
    if (i and words[i].text != words[i].text.lower()) or (i and words[i - 1].key in _SERIES):
        return False
    after = i + 1
    if words[i].key in ("a", "an") and (i or after >= len(words) or not words[after].text.islower()):
        return False
    return after < len(words) and not (after in hard or _is_fact(words[after]) or words[after].key in _PICKING)


def _outside(sentence: str, words: list[Token], i: int, hard: set[int]) -> bool:
    """Whether "also" at `i` stands in the main clause right before the word that bends it or the auxiliary
    that carries it ("Castell also failed to pay", "Castell also did not sign"): not in a part set apart by
    commas ("The defendant, also known as John Smith, ...": an alias), nor before anything else, where it may
    belong to a word the form cannot place ("also relied on the guarantee it had earlier released")."""
    after = i + 1
    return (
        i > 0
        and after < len(words)
        and not sentence[words[i - 1].end : words[i].start].strip()
        and (after in hard or words[after].key in AUXILIARIES)
    )


def _fillers(sentence: str, words: list[Token], hard: set[int], bending: set[int], modifiers: tuple[int, ...]) -> set[int]:
    """Positions that may go from a unit that is otherwise kept, in a statement: "also" in its main clause
    (before any relative word), in an upward context or before any word that bends the sentence, which it
    then stands outside (_outside: "Castell also failed to pay"; not "only if Castell also consents"); and,
    in an upward context only, articles and the descriptive words of an opening "a/an ..." (shorten() checks
    that the article still fits). Not every article may go (_article); and none where a word bends the
    sentence: without "the" a denial, a permission or a condition speaks of any such thing ("Castell did not
    sell the shares" is no "Castell did not sell shares"; "If the shares are sold" is no "If shares are
    sold"). `bending`: the meaning words that bend what follows them (all but a noun of saying that heads the
    opening "a/an ...")."""
    if not _statement(sentence):
        return set()
    bent = _bent_from(words, bending)
    main = next((i for i, w in enumerate(words) if w.key in RELATIVES), len(words))
    additives = {i for i, w in enumerate(words[: min(main, bent)]) if w.key in ADDITIVES}
    if bent < len(words):
        return {i for i in additives if _outside(sentence, words, i, hard)}
    return {i for i, w in enumerate(words) if w.key in ARTICLES and _article(words, i, hard)} | additives | set(modifiers)


def _modifier_refusal(words: list[Token], modifiers: tuple[int, ...], kept: list[int]) -> str:
    """Why the descriptive words of the opening "a/an ..." may not go as `kept` has them ("" when they may):
    the article must still fit the word after it ("a" before a consonant, "an" before a vowel)."""
    if not any(i not in kept for i in modifiers) or 0 not in kept:
        return ""
    following = next(i for i in kept if i > 0)
    if (words[following].key[:1] in "aeiou") != (words[0].key == "an"):
        return f"leaves '{words[0].text}' before a word it does not fit"
    return ""


# Words that open a noun phrase: articles, demonstratives and possessives (any word in 's). Not "no": a
# phrase it opens is denied ("no termination fee").
DETERMINERS = ARTICLES | frozenset({"this", "that", "these", "those", "its", "their", "his", "her", "our", "your"})
# Words that open a clause's subject: a connective between commas before one joins two clauses.
_SUBJECT_OPENERS = DETERMINERS | frozenset(
    {"my", "it", "he", "she", "they", "we", "i", "you", "there", "each", "every", "all", "both", "some", "any", "no"}
)


def _joins_clauses(words: list[Token], positions: list[int]) -> bool:
    """Whether a connective inside the sentence stands between two clauses ("The buyer paid, however, the
    seller shipped"): without it and its commas the first clause's verb takes the second's subject ("The
    buyer paid the seller shipped"). After a subject ("The landlord, however, has ...") a verb follows it."""
    following = positions[-1] + 1
    if positions[0] == 0 or following >= len(words):
        return False
    return words[following].key in _SUBJECT_OPENERS or words[following].text[:1].isupper()


def _set_apart(sentence: str, words: list[Token], positions: list[int], mark: str) -> bool:
    """Whether the words at `positions` are followed by `mark` (and, for a comma, open the sentence or follow
    one)."""
    first, last = positions[0], positions[-1]
    if last + 1 >= len(words):
        return False
    after = sentence[words[last].end : words[last + 1].start].strip()
    if mark != "," or after != ",":
        return after == mark
    return first == 0 or sentence[words[first - 1].end : words[first].start].strip() == ","


def units(sentence: str, words: list[Token], hard: set[int]) -> list[Unit]:
    """The sentence as units, in order, and which may go whole. Only parts whose form shows they add no
    claim to the rest may go: a bracketed aside that only cites ("(SPA 5.2, p. 54)") or only names ("(the
    SPA)"), a name set between commas after the word it renames, a connective set apart by commas
    ("However,", ", however,", "In addition,") and a note's filing tag ("Red flag:"). Anything else
    stays: a clause that may qualify the rest ("in the seller's view", "as to costs", "Rumour:"), or a
    clause of its own that may overrule it ("; the Court of Appeal discharged the injunction"). No list
    of words can tell those from an aside, so none is trusted to."""
    aside_of: dict[int, int] = {}
    depth, opened, asides = 0, 0, 0
    for position, char in enumerate(sentence):
        if char in "([":
            depth, opened = depth + 1, position if depth == 0 else opened
        elif char in ")]" and depth:
            depth -= 1
            if depth == 0:
                asides += 1
                aside_of.update({i: asides for i, w in enumerate(words) if opened < w.start and w.end <= position})
    found: list[list[int]] = []
    for i, word in enumerate(words):
        gap = sentence[words[i - 1].end : word.start] if i else ""
        same = found and aside_of.get(i) == aside_of.get(i - 1) and (aside_of.get(i) is not None or not _BREAK.search(gap))
        if same:
            found[-1].append(i)
        else:
            found.append([i])
    result = []
    for positions in found:
        if positions[0] == 0 and tuple(words[i].key for i in positions) in FILING_TAGS:
            removable = _set_apart(sentence, words, positions, ":")  # "Note:" files; it says nothing
        elif tuple(words[i].key for i in positions) in CONNECTIVES:
            removable = _set_apart(sentence, words, positions, ",") and not _joins_clauses(words, positions)
        elif any(i in hard for i in positions[:-1]):
            removable = False
        elif positions[-1] in hard:
            removable = _vouching(sentence, words, positions)  # its own verb may be a meaning word ("confirm")
        elif aside_of.get(positions[0]) is not None:
            removable = _citation(sentence, words, positions) or _defined_term(sentence, words, positions)
        else:
            removable = (
                _appositive(sentence, words, positions)
                or _description(sentence, words, positions)
                or _vouching(sentence, words, positions)
            )
        result.append(Unit(tuple(positions), removable=removable))
    return result


def _align(words: list[Token], proposal: list[Token], parts: list[Unit], fillers: set[int]) -> list[int] | None:
    """Positions of `words` kept to read as `proposal`: whole units removed or kept, `fillers` removed
    from kept units; None when the proposal cannot be made that way."""
    m = len(proposal)

    def within(unit: Unit, j: int) -> dict[int, list[int]]:
        # Every proposal position reachable after keeping `unit` from proposal position j (fillers may go).
        reach: dict[int, list[int]] = {j: []}
        for i in unit.positions:
            step: dict[int, list[int]] = {}
            for at, kept in reach.items():
                if at < m and words[i].key == proposal[at].key:
                    step.setdefault(at + 1, [*kept, i])
                if i in fillers:
                    step.setdefault(at, kept)
            reach = step
        return reach

    states: dict[int, list[int]] = {0: []}
    for unit in parts:
        step: dict[int, list[int]] = {}
        for j, kept in states.items():
            if unit.removable:
                step.setdefault(j, kept)
            for end, more in within(unit, j).items():
                step.setdefault(end, kept + more)
        states = step
    return states.get(m)


@dataclass(frozen=True)
class Shortening:
    """What is served for one selected sentence: `text`, and whether it is shortened (else the whole
    sentence). `refused` says why a proposal was not kept ("" when kept or none was made)."""

    text: str
    shortened: bool = False
    refused: str = ""


def _served(sentence: str, words: list[Token], kept: list[int]) -> str:
    runs: list[list[int]] = []
    for i in kept:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    spans = []
    for run in runs:
        start, end = words[run[0]].start, words[run[-1]].end
        while start > 0 and sentence[start - 1] in _OPENERS:
            start -= 1
        # A mark closing what the run opened ("the purchaser)", "are ready”") goes with it, and so does the
        # full stop of an abbreviation ("Inc.").
        while end < len(sentence) and sentence[end] in _CLOSERS and not _balanced(sentence[start:end]):
            end += 1
        if sentence[end : end + 1] == "." and f"{words[run[-1]].text.casefold()}." in ABBREVIATIONS:
            end += 1
        spans.append((start, end))
    text = ""
    for (start, end), following in zip(spans, [*spans[1:], None], strict=True):
        text += sentence[start:end]
        if following is not None:
            # The separator the sentence had after this run ("9:" before a removed article, "company," after
            # a removed aside), without what was removed; a pair that set the removed part apart goes with
            # it (", Northwind Holdings,"). The rest reads as the sentence punctuated it.
            gap = re.sub(r"\([^()]*\)|\[[^\[\]]*\]", " ", sentence[end : following[0]])
            marks = [c for c in _WORD.sub(" ", gap) if c in ",;:"]
            paired = len(marks) >= 2 and marks[0] == marks[-1]
            text += ("" if paired or not marks else marks[0]) + " "
    if kept[-1] == len(words) - 1:
        text += sentence[spans[-1][1] :].rstrip()  # " (?)." keeps its space; "Pike & Co." its one stop
    else:
        # The sentence's own final mark, or the one right after the last kept word when a filing aside follows
        # it ("The buyer completed on 3 June. [Bundle p. 45]").
        final = sentence.rstrip()[-1:]
        if final not in (".", "?", "!"):
            final = sentence[spans[-1][1] :].lstrip()[:1]
        text = text.rstrip(",;:\u2013\u2014-") + (final if final in (".", "?", "!") else "")
    if kept[0] != 0 and text[:1].islower():
        text = text[0].upper() + text[1:]
    return text


def _balanced(text: str) -> bool:
    plain = normalise_quote(text)
    return all(text.count(a) == text.count(b) for a, b in _PAIRS) and plain.count('"') % 2 == 0


def shorten(sentence: str, proposal: str) -> Shortening:
    """What to serve for `sentence` when a writer proposed `proposal` (may be "") as its shorter form."""
    whole = Shortening(sentence)
    proposal = " ".join(proposal.split())
    if not proposal or normalise_quote(proposal).casefold() == normalise_quote(sentence).casefold():
        return whole
    words, wanted = tokens(sentence), tokens(proposal)
    if len(wanted) < MIN_WORDS:
        return Shortening(sentence, refused="too short")
    hard = meaning.protected_positions([w.text for w in words]) - _number_signs(sentence, words)
    opening_end = _opening_end(sentence, words)
    bending = hard - _saying_head(words, opening_end)
    modifiers = _modifiers(sentence, words, bending, opening_end) if _upward(sentence, words, bending) else ()
    kept = _align(words, wanted, units(sentence, words, hard), _fillers(sentence, words, hard, bending, modifiers))
    if kept is None:
        return Shortening(sentence, refused=_why_not(sentence, words, wanted, hard))
    if len(kept) == len(words):
        return whole
    refusal = _modifier_refusal(words, modifiers, kept)
    if refusal:
        return Shortening(sentence, refused=refusal)
    text = _served(sentence, words, kept)
    if not _balanced(text):
        return Shortening(sentence, refused="leaves a bracket or quotation mark open")
    odd = sorted(set(_marks(sentence) - _marks(text)) - _PLAIN_MARKS)
    if odd:
        return Shortening(sentence, refused="removes a mark that may say how things stand: " + " ".join(odd))
    return Shortening(text, shortened=True)


# Marks between words that only punctuate: they may go with what they set apart. Any other mark may say how
# things stand or whether the rest holds ("[?] However, the licence is exclusive", "✗ Update: consent
# obtained", "~", "<", "*"): removing it states as settled what the record queries or denies.
_PLAIN_MARKS = frozenset(",;:.()[]\"'\u201c\u201d\u2018\u2019-\u2013\u2014&\u00a7\u00b6")


def _marks(text: str) -> Counter[str]:
    """The marks of `text` outside its words (a word keeps its own: "5.2", "INV-0057", "£")."""
    return Counter("".join(_WORD.split(text)).replace(" ", ""))


def _why_not(sentence: str, words: list[Token], wanted: list[Token], hard: set[int]) -> str:
    every = [Unit((i,), True) for i in range(len(words))]
    if _align(words, wanted, every, set()) is None:
        return "not the sentence with words removed (a word added, replaced or moved)"
    meaning_words = sorted({words[i].text for i in hard} - {w.text for w in wanted})
    alone = [Unit((i,), i not in hard) for i in range(len(words))]
    if meaning_words and _align(words, wanted, alone, set()) is None:
        return "removes a word that carries meaning: " + ", ".join(meaning_words)
    facts = sorted({w.text for w in words if _is_fact(w)} - {w.text for w in wanted})
    if facts:
        return "removes a fact (only an aside that only cites may take one with it): " + ", ".join(facts)
    return "removes a part that may qualify the rest (only connectives and filing tags set apart, citing"\
        " asides, defined terms and roles in brackets, names and descriptions between commas, vouching"\
        " as-clauses, 'also' before what bends the sentence and, in an upward context, articles and an opening"\
        " 'a/an' phrase's descriptive words, 'lengthy', 'brief', may go)"


def faithful(served: str, sentence: str) -> bool:
    """The property everything served keeps: `served` is `sentence`, or what `shorten` makes of it as a proposal."""
    if normalise_quote(served).casefold() == normalise_quote(sentence).casefold():
        return True
    result = shorten(sentence, served)
    return result.shortened and [t.key for t in tokens(result.text)] == [t.key for t in tokens(served)]
