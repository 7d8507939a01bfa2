"""Model answers for the demo firm's case 2026-014, as selections of its numbered sentences (summary-v3).

The statements below are what a saved summary holds for each selected
sentence (`kind` "sentence": the record's own words, citing it) or field fact
(`kind` "field"). A model answers with the ids of the sentences, which depend
on the slice it reads: `selection` turns a content of sentence statements
into that answer, looking each id up with `sentence_id` at the moment the
answer is queued.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from graph_memory.models import AICall, CaseSummary
from graph_memory.summaries import rulebook
from graph_memory.summaries.context import build_context
from graph_memory.summaries.rewrite import summarize_case
from graph_memory.summaries.sentences import number
from tests.openai_server import OpenAIServer, Reply


def sentence(text: str, source: str) -> dict[str, Any]:
    """A selected sentence as a saved summary holds it: served whole."""
    return {
        "text": text, "sources": [source], "quote": text, "kind": "sentence",
        "label": "", "point": 1, "shortened": False,
    }  # fmt: skip


def field(text: str, source: str) -> dict[str, Any]:
    """A field fact as fields.py renders it."""
    return {"text": text, "sources": [source], "kind": "field"}


def point(*ids: str, label: str = "", short: str = "") -> dict[str, Any]:
    """One point of a model's answer."""
    return {"ids": list(ids), "label": label, "short": short}


def answer(**sections: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Every section, empty unless given: a model's answer or a saved content."""
    content = rulebook.empty_content()
    content.update(sections)
    return content


def sentence_id(case_id: int, text: str) -> str:
    """The id case `case_id`'s numbered slice gives the sentence `text` now (exactly one must match)."""
    (found,) = [s.id for s in number(build_context(case_id=case_id)).sentences if s.text == text]
    return found


def selection(case_id: int, content: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The model answer that selects each sentence statement of `content` as its own point."""
    return answer(
        **{
            section: [point(sentence_id(case_id, s["quote"]), label=s.get("label", "")) for s in statements]
            for section, statements in content.items()
        }
    )


HEADER = sentence(
    "Buy-side counsel to Northwind Holdings on the purchase of all shares of Castell Components GmbH"
    " for EUR 48,000,000.",
    "case:header",
)
PRICE = sentence(
    "Purchase price: EUR 48,000,000, subject to a locked-box mechanism with a reference date of 31 December 2025.",
    "document:spa-v3#p1",
)
CLAUSE_9 = sentence(
    "Clause 9: the Buyer may terminate if the antitrust clearance is not obtained by 2026-12-15.",
    "document:spa-v3#p2",
)
ESCROW = sentence("Escrow of EUR 4,800,000 held for 18 months.", "document:spa-v3#p2")
RED_FLAG = sentence(
    "Red flag: Castell's supply contract with Brightline Logistics LLC contains a change-of-control clause"
    " allowing Brightline to terminate on 30 days' notice.",
    "document:dd-memo#p1",
)
DISCLOSURE = sentence(
    "Sellers disclose the Brightline change-of-control clause against warranty 14.2.", "draft:disc-letter"
)
CLOSING = sentence("Client wants to close before year end; price adjustment talks continue.", "note:n1")
# Field records: rendered by fields.py, never selected.
SIGNING = field("Deadline “Target signing”: due 2026-12-15, open.", "deadline:signing")
INVOICE = field("Invoice INV-0057 issued 2026-10-01: USD 31,840.50, sent.", "invoice:inv-57")

# Seven selected sentences, from the case's header, documents, draft and note.
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
    """A good summary first (selecting the sentences of `content`, RICH by default), then the case goes
    stale again; the log starts empty."""
    server.add_chat(Reply.json(selection(case_id, RICH if content is None else content)))
    summary = summarize_case(case_id=case_id)
    CaseSummary.objects.filter(pk=summary.pk).update(stale=True, stale_since=timezone.now(), generation=5)
    AICall.objects.all().delete()
    return CaseSummary.objects.get(pk=summary.pk)


def calls_logged() -> list[tuple[str, str, int, int, str]]:
    return list(
        AICall.objects.order_by("id").values_list("outcome", "error", "tokens_in", "tokens_out", "request_mode")
    )
