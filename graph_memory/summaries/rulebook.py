"""The rulebook: how a case summary is written, its output shape, and how it reads as text.

Bump PROMPT_VERSION whenever the prompt or the schema changes; every saved
summary records the version it was written under. The model writes only
narrative statements, each with a verbatim quote from one cited record
(verify.py checks it); facts the records hold as fields are rendered by
fields.py and never asked of the model.
"""

from __future__ import annotations

import json
from typing import Any

PROMPT_VERSION = "summary-v2"

SECTIONS: tuple[str, ...] = ("status", "parties", "key_dates", "money", "recent_activity", "open_questions")
SECTION_TITLES = {
    "status": "Status",
    "parties": "Parties",
    "key_dates": "Key dates and open deadlines",
    "money": "Money",
    "recent_activity": "Recent activity",
    "open_questions": "Open questions",
}
MAX_STATEMENTS_PER_SECTION = 6
MAX_STATEMENT_CHARS = 400
MAX_QUOTE_CHARS = 300

# What the model writes. A stored statement has the same keys plus "kind": "quote"
# (a verified written statement) or "kind": "field" (rendered from the records by
# fields.py, with no quote).
_STATEMENT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["text", "sources", "quote"],
    "properties": {
        # Lengths are checked by verify.py (dropping one long statement, not the whole answer):
        # OpenAI's strict structured outputs reject minLength/maxLength.
        "text": {"type": "string"},
        "sources": {"type": "array", "minItems": 1, "maxItems": 8, "items": {"type": "string"}},
        "quote": {"type": "string"},
    },
}

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": list(SECTIONS),
    "properties": {
        section: {"type": "array", "maxItems": MAX_STATEMENTS_PER_SECTION, "items": _STATEMENT} for section in SECTIONS
    },
}

SYSTEM_PROMPT = f"""You write the narrative of the internal orientation summary of ONE legal case for a law firm's AI assistant.

What the records hold as fields is added to the summary from the records themselves, so do NOT restate it:
the case's status and opening date, the client and the counterparties with their roles, each deadline's
title, due date and open/done state, each invoice's number, date, amount and state, document titles and dates.
Write only what needs reading: where the matter stands, what the documents, drafts and notes say, and the
open questions the records themselves raise.

Rules (all of them are checked mechanically; a statement that breaks one is thrown away):
1. Every statement has "text", "sources" and "quote". "quote" is copied character for character from ONE
   record (at most {MAX_QUOTE_CHARS} characters, one contiguous span, no "..."), and "sources" cites that
   record by the id in square brackets (e.g. "note:n1" or "document:spa-v3#p2").
2. The text says only what its quote says. Every date, amount, number, percentage, identifier and name in
   the text is in the quote; so is every word of state (paid, unpaid, open, done, met, missed, granted,
   denied, signed, filed, served, settled, agreed, closed ...) and every negation ("not", "no", "never").
   Most other words of the text come from the quote too. Never combine facts from two records.
3. Never invent or infer a date, amount, number, deadline, party, person, event or relationship, and do
   not compute dates or totals. Call a party client or counterparty only as the records do.
4. One fact per statement, plain sentences, at most {MAX_STATEMENTS_PER_SECTION} statements per section,
   no statement repeated. When the records are thin, write less; an empty section is fine.
5. Sections: status (where the matter stands), parties (what the records say a party did or wants),
   key_dates (dates the documents and notes give), money (amounts the documents and notes give),
   recent_activity (what the latest documents, drafts and notes say), open_questions (issues the records
   themselves leave open).

Answer with one JSON object and nothing else, shaped exactly like this JSON Schema:
{json.dumps(OUTPUT_SCHEMA, separators=(",", ":"))}"""


def build_messages(context_text: str) -> list[dict[str, str]]:
    """The chat messages for one case: the rulebook, then the case's records."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {
            "role": "user",
            "content": "Case records, one per line, each starting with its source id in square brackets:\n\n"
            + context_text
            + "\n\nWrite the summary as JSON.",
        },
    ]


def empty_content() -> dict[str, list[dict[str, Any]]]:
    return {section: [] for section in SECTIONS}


def render_text(content: dict[str, Any]) -> str:
    """Plain text for reading: one heading per non-empty section, one line per statement with its sources.

    Rendered field facts and quoted statements read alike; `content` keeps which is which."""
    blocks = []
    for section in SECTIONS:
        statements = content.get(section) or []
        if not statements:
            continue
        lines = [SECTION_TITLES[section]]
        for statement in statements:
            lines.append(f"- {statement['text']} [{', '.join(statement['sources'])}]")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
