"""The regression guard: a rewrite replaces the current summary only if it is not markedly poorer.

A small model at temperature 0 can answer a rich slice with three statements,
and verification alone would let them through: every one of them is true.
So before a rewrite replaces a case's current summary it must pass three
mechanical tests (settings in brackets, defaults after them):

1. Its written statements survive verification at a rate of at least
   GUARD_MIN_KEPT_RATE (0.5): a model that had half of what it wrote thrown
   away is not trusted with the rest.
2. It holds at least GUARD_MIN_SHARE (0.6) as many written statements as the
   current summary holds written statements that are still backed, i.e. whose
   cited records are all still in the slice. When records leave the slice
   (deleted, or pushed out by newer ones), the bar drops with them. Field
   facts (rendered from the records, `kind` "field") are not written, and
   neither is a statement citing nothing but client, counterparty, deadline
   or invoice records (what older summaries had the model restate): both
   sides are compared on what a model wrote.
3. It cites at least GUARD_MIN_SHARE of the field records (case header,
   client, counterparties, deadlines, invoices) that the current summary
   cites and that are still in the slice.

A case with no current summary has nothing to protect: any rewrite with a
verified statement is saved. A rejected rewrite saves nothing; the service
records it as "rejected: weaker than current" with these figures, and the
case stays stale (and backs off) as after any failed attempt.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from graph_memory import conf
from graph_memory.summaries.context import ContextSlice

REJECTED = "rejected: weaker than current"
FIELD_KINDS = frozenset({"header", "client", "counterparty", "deadline", "invoice"})
# Records that hold nothing but fields (the header also carries the case's description).
_FIELD_ONLY_KINDS = FIELD_KINDS - {"header"}


@dataclass(frozen=True)
class Judgement:
    """`reason` is empty when the rewrite may replace the current summary; `figures` are counts only."""

    reason: str = ""
    figures: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.reason


def statements(content: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every statement of a summary's content, whatever its sections."""
    for section in content.values():
        if isinstance(section, list):
            yield from (s for s in section if isinstance(s, Mapping) and "sources" in s)


def judge_rewrite(
    *, current: Mapping[str, Any], new: Mapping[str, Any], report: Mapping[str, Any], context: ContextSlice
) -> Judgement:
    """Whether content `new` (verified, with its verification `report`) may replace content `current`.

    Both are contents as saved; `context` is the slice `new` was written and
    verified from. Never raises for odd content: what it cannot read counts
    as absent.
    """
    in_slice = {item.source_id: item.kind for item in context.items}
    counts = report.get("counts") or {}
    written = int(counts.get("statements", report.get("kept", 0) or 0))
    kept = int(report.get("kept", 0) or 0)
    current_backed = [s for s in statements(current) if _written(s, in_slice) and _backed(s, in_slice)]
    new_count = sum(1 for s in statements(new) if _written(s, in_slice))
    current_fields = _field_records(statements(current), in_slice)
    new_fields = _field_records(statements(new), in_slice)
    min_rate = float(conf.get("GUARD_MIN_KEPT_RATE"))
    min_share = float(conf.get("GUARD_MIN_SHARE"))
    figures: dict[str, Any] = {
        "written": written,
        "kept": kept,
        "kept_rate": round(kept / written, 3) if written else None,
        "current_statements": sum(1 for _ in statements(current)),
        "current_written_backed": len(current_backed),
        "new_written": new_count,
        "current_field_records": len(current_fields),
        "field_records_kept": len(current_fields & new_fields),
        "min_kept_rate": min_rate,
        "min_share": min_share,
    }
    if not figures["current_statements"]:
        return Judgement(figures=figures)
    if written and kept / written < min_rate:
        return Judgement(
            f"{REJECTED}: {kept} of {written} written statements survived verification (below {min_rate:.0%})",
            figures,
        )
    needed = min_share * len(current_backed)
    if new_count < needed:
        return Judgement(
            f"{REJECTED}: {new_count} written statements against {len(current_backed)} still backed in the current"
            f" summary (needs {math.ceil(needed)})",
            figures,
        )
    if len(current_fields & new_fields) < min_share * len(current_fields):
        return Judgement(
            f"{REJECTED}: cites {len(current_fields & new_fields)} of the {len(current_fields)} field records"
            " the current summary covers",
            figures,
        )
    return Judgement(figures=figures)


def _written(statement: Mapping[str, Any], in_slice: Mapping[str, str]) -> bool:
    if statement.get("kind") == "field":
        return False
    sources = statement.get("sources") or []
    return not sources or not all(in_slice.get(s) in _FIELD_ONLY_KINDS for s in sources)


def _backed(statement: Mapping[str, Any], in_slice: Mapping[str, str]) -> bool:
    sources = statement.get("sources") or []
    return bool(sources) and all(s in in_slice for s in sources)


def _field_records(found: Iterator[Mapping[str, Any]], in_slice: Mapping[str, str]) -> set[str]:
    return {s for statement in found for s in statement.get("sources") or [] if in_slice.get(s) in FIELD_KINDS}
