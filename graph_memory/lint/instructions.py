"""Record text addressed to the assistant: summary statements that read as instructions to an AI.

The memory serves every statement as data, marked `instruction_like` when it reads as if written to
a model (`graph_memory/summaries/instruction_like.py`); this check lists them for the firm's admins, each with
the record it came from, so that someone can look at who wrote it there. One query per firm.
"""

from __future__ import annotations

from graph_memory.lint.findings import MEDIUM, Finding
from graph_memory.lint.statements import summaries_with_reference
from graph_memory.models import LintFinding
from graph_memory.summaries.instruction_like import instruction_like_sentences
from graph_memory.summaries.served import served_statements

KIND = LintFinding.Kind.INSTRUCTION_LIKE
QUOTE_MAX_CHARS = 200


def instruction_like_statements(*, firm_id: int) -> list[Finding]:
    """One finding per served statement of the firm's summaries that reads as an instruction to an AI."""
    found: list[Finding] = []
    for summary in summaries_with_reference(firm_id=firm_id).only("case_id", "content"):
        for statement in served_statements(summary.content):
            if not statement["instruction_like"]:
                continue
            sentence = (instruction_like_sentences(statement["text"]) or [statement["text"]])[0]
            quoted = sentence if len(sentence) <= QUOTE_MAX_CHARS else sentence[: QUOTE_MAX_CHARS - 1] + "\u2026"
            sources = statement["sources"]
            records = [{"type": "source", "id": s, "statement": statement["text"]} for s in sources]
            found.append(
                Finding(
                    KIND, "statement", MEDIUM,
                    f"Case {summary.reference}: a summary statement from {', '.join(sources) or 'its records'} "
                    f"reads as an instruction to an AI: \u201c{quoted}\u201d. It is served as data and marked "
                    "instruction_like; check who wrote it into the record.",
                    case_id=summary.case_id, records=records,
                )
            )  # fmt: skip
    return found
