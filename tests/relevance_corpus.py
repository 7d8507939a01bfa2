"""Case-like texts and labelled queries for calibrating search's similarity floor.

Thirty matters across practice areas, each rendered as the local embedder sees
a case (`embeddings.summary_document`: title, parties, then a summary in the
extractive writer's layout), with three queries a lawyer might type for it:
one in other words, one short, one sharing some of its words. Twenty
off-domain queries match none. Used by bench/bench_search.py (the floor table
in docs/BENCHMARKS.md) and tests/vectors/test_search_floor.py (the configured floor
is the one the rule picks); `case_like_texts` varies the thirty into as many
case texts as a benchmark needs, for real embeddings at scale.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace

from graph_memory.vectors.embeddings import summary_document


@dataclass(frozen=True)
class Matter:
    title: str
    client: str
    counterparty: str
    description: str
    facts: tuple[str, ...]
    deadline: str
    queries: tuple[str, str, str]


MATTERS = (
    Matter("Harbor Bakery — commercial lease renewal dispute", "Harbor Bakery Ltd", "Quayside Properties Inc",
           "Tenant-side dispute with Quayside Properties over the renewal rent for the bakery premises.",
           ("Landlord proposes a 12% increase of the base rent on renewal.", "The lease gives the tenant an option to renew for five years."),
           "Response to renewal notice",
           ("our client's landlord wants far more money when the premises contract is extended",
            "shop lease renewal", "lease renewal rent increase")),
    Matter("Okoro eviction — residential holdover", "Grace Okoro", "Linden Court Apartments LLC",
           "Defence of a residential tenant against an eviction for holding over after the tenancy ended.",
           ("Landlord served a notice to quit on 2026-05-01.", "Tenant withheld payments because of mould and broken heating."),
           "Eviction hearing",
           ("an apartment renter is being thrown out by the building owner", "eviction defence",
            "residential tenant eviction notice")),
    Matter("Vantor / Kessel share purchase", "Vantor Group plc", "Kessel Werke GmbH",
           "Buy-side counsel on the purchase of all shares of Kessel Werke GmbH.",
           ("Purchase price EUR 62,000,000 subject to a locked-box mechanism.", "Sellers give warranties on tax and title to shares."),
           "Signing of the SPA",
           ("we represent the buyer taking over a German manufacturer", "company acquisition",
            "share purchase price and warranties")),
    Matter("Sunrise Foods — asset purchase of bakery chain", "Sunrise Foods Inc", "Dough & Co Holdings",
           "Acquisition of twelve bakery outlets and their equipment by way of an asset purchase.",
           ("Employees transfer with the business.", "Leases of the outlets must be assigned with landlord consent."),
           "Closing of the asset deal",
           ("buying the stores and ovens of another company rather than its stock", "asset deal",
            "asset purchase of bakery outlets")),
    Matter("Mensah v. Coldline Transport (wrongful dismissal)", "Coldline Transport Corp", "Kwame Mensah",
           "Defence of the employer against a claim of wrongful dismissal and retaliation.",
           ("The driver reported unsafe brakes two weeks before he was let go.", "He claims USD 280,000 in lost wages."),
           "Answer to the complaint",
           ("a worker says he was sacked for reporting a safety problem", "retaliation claim",
            "wrongful dismissal of a driver")),
    Matter("Warehouse staff overtime class action", "Pinewood Distribution LLC", "Class of hourly warehouse workers",
           "Defence of a class action alleging unpaid overtime for warehouse staff.",
           ("Plaintiffs say security screening time after shifts was not paid.", "About 1,400 current and former workers in the class."),
           "Class certification opposition",
           ("employees say they were not paid for extra hours", "unpaid overtime", "overtime class action warehouse")),
    Matter("Brandt non-compete enforcement", "Altamira Software Inc", "Lena Brandt",
           "Injunction to enforce a non-compete against a former sales director who joined a rival.",
           ("She signed a twelve-month restrictive covenant.", "She took a customer list when she left."),
           "Preliminary injunction hearing",
           ("stop our former executive from working for a competitor", "restrictive covenant",
            "non-compete injunction sales director")),
    Matter("Cardiolux v. Venamed (patent infringement)", "Cardiolux Medical AG", "Venamed Devices Inc",
           "Patent infringement action over a heart stent delivery system.",
           ("Claims 1 to 7 of the patent are asserted.", "Defendant argues the patent is invalid as obvious."),
           "Claim construction brief",
           ("a rival copied our client's invention for a cardiac implant", "patent lawsuit",
            "stent patent infringement")),
    Matter("Bluefin trademark opposition", "Bluefin Beverages Ltd", "Blu Fynn Drinks SRL",
           "Opposition to the registration of a confusingly similar drinks brand.",
           ("The marks look and sound alike for the same goods.", "Bluefin has used its mark since 2011."),
           "Opposition statement",
           ("someone registered a brand name that sounds like ours", "trademark dispute",
            "opposition to similar trademark")),
    Matter("Quill Analytics software licence audit", "Quill Analytics Inc", "Datavault Systems Corp",
           "Dispute over use of licensed software beyond the number of seats paid for.",
           ("Licensor's audit claims 300 unlicensed users.", "Licensor demands USD 1,200,000 in back fees."),
           "Audit response",
           ("the vendor says we installed their program on too many computers", "licence audit",
            "software licence breach seats")),
    Matter("Riverside Clinic — leaking roof construction defects", "Riverside Clinic Foundation", "Stonebridge Builders LLC",
           "Claim against the general contractor for defective roofing and water damage.",
           ("Water came through the new roof within six months.", "Repairs are estimated at USD 650,000."),
           "Expert report on defects",
           ("the builder did a bad job and rain gets into the new building", "construction defect",
            "defective roof contractor claim")),
    Matter("Alvarez v. FreshMart (slip and fall)", "FreshMart Stores Inc", "Maria Alvarez",
           "Defence of a supermarket against a personal injury claim after a fall on a wet floor.",
           ("The claimant broke her wrist in aisle 4.", "No warning sign was in place according to a witness."),
           "Deposition of the store manager",
           ("a customer got hurt tripping on a spill in a grocery shop", "premises liability",
            "slip and fall supermarket injury")),
    Matter("Estate of Harold Finch — contested will", "Rebecca Finch", "Thomas Finch",
           "Challenge to a late will on grounds of undue influence and lack of capacity.",
           ("The will was signed three weeks before death.", "The new will leaves the house to a carer."),
           "Probate court hearing",
           ("family fight over who inherits after the father died", "will contest", "contested will undue influence")),
    Matter("Kaplan custody and divorce", "Daniel Kaplan", "Miriam Kaplan",
           "Divorce proceedings with a dispute over custody of two children and the family home.",
           ("Both parents seek primary residence of the children.", "The marital home is valued at USD 900,000."),
           "Mediation on parenting plan",
           ("a husband and wife splitting up and fighting over the kids", "child custody",
            "divorce custody of children")),
    Matter("Northgate warehouse fire — insurance coverage", "Northgate Storage Inc", "Allied Mutual Insurance Co",
           "Coverage action after the insurer denied a claim for a warehouse destroyed by fire.",
           ("Insurer relies on an exclusion for faulty wiring.", "Loss of stock and building of USD 4,300,000."),
           "Coverage brief",
           ("the insurer refuses to pay after our building burned down", "insurance denial",
            "fire insurance claim coverage dispute")),
    Matter("Trelawney Hotels restructuring — creditor claims", "Trelawney Hotels plc", "Senior lenders' committee",
           "Advising the debtor on a restructuring plan and the treatment of creditor claims.",
           ("Debt of GBP 210,000,000 to be reduced by a debt-for-equity swap.", "Trade creditors to be paid in full."),
           "Plan sanction hearing",
           ("a hotel group that cannot pay its debts wants to reorganise", "insolvency restructuring",
            "restructuring plan creditors")),
    Matter("Corbel Bank v. Hayes (guarantee enforcement)", "Corbel Bank NA", "Patrick Hayes",
           "Enforcement of a personal guarantee after a borrower defaulted on a business loan.",
           ("The company stopped paying in March.", "The guarantee is capped at USD 2,000,000."),
           "Summary judgment motion",
           ("the bank wants the owner to pay personally for the company's unpaid loan", "loan guarantee",
            "enforce personal guarantee loan default")),
    Matter("Lumen Retail VAT assessment appeal", "Lumen Retail BV", "Tax and Customs Administration",
           "Appeal against a value added tax assessment on cross-border online sales.",
           ("The authority assessed EUR 3,100,000 plus penalties.", "The dispute concerns the place of supply rules."),
           "Notice of appeal",
           ("the tax office says we owe sales tax on internet orders abroad", "tax appeal", "VAT assessment appeal")),
    Matter("Medisync data breach investigation", "Medisync Health Inc", "Data Protection Authority",
           "Response to a regulator's investigation after patient records were exposed.",
           ("A misconfigured server exposed 80,000 records.", "Notification to patients was sent after 10 days."),
           "Reply to the regulator",
           ("hackers got hold of patient files and the privacy watchdog is asking questions", "data breach",
            "data protection investigation records exposed")),
    Matter("Pellucid / Oratek merger clearance", "Pellucid Chemicals SE", "Competition Commission",
           "Merger control filings for the combination of two specialty chemicals producers.",
           ("Combined market share of 38% in coatings.", "Remedies may include a divestiture of one plant."),
           "Phase 1 filing",
           ("getting the competition authority to approve joining two chemical firms", "antitrust review",
            "merger clearance filing")),
    Matter("MV Corinna cargo damage", "Eastwind Traders Ltd", "Corinna Shipping SA",
           "Claim for cargo damaged by seawater during an ocean voyage.",
           ("Containers of electronics arrived soaked in Rotterdam.", "The bill of lading limits the carrier's liability."),
           "Survey report",
           ("goods got wet on the ship and the carrier won't pay", "shipping claim", "cargo damage bill of lading")),
    Matter("Crispy Bird franchise termination", "Crispy Bird International Inc", "Owusu Restaurants LLC",
           "Termination of a franchise agreement for breach of brand standards.",
           ("Two failed inspections in 2026.", "The franchisee claims the termination was pretextual."),
           "Arbitration demand",
           ("ending the contract with a restaurant operator who used our brand badly", "franchise dispute",
            "franchise agreement termination")),
    Matter("Nordlys engineers — work visas", "Nordlys Energy AS", "Immigration Service",
           "Work visa applications for six engineers relocating to the US project office.",
           ("Petitions must be filed before the annual cap opens.", "Two engineers have prior visa refusals."),
           "Visa petition filing",
           ("bringing foreign staff over so they can legally work here", "work permits",
            "visa applications engineers")),
    Matter("Millbrook soil contamination cleanup", "Millbrook Paper Co", "State Environmental Agency",
           "Negotiating the cleanup order for solvent contamination of soil and groundwater.",
           ("Contamination from a former dry-cleaning site next door.", "Remediation is estimated at USD 7,500,000."),
           "Remediation plan",
           ("polluted ground under the factory that the government wants cleaned", "environmental cleanup",
            "soil contamination remediation order")),
    Matter("Investors v. Gridstone (securities fraud)", "Gridstone Energy Inc", "Pension fund investors",
           "Defence of a securities class action alleging misleading statements on reserves.",
           ("The share price fell 40% after a restatement.", "Plaintiffs allege the CFO knew the figures were wrong."),
           "Motion to dismiss",
           ("shareholders say the company lied about its numbers before the stock dropped", "securities litigation",
            "securities fraud class action")),
    Matter("Dr. Osei v. Daily Courier (defamation)", "Dr. Kofi Osei", "Daily Courier Media Ltd",
           "Libel claim over a newspaper article accusing a surgeon of fraud.",
           ("The article was published online and in print.", "The paper refuses to print a correction."),
           "Pre-action letter",
           ("a newspaper printed lies about our doctor client", "libel", "defamation newspaper article")),
    Matter("Zipwave e-scooter battery fires", "Zipwave Mobility Inc", "Injured riders",
           "Product liability claims after batteries in electric scooters caught fire.",
           ("Fourteen incidents reported, three with serious burns.", "A recall was issued in August."),
           "Recall report to the safety agency",
           ("people got burned when our vehicles' batteries exploded", "product liability",
            "scooter battery fire injuries")),
    Matter("Helix / Aurum joint venture deadlock", "Helix Mining Ltd", "Aurum Partners LP",
           "Arbitration over a deadlock between the two shareholders of a mining joint venture.",
           ("The board has not met since January.", "Each side has 50% of the voting shares."),
           "Statement of claim in arbitration",
           ("two co-owners of a company can't agree on anything and the business is stuck", "shareholder dispute",
            "joint venture deadlock arbitration")),
    Matter("Calder Tower office building purchase", "Westmark REIT", "Calder Tower Owner LLC",
           "Purchase of an office tower, with title review and financing.",
           ("Price USD 145,000,000.", "Title search found an old easement for a pedestrian bridge."),
           "Closing date",
           ("our client is buying a skyscraper full of offices", "real estate acquisition",
            "office building purchase closing")),
    Matter("Duarte asylum appeal", "Luis Duarte", "Immigration Appeals Board",
           "Appeal against refusal of an asylum claim.",
           ("The claimant fears persecution for political activity.", "The first decision doubted his credibility."),
           "Appeal hearing",
           ("a refugee whose protection request was turned down", "asylum", "asylum refusal appeal")),
)

OFF_DOMAIN = (
    "zebra giraffe quantum", "chocolate cake recipe", "football world cup results", "weather forecast tomorrow",
    "best hiking trails in the alps", "how to fix a flat bicycle tyre", "jazz concert tickets",
    "knitting patterns for beginners", "quantum chromodynamics lecture notes", "volcano eruption in iceland",
    "tropical fish aquarium care", "guitar chord progressions", "train timetable to the airport",
    "medieval castle architecture", "vegan lasagna", "marathon training plan", "stamp collecting",
    "mars rover photos", "origami crane folding", "chess opening theory",
)


def document(matter: Matter, index: int) -> str:
    """The text the embedder sees for this matter, laid out as the extractive writer lays out a summary."""
    key = f"2026-{100 + index:03d}"
    text = "\n".join(
        [
            "Status",
            f"- Case {key} \u201c{matter.title}\u201d: status Open, opened 2026-02-{1 + index % 27:02d}. [case:header]",
            f"- {matter.description} [case:header]",
            "",
            "Parties",
            f"- Client: {matter.client}. [client:c{index}]",
            f"- Counterparty: {matter.counterparty}. [counterparty:p{index}]",
            "",
            "Key dates and open deadlines",
            f"- Deadline \u201c{matter.deadline}\u201d: due 2027-01-{1 + index % 27:02d}, open. [deadline:d{index}]",
            "",
            "Facts",
            *(f"- {fact} [document:doc{index}#p{i + 1}]" for i, fact in enumerate(matter.facts)),
        ]
    )
    return summary_document(title=matter.title, parties=[matter.client, matter.counterparty], text=text)


def documents() -> list[str]:
    return [document(m, i) for i, m in enumerate(MATTERS)]


@dataclass(frozen=True)
class FloorRow:
    floor: float
    recall: float  # share of on-topic (query, matter) pairs at or above the floor
    other_matters: float  # share of (query, other matter) pairs at or above it: wrong-case hits
    off_domain: float  # share of off-domain queries with any hit


def floor_rows(on_topic: list[list[float]], off_domain: list[list[float]], floors: list[float]) -> list[FloorRow]:
    """on_topic[q][m]: similarity of matter-query q (query i of matter i // 3) to matter m; off_domain likewise."""
    rows = []
    for floor in floors:
        right = [row[qi // 3] >= floor for qi, row in enumerate(on_topic)]
        wrong = [s >= floor for qi, row in enumerate(on_topic) for m, s in enumerate(row) if m != qi // 3]
        off = [max(row) >= floor for row in off_domain]
        rows.append(FloorRow(floor, sum(right) / len(right), sum(wrong) / len(wrong), sum(off) / len(off)))
    return rows


# The rule that picks the floor: the lowest one at which no off-domain query has any hit and at most
# this share of (query, other matter) pairs passes; meaning-only recall is what it costs.
MAX_OTHER_MATTERS = 0.05


def pick_floor(rows: list[FloorRow]) -> FloorRow:
    for row in rows:
        if row.off_domain == 0 and row.other_matters <= MAX_OTHER_MATTERS:
            return row
    return rows[-1]


# --- Many case-like texts, for real embeddings at scale ---------------------------------------------

_SYLLABLES = ("ba", "ko", "ri", "mel", "dan", "tor", "vi", "sen", "ga", "lu", "mar", "pe", "zo", "fin", "ha", "nor")
_FORMS = ("Inc", "LLC", "Ltd", "GmbH", "plc", "Corp.", "S.A.", "B.V.")
_ACTIVITY = (
    "Client asked for an update on costs.", "Call with opposing counsel scheduled next week.",
    "Hearing adjourned to a later date.", "Documents received from the client and filed.",
    "Invoice sent for last month's work.", "Settlement talks have stalled.", "Partner review of the draft pending.",
    "Expert instructed on the technical questions.", "Court set a timetable for the next steps.",
    "Client approved the budget for the next phase.", "Witness statements are being prepared.",
    "Board minutes requested from the company.",
)


def _made_up_name(rng: random.Random) -> str:
    word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()
    return f"{word} {rng.choice(('Holdings', 'Group', 'Partners', 'Industries', 'Foods', 'Capital'))} {rng.choice(_FORMS)}"


def case_like_texts(count: int, *, seed: int = 5) -> list[str]:
    """`count` texts laid out as `document` lays out a case, varied from the thirty matters: other
    parties, other figures, one of its own facts and up to two of other matters (cases touch more
    than one subject), and one or two lines of ordinary case activity."""
    rng = random.Random(seed)
    pool = [f for m in MATTERS for f in m.facts]
    texts = []
    for i in range(count):
        base = MATTERS[i % len(MATTERS)]
        facts = [rng.choice(base.facts), *rng.sample(pool, rng.randint(0, 2)), *rng.sample(_ACTIVITY, rng.randint(1, 2))]
        facts = [re.sub(r"\d", lambda _: str(rng.randint(0, 9)), f) for f in facts]
        client = base.client if rng.random() < 0.2 else _made_up_name(rng)
        counterparty = base.counterparty if rng.random() < 0.2 else _made_up_name(rng)
        matter = replace(base, client=client, counterparty=counterparty, facts=tuple(facts))
        texts.append(document(matter, i))
    return texts
