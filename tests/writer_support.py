"""Model answers for the demo firm's case 2026-014, shaped like `rulebook.OUTPUT_SCHEMA` whatever it is now.

Each statement's text is a verbatim span of the record it cites, so it passes
verification under any rule set; when the schema asks for a `quote`, the same
span is the quote.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from graph_memory.models import AICall, CaseSummary
from graph_memory.summaries import rulebook
from graph_memory.summaries.service import summarize_case
from tests.openai_server import OpenAIServer, Reply


def stmt(text: str, *sources: str, quote: str | None = None) -> dict[str, Any]:
    statement: dict[str, Any] = {"text": text, "sources": list(sources)}
    properties = rulebook.OUTPUT_SCHEMA["properties"][rulebook.SECTIONS[0]]["items"]["properties"]
    if "quote" in properties:
        statement["quote"] = text if quote is None else quote
    return statement


def answer(**sections: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    content = rulebook.empty_content()
    content.update(sections)
    return content


HEADER = stmt(
    "Buy-side counsel to Northwind Holdings on the purchase of all shares of Castell Components GmbH"
    " for EUR 48,000,000",
    "case:header",
)
PRICE = stmt(
    "Purchase price: EUR 48,000,000, subject to a locked-box mechanism with a reference date of 31 December 2025",
    "document:spa-v3#p1",
)
CLAUSE_9 = stmt(
    "Clause 9: the Buyer may terminate if the antitrust clearance is not obtained by 2026-12-15",
    "document:spa-v3#p2",
)
ESCROW = stmt("Escrow of EUR 4,800,000 held for 18 months", "document:spa-v3#p2")
RED_FLAG = stmt(
    "Red flag: Castell's supply contract with Brightline Logistics LLC contains a change-of-control clause"
    " allowing Brightline to terminate on 30 days' notice",
    "document:dd-memo#p1",
)
DISCLOSURE = stmt("Sellers disclose the Brightline change-of-control clause against warranty 14.2", "draft:disc-letter")
CLOSING = stmt("Client wants to close before year end; price adjustment talks continue", "note:n1")
SIGNING = stmt("Deadline “Target signing”: due 2026-12-15, open", "deadline:signing")
INVOICE = stmt("Invoice INV-0057 issued 2026-10-01: USD 31,840.50, sent", "invoice:inv-57")

# Seven written statements, on the case's header, documents, draft and note.
RICH = answer(
    status=[HEADER],
    key_dates=[CLAUSE_9],
    money=[PRICE, ESCROW],
    recent_activity=[RED_FLAG, DISCLOSURE],
    open_questions=[CLOSING],
)
N_RICH = 7
# What gemma-3-270m answered for 2026-014 after a rich summary: two true statements.
WEAK = answer(status=[HEADER], open_questions=[CLOSING])


def texts(content: dict[str, Any]) -> set[str]:
    return {s["text"] for statements in content.values() if isinstance(statements, list) for s in statements}


def seed_previous(server: OpenAIServer, case_id: int, content: dict[str, Any] | None = None) -> CaseSummary:
    """A good summary first, then the case goes stale again; the log starts empty."""
    server.add_chat(Reply.json(RICH if content is None else content))
    summary = summarize_case(case_id=case_id)
    CaseSummary.objects.filter(pk=summary.pk).update(stale=True, stale_since=timezone.now(), generation=5)
    AICall.objects.all().delete()
    return CaseSummary.objects.get(pk=summary.pk)


def calls_logged() -> list[tuple[str, str, int, int, str]]:
    return list(
        AICall.objects.order_by("id").values_list("outcome", "error", "tokens_in", "tokens_out", "request_mode")
    )
