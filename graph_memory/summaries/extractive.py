"""The extractive writer: no model, the summary is assembled from the slice itself."""

from __future__ import annotations

import re

from graph_memory.summaries import rulebook
from graph_memory.summaries.base import WriterResult
from graph_memory.summaries.context import ContextSlice, clip
from graph_memory.summaries.verify import extract_facts

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
    """No model: the summary is assembled from the slice's own fields and sentences.

    Deterministic, free, offline. Each statement is the text of the item it
    cites (or one of its sentences), so it can only repeat what the records say.
    """

    name = "extractive"
    model = ""

    def write(self, context: ContextSlice) -> WriterResult:
        content = rulebook.empty_content()

        def add(section: str, text: str, source_id: str) -> None:
            if len(content[section]) < rulebook.MAX_STATEMENTS_PER_SECTION and text:
                content[section].append({"text": clip(text, EXTRACT_SENTENCE_MAX), "sources": [source_id]})

        header = context.get("case:header")
        if header is not None:
            first = sentences(header.text)
            # "Case KEY: Title." + "Status: ..." + "Opened: ..." then the description's sentences.
            add("status", " ".join(first[:3]), header.source_id)
            for sentence in first[3:5]:
                add("status", sentence, header.source_id)
        for item in context.items:
            if item.kind in ("client", "counterparty"):
                add("parties", item.text, item.source_id)
            elif item.kind == "deadline":
                add("key_dates", item.text, item.source_id)
            elif item.kind == "invoice":
                add("money", item.text, item.source_id)
        records = [i for i in context.items if i.kind in ("note", "draft", "document")]
        used: set[str] = set()
        for item in records:
            for sentence in sentences(item.body):
                if _mentions_money(sentence):
                    add("money", sentence, item.source_id)
                    used.add(sentence)
        for item in records:
            if item.kind == "document" and not item.source_id.endswith("#p1"):
                continue
            first = sentences(item.body)
            # The record's first sentence, unless the money section already said it: then its label.
            if first and first[0] not in used:
                add("recent_activity", f"{item.label}: {first[0]}" if item.label else first[0], item.source_id)
            elif item.label:
                add("recent_activity", item.label + ".", item.source_id)
            if item.kind == "note":
                for sentence in first:
                    if sentence.endswith("?"):
                        add("open_questions", sentence, item.source_id)
        return WriterResult(content=content)


def _mentions_money(sentence: str) -> bool:
    return bool(extract_facts(sentence).money)
