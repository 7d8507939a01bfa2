"""The rulebook: how a case summary is written, its output shape, and how it reads as text.

Bump PROMPT_VERSION whenever the prompt or the schema changes; every saved
summary records the version it was written under.
"""

from __future__ import annotations

import json
from typing import Any

PROMPT_VERSION = "summary-v1"

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

_STATEMENT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["text", "sources"],
    "properties": {
        # Length is checked by verify.py (dropping one long statement, not the whole answer):
        # OpenAI's strict structured outputs reject minLength/maxLength.
        "text": {"type": "string"},
        "sources": {"type": "array", "minItems": 1, "maxItems": 8, "items": {"type": "string"}},
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

SYSTEM_PROMPT = f"""You write the internal orientation summary of ONE legal case for a law firm's AI assistant.

Rules (all of them are checked mechanically; a statement that breaks one is thrown away):
1. Use only facts stated in the case records below. Never invent or infer a date, amount, number,
   percentage, deadline, party, person or relationship. Do not compute new dates or totals.
2. Copy every date, amount and number exactly as the records write it.
3. Name only parties whose names appear in the records.
4. Every statement cites, in "sources", the ids of the records it rests on (the ids in square
   brackets, e.g. "deadline:signing" or "document:spa-v3#p2"). Cite nothing else.
5. Keep it short: one fact per statement, at most {MAX_STATEMENTS_PER_SECTION} statements per section,
   plain sentences. When the records are thin, write less; an empty section is fine.
6. Sections: status (where the case stands), parties (client, counterparties and their roles),
   key_dates (key dates and open deadlines), money (amounts, invoices, fees), recent_activity
   (latest documents, drafts and notes), open_questions (issues the records themselves leave open).

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
    """Plain text for reading: one heading per non-empty section, one line per statement with its sources."""
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
