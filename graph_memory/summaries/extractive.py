"""The extractive writer: no model; it selects the slice's own sentences, as a model would, by simple rules."""

from __future__ import annotations

from typing import Any

from graph_memory.summaries import rulebook
from graph_memory.summaries.base import WriterResult
from graph_memory.summaries.context import ContextSlice
from graph_memory.summaries.facts import extract_facts
from graph_memory.summaries.sentences import number

# A longer sentence is left out rather than served whole: the summary is orientation, not the record.
EXTRACT_SENTENCE_MAX = 400


class ExtractiveWriter:
    """No model: the same selection a model makes, over the same numbered sentences (sentences.py).

    Deterministic, free, offline. The case description's first two sentences
    go to status; a sentence of a note or draft that asks something to open
    questions; one that gives an amount to money, a date to key dates; the
    first sentence of each note, draft and document otherwise to recent
    activity (where it reads beside the record's title and date). Each
    sentence once, no label, no shortening. Field facts (status, parties,
    deadlines, invoices, titles) are not selected here: fields.py renders them.
    """

    name = "extractive"
    model = ""

    def write(self, context: ContextSlice) -> WriterResult:
        content: dict[str, list[dict[str, Any]]] = rulebook.empty_content()
        numbered = number(context)
        kinds = {item.source_id: item.kind for item in context.items}
        seen_records: set[str] = set()

        def add(section: str, sentence_id: str) -> None:
            if len(content[section]) < rulebook.MAX_POINTS_PER_SECTION:
                content[section].append({"ids": [sentence_id], "label": "", "short": ""})

        header_sentences = 0
        for sentence in numbered.sentences:
            kind = kinds[sentence.source_id]
            first = sentence.source_id not in seen_records
            seen_records.add(sentence.source_id)
            if len(sentence.text) > EXTRACT_SENTENCE_MAX:
                continue
            if kind == "header":
                if header_sentences < 2:
                    add("status", sentence.id)
                header_sentences += 1
                continue
            facts = extract_facts(sentence.text)
            if sentence.text.endswith("?") and kind != "document":
                add("open_questions", sentence.id)
            elif facts.money:
                add("money", sentence.id)
            elif facts.dates or facts.months:
                add("key_dates", sentence.id)
            elif first and (kind != "document" or sentence.source_id.endswith("#p1")):
                add("recent_activity", sentence.id)
        return WriterResult(content=content)
