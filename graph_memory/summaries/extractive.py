"""The extractive writer: no model, the narrative is assembled from the slice's own sentences, each its own quote."""

from __future__ import annotations

import re

from graph_memory.summaries import rulebook
from graph_memory.summaries.base import WriterResult
from graph_memory.summaries.context import ContextSlice, clip
from graph_memory.summaries.facts import extract_facts

# A sentence ends at . ! or ? followed by a capital, digit, quote or bracket, except after an abbreviation.
_NOT_AFTER = ("Inc.", "Corp.", "Ltd.", "Co.", "No.", "v.", "vs.", "St.", "Dr.", "Mr.", "Ms.", "Jan.", "Feb.", "Mar.",
              "Apr.", "Jun.", "Jul.", "Aug.", "Sep.", "Sept.", "Oct.", "Nov.", "Dec.")  # fmt: skip
_SENTENCE_END = re.compile(
    r"(?<=[.!?])" + "".join(rf"(?<!\b{re.escape(a)})" for a in _NOT_AFTER) + r"\s+(?=[A-Z0-9“\"(])"
)
EXTRACT_SENTENCE_MAX = 240


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]


class ExtractiveWriter:
    """No model: the narrative is assembled from the records' own sentences.

    Deterministic, free, offline. Every statement is a sentence of the item it
    cites (the first one of a record with its label, "Working note
    (2026-11-02): ..."), and its quote is that same span, so it can only
    repeat what the records say. Field facts (status, parties, deadlines,
    invoices, titles) are not written here: fields.py renders them.
    """

    name = "extractive"
    model = ""

    def write(self, context: ContextSlice) -> WriterResult:
        content = rulebook.empty_content()

        def add(section: str, text: str, source_id: str) -> None:
            if len(content[section]) < rulebook.MAX_STATEMENTS_PER_SECTION and text:
                clipped = clip(text, EXTRACT_SENTENCE_MAX)
                # clip() marks a cut with "…", which the record does not have: the quote ends before it.
                quote = clipped.removesuffix("…").rstrip()[: rulebook.MAX_QUOTE_CHARS]
                content[section].append({"text": clipped, "sources": [source_id], "quote": quote})

        header = context.get("case:header")
        if header is not None:
            for sentence in sentences(header.body)[:2]:
                add("status", sentence, header.source_id)
        for item in context.items:
            if item.kind not in ("note", "draft", "document"):
                continue
            first_page = item.kind != "document" or item.source_id.endswith("#p1")
            for index, sentence in enumerate(sentences(item.body)):
                facts = extract_facts(sentence)
                if sentence.endswith("?") and item.kind != "document":
                    add("open_questions", sentence, item.source_id)
                elif facts.money:
                    add("money", sentence, item.source_id)
                elif facts.dates or facts.months:
                    add("key_dates", sentence, item.source_id)
                elif index == 0 and first_page:
                    # The label makes it a contiguous span of the item: "Working note (...): <first sentence>".
                    add("recent_activity", f"{item.label}: {sentence}" if item.label else sentence, item.source_id)
        return WriterResult(content=content)
