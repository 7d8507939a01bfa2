"""A firm where the write-back guard has something to refuse (issue 31), and a generated corpus of notes.

Lena works on cases A and B; Theo is on A only (he may not open B); Hana owns
H, which neither may open, and whose records hold a canary. Each case has its
own client, counterparty, invoices, deadlines and a working note with a
distinctive sentence; A and S (a case Theo is on too) share their client with B
in `shared` worlds. `corpus(...)` writes notes into A: crossing ones carrying
one or more of B's facts among A's own, and clean ones quoting only A.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from rest_framework.authtoken.models import Token

from accounts.models import Firm, User
from graph_memory import services
from graph_memory.models import Node
from practice.models import Case
from tests.factories import (
    CaseFactory,
    ClientFactory,
    CounterpartyFactory,
    DeadlineFactory,
    FirmFactory,
    InvoiceFactory,
    NoteFactory,
    UserFactory,
)

SENTENCE_A = "The harbour authority confirmed in writing that berth seven stays closed until the dredging survey is finished."
SENTENCE_B = "The shipowner conceded during the mediation that the ballast tanks were never inspected before the voyage began."
CANARY = "QX-CANARY-7731"
CANARY_SENTENCE = "The sealed settlement with Oriel Fabrications pays 913,447 EUR on 19 August 2027."


@dataclass
class GuardWorld:
    firm: Firm
    lena: User  # on A and B
    theo: User  # on A only
    hana: User  # on H only
    admin: User
    a: Case
    b: Case
    h: Case
    s: Case  # Lena and Theo both on it: its facts cross nothing

    def node_id(self, case: Case) -> str:
        return str(Node.objects.get(kind="case", ref_id=case.pk).pk)

    def token(self, user: User) -> str:
        return Token.objects.get_or_create(user=user)[0].key


def build_guard_world(slug: str = "guard-law") -> GuardWorld:
    firm = FirmFactory(slug=slug)
    lena = UserFactory(firm=firm, username=f"{slug}-lena", name="Lena Ortiz")
    theo = UserFactory(firm=firm, username=f"{slug}-theo", name="Theo Marsh")
    hana = UserFactory(firm=firm, username=f"{slug}-hana", name="Hana Iwu")
    admin = UserFactory(firm=firm, username=f"{slug}-admin", role=User.Role.ADMIN)
    a = CaseFactory(
        firm=firm, owner=lena, team=[theo], key="2026-101", title="Harbour Berth Closure Claim",
        client=ClientFactory(firm=firm, name="Calloway Port Services Ltd"),
        counterparties=[CounterpartyFactory(firm=firm, name="Estuary Dredging GmbH")],
        description=f"Claim for lost berth revenue. {SENTENCE_A}", opened=dt.date(2026, 2, 3),
    )  # fmt: skip
    b = CaseFactory(
        firm=firm, owner=lena, key="2026-102", title="Ballast Tank Cargo Loss",
        client=ClientFactory(firm=firm, name="Brightwater Shipping Ltd"),
        counterparties=[CounterpartyFactory(firm=firm, name="Norrland Marine AB")],
        description="Cargo lost after ballast failure.", opened=dt.date(2026, 4, 9),
    )  # fmt: skip
    h = CaseFactory(
        firm=firm, owner=hana, key="2026-103", title="Oriel Settlement",
        client=ClientFactory(firm=firm, name="Oriel Fabrications plc"),
        description=f"Confidential. Reference {CANARY}.", opened=dt.date(2026, 5, 1),
    )  # fmt: skip
    s = CaseFactory(
        firm=firm, owner=lena, team=[theo], key="2026-104", title="Quayside Lease Renewal",
        client=ClientFactory(firm=firm, name="Pelham Quay Estates"), opened=dt.date(2026, 6, 1),
    )  # fmt: skip
    InvoiceFactory(case=a, number="INV-A-5501", amount=Decimal("48200.00"), currency="EUR", issued=dt.date(2027, 1, 12))
    InvoiceFactory(case=b, number="INV-B-7702", amount=Decimal("256580.00"), currency="EUR", issued=dt.date(2027, 3, 7))
    DeadlineFactory(case=a, title="Statement of claim", due=dt.date(2027, 2, 14))
    DeadlineFactory(case=b, title="Expert report on ballast", due=dt.date(2027, 5, 21))
    NoteFactory(case=a, text=f"Call with the harbour master. {SENTENCE_A}")
    NoteFactory(case=b, text=f"Mediation day one. {SENTENCE_B} Surveyor file ref SV-88213.")
    NoteFactory(case=h, text=CANARY_SENTENCE)
    InvoiceFactory(case=h, number=CANARY, amount=Decimal("913447.00"), currency="EUR", issued=dt.date(2027, 8, 19))
    services.graph_rebuild_firm(firm_id=firm.pk)
    return GuardWorld(firm, lena, theo, hana, admin, a, b, h, s)


# --- the corpus ----------------------------------------------------------------------

# Facts of B, each as a note may write it (several formats of one fact).
B_FACTS = {
    "party": ["Brightwater Shipping", "BRIGHTWATER SHIPPING LTD", "Norrland Marine AB", "Norrland Marine",
              "Brightwater Shipping's", "Brightwater Shipping Limited"],
    "case": ["Ballast Tank Cargo Loss", "ballast tank cargo loss"],
    "reference": ["2026-102", "matter 2026-102"],
    "identifier": ["INV-B-7702", "inv-b-7702", "SV-88213"],
    "amount": ["EUR 256,580", "256.580 EUR", "€256,580.00", "256580 euros", "EUR 256.580,00", "256 580 €"],
    "date": ["7 March 2027", "2027-03-07", "March 7, 2027", "21 May 2027", "21/05/2027", "2027/03/07", "7th Mar 2027"],
    "run": [
        "the shipowner conceded during the mediation that the ballast tanks were never inspected",
        "ballast tanks were never inspected before the voyage began",
        "The Shipowner conceded, during the mediation, that the ballast tanks were never inspected.",
    ],
}
# A's own facts, in the same formats.
A_FACTS = [
    "Calloway Port Services", "Estuary Dredging GmbH", "Harbour Berth Closure Claim", "2026-101", "INV-A-5501",
    "EUR 48,200", "48.200 EUR", "12 January 2027", "2027-02-14", "14/02/2027", "3 February 2026",
    "the harbour authority confirmed in writing that berth seven stays closed",
    "berth seven stays closed until the dredging survey is finished",
]  # fmt: skip
FILLER = [
    "Lena asked me to keep this.", "Follow up next week.", "Summary of the call:", "Points to check with the client:",
    "We discussed the timetable and the next steps.", "Agreed to send a letter.", "Open question on costs.",
    "The team will review the draft.", "Noted for the file.", "Action items below.",
]  # fmt: skip


def _note(rng: random.Random, parts: list[str]) -> str:
    rng.shuffle(parts)
    out = []
    for part in parts:
        out.append(rng.choice(FILLER))
        out.append(f"{part}.")
    return " ".join(out)


def corpus(seed: int, n_crossing: int, n_clean: int) -> tuple[list[tuple[str, str]], list[str]]:
    """(kind, note text) of crossing notes (one or two B facts among 0-3 of A's), and clean notes (1-4 of A's)."""
    rng = random.Random(seed)
    crossing = []
    kinds = list(B_FACTS)
    for i in range(n_crossing):
        kind = kinds[i % len(kinds)]
        parts = [rng.choice(B_FACTS[kind])]
        if rng.random() < 0.3:
            parts.append(rng.choice(B_FACTS[rng.choice(kinds)]))
        parts += rng.sample(A_FACTS, rng.randint(0, 3))
        crossing.append((kind, _note(rng, parts)))
    clean = [_note(rng, rng.sample(A_FACTS, rng.randint(1, 4))) for _ in range(n_clean)]
    return crossing, clean


def note_body(text: str, title: str = "Kept from the conversation") -> dict[str, Any]:
    return {"title": title, "text": text, "origin": {"conversation_id": "conv-31", "message_ids": ["m-1"]}}


# --- a generated firm and corpus: facts drawn at random, written in every format ------------------

_SYLLABLES = ["bra", "vel", "tor", "mi", "qua", "shen", "lo", "dri", "ka", "mon", "zel", "pha", "ru", "sto", "nev"]
_FORMS = ["Ltd", "GmbH", "Inc.", "LLP", "S.A.", "plc", "AB", "B.V."]
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]  # fmt: skip
_VOCABULARY = (
    "agreement warehouse supplier delivered notice breach payment tribunal counsel witness contract clause "
    "shipment invoice damages inspection tenant landlord premises lease arbitration settlement offer letter "
    "meeting hearing evidence report expert valuation escrow completion buyer seller shares warranty claim "
    "indemnity liability insurer policy board minutes director resolution employee termination salary bonus "
    "pension schedule annex amendment deadline extension court order filing appeal judgment costs interest "
    "rate loan lender borrower security guarantee default notice cure period audit accounts revenue margin"
).split()
_GLUE = "the a that was were not never had has before after during until with without of in on for".split()


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_VOCABULARY if i % 2 == 0 else _GLUE) for i in range(rng.randint(12, 18))]
    return " ".join(words).capitalize() + "."


@dataclass
class CaseFacts:
    case: Case
    names: list[str]
    reference: str
    invoice: str
    amount: Decimal
    day: dt.date
    sentences: list[str]


def amount_formats(amount: Decimal) -> list[str]:
    whole = int(amount)
    return [f"EUR {whole:,}", f"{whole:,}".replace(",", ".") + " EUR", f"€{whole:,}.00", f"USD {whole:,}", f"{whole} euros"]


def date_formats(day: dt.date) -> list[str]:
    month = _MONTHS[day.month - 1]
    return [f"{day.day} {month} {day.year}", day.isoformat(), f"{month} {day.day}, {day.year}",
            f"{day.day:02d}/{day.month:02d}/{day.year}", f"{day.day} {month[:3]} {day.year}"]  # fmt: skip


def fact_texts(facts: CaseFacts, rng: random.Random) -> list[tuple[str, str]]:
    """(kind, text) for each fact of a case, each written in one of its formats."""
    words = rng.choice(facts.sentences[:3]).rstrip(".").split()  # the fourth is cut into a deadline title
    start = rng.randint(0, len(words) - 9)
    run = " ".join(words[start : start + rng.randint(9, len(words) - start)])
    return [
        ("party", rng.choice(facts.names)), ("reference", facts.reference), ("identifier", facts.invoice),
        ("amount", rng.choice(amount_formats(facts.amount))), ("date", rng.choice(date_formats(facts.day))),
        ("run", run), ("case", facts.case.title),
    ]  # fmt: skip


def build_generated_world(seed: int, *, crossing_cases: int = 4) -> tuple[GuardWorld, CaseFacts, list[CaseFacts]]:
    """A guard world plus a target case T (Lena and Theo on it) and `crossing_cases` cases of Lena's alone,
    every one with generated names, numbers, amounts, dates and sentences."""
    rng = random.Random(seed)
    world = build_guard_world(slug=f"gen-{seed}")
    made = []
    for i in range(crossing_cases + 1):
        client = f"{_word(rng)} {_word(rng)} {rng.choice(_FORMS)}"
        counterparty = f"{_word(rng)} {rng.choice(_FORMS)}"
        sentences = [_sentence(rng) for _ in range(4)]
        case = CaseFactory(
            firm=world.firm, owner=world.lena, team=[world.theo] if i == 0 else [],
            key=f"2027-{seed % 100:02d}{i:02d}", title=f"{_word(rng)} {rng.choice(_VOCABULARY).capitalize()} Dispute",
            client=ClientFactory(firm=world.firm, name=client),
            counterparties=[CounterpartyFactory(firm=world.firm, name=counterparty)],
            description=sentences[0], opened=dt.date(2026, 1, 1) + dt.timedelta(days=rng.randint(0, 300)),
        )  # fmt: skip
        amount = Decimal(rng.randint(10_000, 999_999))
        day = dt.date(2027, 1, 1) + dt.timedelta(days=rng.randint(0, 700))
        invoice = f"INV-{rng.randint(1000, 9999)}-{i}"
        InvoiceFactory(case=case, number=invoice, amount=amount, currency="EUR", issued=day)
        NoteFactory(case=case, text=" ".join(sentences[1:3]))
        DeadlineFactory(case=case, title=sentences[3][:80], due=day + dt.timedelta(days=30))
        made.append(CaseFacts(case, [client, counterparty], case.key, invoice, amount, day, sentences))
    services.graph_rebuild_firm(firm_id=world.firm.pk)
    return world, made[0], made[1:]


def generated_corpus(
    seed: int, target: CaseFacts, others: list[CaseFacts], n_crossing: int, n_clean: int
) -> tuple[list[tuple[str, str]], list[str]]:
    """Crossing notes: one fact of a crossing case among 0-3 of the target's and the filer's own words;
    clean notes: 1-4 of the target's facts and the filer's own words (sentences no record holds)."""
    rng = random.Random(seed)
    crossing = []
    for i in range(n_crossing):
        kind, text = fact_texts(rng.choice(others), rng)[i % 7]
        own = [t for _, t in rng.sample(fact_texts(target, rng), rng.randint(0, 3))]
        crossing.append((kind, _note(rng, [text, *own, _sentence(rng)])))
    clean = [
        _note(rng, [t for _, t in rng.sample(fact_texts(target, rng), rng.randint(1, 4))] + [_sentence(rng)])
        for _ in range(n_clean)
    ]
    return crossing, clean
