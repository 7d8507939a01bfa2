"""A generated long agreement with real clause structure, and questions whose answering page is known.

    pages, questions = long_agreement(articles=30, pages_per_article=13)   # ~400 pages

Each article opens a page with "ARTICLE n TITLE"; numbered sub-clauses ("5.2 Release of the
Escrow Amount") open paragraphs; the boilerplate between them is shared by every article,
and each article's own vocabulary is written into its paragraphs, so tf-idf has real work to
do. Each article holds one key clause, on a known page, that one question asks about.
Deterministic for a seed.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

# title, sub-clause headings, the article's own words, the key clause, the question about it.
TOPICS: tuple[tuple[str, tuple[str, ...], tuple[str, ...], str, str], ...] = (
    ("Definitions and Interpretation", ("Defined Terms", "Interpretation"), ("Business Day", "Accounts Date", "Group Company"),
     "Business Day means a day, other than a Saturday or Sunday, on which banks are open for general business in Frankfurt am Main.",
     "What counts as a business day?"),
    ("Sale and Purchase", ("Sale of the Shares", "Title"), ("Sale Shares", "Encumbrance", "full title guarantee"),
     "The Sellers shall sell the Sale Shares with full title guarantee and free from any Encumbrance.",
     "Are the sale shares sold free from encumbrances?"),
    ("Purchase Price", ("Amount of the Purchase Price", "Payment"), ("Purchase Price", "Base Consideration", "Payment Account"),
     "The Purchase Price for the Sale Shares is EUR 48,000,000, payable in cash at Completion into the Payment Account.",
     "What is the purchase price and how is it paid?"),
    ("Locked Box", ("Leakage", "Permitted Leakage"), ("Locked Box Date", "Leakage", "Permitted Leakage"),
     "The Sellers undertake that no Leakage has occurred since the Locked Box Date of 31 December 2025.",
     "What leakage undertaking do the sellers give since the locked box date?"),
    ("Escrow", ("Appointment of the Escrow Agent", "Release of the Escrow Amount"), ("Escrow Agent", "Escrow Amount", "Escrow Account"),
     "The Escrow Amount of EUR 4,800,000 shall be released to the Sellers eighteen months after Completion, save for amounts subject to a pending Claim.",
     "When is the escrow amount released to the sellers?"),
    ("Conditions", ("Conditions Precedent", "Long Stop Date"), ("Conditions Precedent", "Long Stop Date", "Satisfaction"),
     "If the Conditions Precedent are not satisfied by the Long Stop Date of 15 December 2026, either party may terminate this Agreement.",
     "What happens if the conditions precedent are not met by the long stop date?"),
    ("Antitrust Clearance", ("Merger Control Filings", "Hell or High Water"), ("Bundeskartellamt", "merger control", "remedies"),
     "The Buyer shall submit the merger control notification to the Bundeskartellamt within ten Business Days after signing.",
     "When must the merger control notification be filed with the Bundeskartellamt?"),
    ("Pre-Completion Covenants", ("Conduct of Business", "Access"), ("ordinary course", "capital expenditure", "Access"),
     "Until Completion the Sellers shall procure that the Company carries on its business in the ordinary course and incurs no capital expenditure above EUR 250,000.",
     "What capital expenditure limit applies before completion?"),
    ("Completion", ("Completion Date", "Completion Deliverables"), ("Completion Date", "Completion Deliverables", "resignation letters"),
     "Completion shall take place on the fifth Business Day after the last Condition Precedent is satisfied, when the Sellers deliver the resignation letters of the directors.",
     "When does completion take place?"),
    ("Warranties", ("Sellers' Warranties", "Disclosure"), ("Warranties", "Disclosure Letter", "Data Room"),
     "The Sellers warrant that each Warranty is true and accurate at signing, save as fairly disclosed in the Disclosure Letter.",
     "Against what are the warranties qualified by disclosure?"),
    ("Tax Covenant", ("Tax Indemnity", "Tax Returns"), ("Tax Liability", "Tax Authority", "Relief"),
     "The Sellers shall pay to the Buyer an amount equal to any Tax Liability of the Company arising before the Locked Box Date.",
     "Who bears tax liabilities arising before the locked box date?"),
    ("Specific Indemnities", ("Environmental Indemnity", "Litigation Indemnity"), ("Brightline", "indemnify", "Pending Litigation"),
     "The Sellers shall indemnify the Buyer against all losses arising from the Pending Litigation with Brightline Logistics LLC.",
     "Is there an indemnity for the Brightline litigation?"),
    ("Limitations on Liability", ("Financial Caps", "Time Limits"), ("de minimis", "basket", "liability cap"),
     "The aggregate liability of the Sellers for all Warranty Claims shall not exceed thirty per cent of the Purchase Price.",
     "What is the cap on the sellers' liability for warranty claims?"),
    ("Restrictive Covenants", ("Non-Compete", "Non-Solicitation"), ("Restricted Period", "Restricted Business", "solicit"),
     "For a Restricted Period of twenty-four months after Completion no Seller shall carry on a Restricted Business in Germany.",
     "How long is the non-compete after completion?"),
    ("Confidentiality", ("Confidential Information", "Permitted Disclosures"), ("Confidential Information", "Permitted Disclosure", "need to know"),
     "Each party shall keep the Confidential Information confidential for a period of five years after Completion.",
     "How long must confidential information be kept confidential?"),
    ("Announcements", ("Press Releases", "Required Announcements"), ("press release", "announcement", "stock exchange"),
     "No party shall make any press release concerning this Agreement without the prior written approval of the other parties.",
     "Can a party issue a press release about the deal?"),
    ("Employees and Pensions", ("Key Employees", "Pension Schemes"), ("Key Employee", "pension scheme", "works council"),
     "The Sellers shall procure that the works council is consulted before Completion in accordance with the Works Constitution Act.",
     "Does the works council have to be consulted?"),
    ("Intellectual Property", ("Registered IP", "Licences"), ("Registered IP", "patents", "source code"),
     "The Company is the sole legal and beneficial owner of the Registered IP, including the patents listed in Schedule 6.",
     "Who owns the registered IP and patents?"),
    ("Real Estate", ("Properties", "Leases"), ("Leasehold Property", "landlord", "rent review"),
     "The Leasehold Property at Industriestrasse 12 is held under a lease expiring on 30 June 2031 with a rent review every five years.",
     "When does the lease of the leasehold property expire?"),
    ("Environmental Matters", ("Permits", "Contamination"), ("Environmental Permit", "contamination", "remediation"),
     "The Company holds every Environmental Permit required for its operations and no contamination requiring remediation exists at the Properties.",
     "Are there contamination or remediation issues at the properties?"),
    ("Insurance", ("Policies", "Claims under Policies"), ("Insurance Policies", "insurer", "premium"),
     "All premiums due under the Insurance Policies have been paid and no insurer has refused any claim in the last three years.",
     "Have all insurance premiums been paid?"),
    ("Data Protection", ("Compliance with GDPR", "Data Breaches"), ("GDPR", "Personal Data", "data breach"),
     "The Company has complied with the GDPR and has suffered no data breach notifiable to a supervisory authority.",
     "Has the company suffered a notifiable data breach?"),
    ("Termination", ("Termination Rights", "Effect of Termination"), ("terminate", "Material Breach", "surviving provisions"),
     "The Buyer may terminate this Agreement by notice before Completion if a Seller commits a Material Breach.",
     "Can the buyer terminate for a material breach before completion?"),
    ("Material Adverse Change", ("MAC Definition", "MAC Termination"), ("Material Adverse Change", "EBITDA", "Group"),
     "A Material Adverse Change means any event reducing the consolidated EBITDA of the Group by more than fifteen per cent.",
     "How is a material adverse change defined?"),
    ("Guarantee", ("Parent Guarantee", "Guarantor Obligations"), ("Guarantor", "Northwind Holdings", "guarantee"),
     "Northwind Holdings, Inc. as Guarantor unconditionally guarantees the payment obligations of the Buyer under this Agreement.",
     "Who guarantees the buyer's payment obligations?"),
    ("W&I Insurance", ("The W&I Policy", "Subrogation"), ("W&I Policy", "subrogation", "retention"),
     "The Buyer has obtained the W&I Policy and the insurer shall waive any right of subrogation against the Sellers save for fraud.",
     "Does the W&I insurer have subrogation rights against the sellers?"),
    ("Assignment", ("No Assignment", "Permitted Assignment"), ("assign", "successor", "Permitted Assignee"),
     "The Buyer may assign the benefit of this Agreement to a Permitted Assignee within its group without consent.",
     "May the buyer assign the agreement?"),
    ("Costs", ("Own Costs", "Transfer Taxes"), ("costs", "notarial fees", "real estate transfer tax"),
     "The Buyer shall bear the notarial fees and any real estate transfer tax arising from the sale of the Sale Shares.",
     "Who pays the notarial fees and real estate transfer tax?"),
    ("Notices", ("Form of Notice", "Addresses"), ("notice", "email", "registered mail"),
     "Any notice under this Agreement shall be in writing and delivered by hand, by registered mail or by email to the addresses in Schedule 9.",
     "How must notices be given?"),
    ("Governing Law and Arbitration", ("Governing Law", "Arbitration"), ("German law", "DIS Arbitration Rules", "seat of arbitration"),
     "All disputes shall be finally settled under the DIS Arbitration Rules, the seat of arbitration being Frankfurt am Main.",
     "Where is the seat of arbitration?"),
)  # fmt: skip

BOILERPLATE = (
    "Nothing in this clause shall limit any other right or remedy of a party under this Agreement.",
    "References to a statute include that statute as amended or re-enacted from time to time.",
    "The parties shall act in good faith and use reasonable endeavours to give effect to this clause.",
    "Headings are for convenience only and do not affect the interpretation of this Agreement.",
    "Any obligation of a party not to do something includes an obligation not to permit it to be done.",
    "The words including and in particular are illustrative and do not limit the words before them.",
    "This clause is without prejudice to the rights of the parties accrued before the relevant date.",
    "Each party shall bear its own obligations under this clause unless otherwise agreed in writing.",
)
OWN = (
    "The provisions on the {t} apply to each Seller severally and not jointly.",
    "Any dispute about the {t} shall be notified in writing within twenty Business Days.",
    "The {t} referred to in this Article {n} shall be determined in accordance with Schedule {s}.",
    "Nothing in this Article {n} affects the {t} except as expressly provided.",
)


@dataclass(frozen=True)
class Question:
    text: str
    page: int  # the 1-based page holding the key clause
    clause: str  # the key clause, verbatim
    article: int


def long_agreement(*, articles: int = 30, pages_per_article: int = 13, seed: int = 7,
                   paragraphs_per_page: int = 6) -> tuple[list[str], list[Question]]:  # fmt: skip
    """The pages of a share purchase agreement and one question per article with its answering page."""
    rng = random.Random(seed)
    pages: list[str] = []
    questions: list[Question] = []
    for n in range(1, articles + 1):
        title, subs, own, key, question = TOPICS[(n - 1) % len(TOPICS)]
        key_page = 2 if pages_per_article > 1 else 1
        sub_pages = {1: 0, max(1, key_page): 1}
        for p in range(1, pages_per_article + 1):
            lines: list[str] = []
            if p == 1:
                lines.append(f"ARTICLE {n} {title.upper()}")
            if p in sub_pages and sub_pages[p] < len(subs):
                lines.append(f"{n}.{sub_pages[p] + 1} {subs[sub_pages[p]]}")
            for i in range(paragraphs_per_page):
                if p == key_page and i == 1:
                    lines.append(key)
                    continue
                sentence = rng.choice(OWN).format(t=rng.choice(own), n=n, s=rng.randint(1, 12))
                lines.append(f"{sentence} {rng.choice(BOILERPLATE)} {rng.choice(BOILERPLATE)}")
            lines.append(f"Page {len(pages) + 1}")
            pages.append("\n\n".join(lines))
        questions.append(Question(question, len(pages) - pages_per_article + key_page, key, n))
    return pages, questions


# --- how precise an answer is, defined from the question's own words -------------------------------

_HEADING_LINE = re.compile(r"^(?:ARTICLE \d+ .+|\d+\.\d+ .+)$", re.M)


def key_phrase(question: str, pages: list[str]) -> list[str]:
    """The question's key phrase: its content words that the document uses at all (stemmed like the index's
    words; "SPA", naming the document, or a word the document never uses cannot be quoted)."""
    from graph_memory.documents.terms import query_tokens, tokens

    used = set().union(*(tokens(p) for p in pages)) if pages else set()
    return [w for w in dict.fromkeys(query_tokens(question)) if w in used]


def holds_key_phrase(words: set[str], phrase: list[str]) -> bool:
    """At least half of the phrase's words, and at least two of them (both of a two-word phrase):
    "release" alone does not hold "escrow release"."""
    held = sum(w in words for w in phrase)
    return held >= max(min(2, len(phrase)), math.ceil(len(phrase) / 2))


def headings_above(pages: list[str], page: int, text: str) -> list[str]:
    """The article and clause headings a quote of `page` (1-based) sits under, read back through the pages."""
    current = pages[page - 1]
    before = "\n".join([*pages[: page - 1], current[: max(current.find(text[:40]), 0)]])
    lines = _HEADING_LINE.findall(before)
    article = next((h for h in reversed(lines) if h.startswith("ARTICLE")), "")
    clause = next((h for h in reversed(lines) if not h.startswith("ARTICLE")), "")
    article_number = article.split()[1] if article else ""
    return [article, *([clause] if clause.split(".")[0] == article_number else [])]


def quote_is_precise(question: str, pages: list[str], page: int, text: str) -> bool:
    """Whether the quote holds the question's key phrase, its own words and the headings above it together."""
    from graph_memory.documents.terms import tokens

    held = set(tokens(text)) | set(tokens(" ".join(headings_above(pages, page, text))))
    return holds_key_phrase(held, key_phrase(question, pages))
