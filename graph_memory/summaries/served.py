"""A stored summary's statements as the memory serves them: one function of the stored content alone.

Used by briefs (the viewer's read) and by the lint pass (the firm's audit), so both read the same statements.
"""

from __future__ import annotations

from typing import Any

from graph_memory.summaries import rulebook
from graph_memory.summaries.instruction_like import is_instruction_like


def served_statements(content: Any) -> tuple[dict[str, Any], ...]:
    """A stored summary's statements as served: section, label, text, sources, kind, `legacy` and `instruction_like`.

    `legacy` is true for a written statement of a summary from before summary-v3 (kind "quote"):
    free text beside a verbatim quote, not a record's own sentence. It stays served until the
    nightly refresh rewrites the case (legacy summaries first). `instruction_like` is true for a
    statement that reads as an instruction to an AI (`instruction_like.py`): the records' words, served
    as they are and marked. What cannot be read is left out.
    """
    if not isinstance(content, dict):
        return ()
    served = []
    for section in rulebook.SECTIONS:
        for statement in content.get(section) or ():
            if not isinstance(statement, dict) or not isinstance(statement.get("text"), str):
                continue
            kind = str(statement.get("kind") or "quote")
            served.append(
                {
                    "section": section,
                    "label": str(statement.get("label") or ""),
                    "text": statement["text"],
                    "sources": [str(s) for s in statement.get("sources") or ()],
                    "kind": kind,
                    "legacy": kind == "quote",
                    # Computed from this statement's own text only: it marks, never hides or alters.
                    "instruction_like": is_instruction_like(statement["text"]),
                }
            )
    return tuple(served)
