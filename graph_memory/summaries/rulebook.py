"""The rulebook: how a case summary is written, its output shape, and how it reads as text.

Bump PROMPT_VERSION whenever the prompt or the schema changes; every saved
summary records the version it was written under. Since summary-v3 a writer
writes no prose: it *selects* numbered sentences of the case's own records
(sentences.py), optionally groups them under a short label and optionally
proposes a shorter form of one of them (deletion only, shorten.py).
verify.py turns the selection into statements that are the records' own
words. Facts the records hold as fields are rendered by fields.py and never
asked of the writer.
"""

from __future__ import annotations

import json
from typing import Any

PROMPT_VERSION = "summary-v3"
# Versions whose written statements are free text beside a quote, not the records' own sentences:
# served, marked `legacy`, until the nightly refresh rewrites them (first).
LEGACY_VERSIONS = frozenset({"summary-v1", "summary-v2"})

SECTIONS: tuple[str, ...] = ("status", "parties", "key_dates", "money", "recent_activity", "open_questions")
SECTION_TITLES = {
    "status": "Status",
    "parties": "Parties",
    "key_dates": "Key dates and open deadlines",
    "money": "Money",
    "recent_activity": "Recent activity",
    "open_questions": "Open questions",
}
MAX_POINTS_PER_SECTION = 6
MAX_IDS_PER_POINT = 4
# A label groups points ("Escrow", "Disclosure"); a short form is one sentence with words removed.
MAX_LABEL_CHARS = 40
MAX_SHORT_CHARS = 400
# The most characters an answer's string under each key needs (for the output-token cap, base.py).
STRING_CHARS = {"label": MAX_LABEL_CHARS, "short": MAX_SHORT_CHARS}
# Kept for the statements of older summaries (lint, admin) and the document answers' budget.
MAX_STATEMENT_CHARS = 400
MAX_QUOTE_CHARS = 300

# What the writer answers: per section, points; a point is the ids of the sentences it rests on, a
# label ("" for none) and a shorter form of one of its sentences ("" for none). A stored statement is
# {"text", "sources", "quote", "kind", ...}: kind "sentence" (a selected sentence, or its checked
# shortening; "quote" is the whole sentence), "field" (rendered by fields.py) or, in summaries
# written before summary-v3, "quote" (free text beside a verbatim quote: legacy).
_POINT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["ids", "label", "short"],
    "properties": {
        "ids": {"type": "array", "minItems": 1, "maxItems": MAX_IDS_PER_POINT, "items": {"type": "string"}},
        # Lengths are checked by verify.py (dropping a label or a short form, never the point):
        # OpenAI's strict structured outputs reject minLength/maxLength.
        "label": {"type": "string"},
        "short": {"type": "string"},
    },
}

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": list(SECTIONS),
    "properties": {
        section: {"type": "array", "maxItems": MAX_POINTS_PER_SECTION, "items": _POINT} for section in SECTIONS
    },
}

SYSTEM_PROMPT = f"""You choose what goes into the internal orientation summary of ONE legal case for a law firm's AI assistant.

You do not write sentences. The case's records are listed below; every sentence of them has an id in
square brackets, such as [s1]. You answer with the ids of the sentences worth reading, grouped into
points under sections. What the lawyer reads is those sentences, word for word, each citing its record.

The case's status, parties, deadlines, invoices and document titles are added from the records' fields
by the system: do not select for them. Choose what needs reading: where the matter stands, what the
documents, drafts and notes say, and the open questions the records themselves raise.

Each point is {{"ids": [...], "label": "...", "short": "..."}}:
1. "ids": one to {MAX_IDS_PER_POINT} sentence ids, exactly as listed below (e.g. "s1"). Only ids the records below
   have count; use each id once in the whole answer, and leave out what is not worth reading.
2. "label": "" or one or two words of the point's own sentences naming its topic (e.g. "escrow"). A label with a
   date, number, amount, name, or a word like not, may, must, only, if, before, all, some, alleged or paid
   is thrown away.
3. "short": "" or a shorter form of ONE of the point's sentences made ONLY by deleting, and only these:
   a citation in brackets ("(SPA 5.2, p. 54)"), a tag before a colon such as "Red flag:", a word like
   "However," set apart by commas, a name between commas after the word it renames, or "the"/"a"/"an".
   Never add, change or reorder a word; anything else deleted is refused and the whole sentence used.
   If unsure, leave "short" empty.
Sections: status (where the matter stands), parties (what a party did or wants), key_dates (dates the
documents and notes give), money (amounts the documents and notes give), recent_activity (what the latest
documents, drafts and notes say), open_questions (issues the records leave open). At most
{MAX_POINTS_PER_SECTION} points per section; an empty section is fine.

Answer with one JSON object and nothing else, shaped exactly like this JSON Schema:
{json.dumps(OUTPUT_SCHEMA, separators=(",", ":"))}"""


def build_messages(context_text: str) -> list[dict[str, str]]:
    """The chat messages for one case: the rulebook, then the case's records."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {
            "role": "user",
            "content": "Case records, each starting with its source id in square brackets, its sentences"
            " numbered under it:\n\n" + context_text + "\n\nAnswer with the selection as JSON.",
        },
    ]


def empty_content() -> dict[str, list[dict[str, Any]]]:
    return {section: [] for section in SECTIONS}


# Records whose title and date are a field fact (fields.py): a sentence selected from one reads on the
# same line as that fact.
TITLED_RECORDS = ("document:", "draft:", "note:")


def record_of(source_id: str) -> str:
    """The record a source id belongs to: a document's pages are one record."""
    return source_id.split("#", 1)[0]


def _joins(line: dict[str, Any], statement: dict[str, Any]) -> bool:
    """Whether `statement` reads on the same line as `line`: the next sentence of the same point, or a
    sentence of the record whose title and date (a field fact) the line states."""
    if statement.get("kind") != "sentence":
        return False
    head = line["statements"][0]
    if head.get("kind") == "sentence":
        return "point" in statement and head.get("point") == statement["point"]
    return (
        head.get("kind") == "field"
        and not statement.get("label")
        and head["sources"][0].startswith(TITLED_RECORDS)
        and all(record_of(s["sources"][0]) == record_of(head["sources"][0]) for s in line["statements"])
        and record_of(statement["sources"][0]) == record_of(head["sources"][0])
    )


def render_text(content: dict[str, Any]) -> str:
    """Plain text for reading: one heading per non-empty section, one line per point with its sources,
    each statement inside quotation marks (record text is delimited, so it never reads as the brief's own).

    A point's sentences share a line (after its label); so do a document's, draft's or note's title and
    date and the sentences selected from it in the same section, so no record is listed twice in a row.
    Rendered field facts and selected sentences read alike; `content` keeps which is which."""
    blocks = []
    for section in SECTIONS:
        lines: list[dict[str, Any]] = []
        for statement in content.get(section) or []:
            if lines and _joins(lines[-1], statement):
                lines[-1]["statements"].append(statement)
            else:
                lines.append({"statements": [statement]})
        if not lines:
            continue
        rendered = [SECTION_TITLES[section]]
        for line in lines:
            parts = line["statements"]
            # Each statement inside quotation marks: the records' words, delimited as data, never read as
            # the text around them (issue 32, finding 10); its sources follow as its citation.
            texts = [f"\u201c{s['text']}\u201d" for s in parts]
            if len(parts) > 1 and parts[0].get("kind") == "field":
                texts[0] = f"\u201c{str(parts[0]['text']).rstrip('.')}\u201d:"
            label = parts[0].get("label") or ""
            sources = list(dict.fromkeys(source for s in parts for source in s["sources"]))
            rendered.append(f"- {label + ': ' if label else ''}{' '.join(texts)} [{', '.join(sources)}]")
        blocks.append("\n".join(rendered))
    return "\n\n".join(blocks)
