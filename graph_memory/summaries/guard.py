"""The regression guard: a rewrite replaces the current summary only if it is not markedly poorer.

A small model at temperature 0 can answer a rich slice with three sentences,
and every one of them is a record's own words. So before a rewrite replaces a
case's current summary it must pass three mechanical tests (settings in
brackets, defaults after them), judged by what is served, never by counts a
writer could inflate:

1. Of the sentence ids it selected, at least GUARD_MIN_KEPT_RATE (0.5) name a
   sentence of the slice (an id selected twice names one; it is only served
   once): a writer that invented half its selection is not trusted with the
   rest.
2. It serves at least GUARD_MIN_SHARE (0.6) as many distinct sentences, and
   covers at least that share of the distinct records, as the current summary
   does with the sentences that are still backed (their records still in the
   slice). When records leave the slice (deleted, or pushed out by newer
   ones), the bar drops with them. Field facts (rendered, `kind` "field")
   are not selected and do not count. Nor do the statements of a legacy
   summary (written before summary-v3, `kind` "quote": free text beside a
   quote): what they say is not known to be the records' own words, so they
   protect nothing, and the rewrite that replaces them is never held back
   for them.
3. It cites at least GUARD_MIN_SHARE of the field records (case header,
   client, counterparties, deadlines, invoices) that the current summary
   cites and that are still in the slice.

A case with no current summary has nothing to protect: any rewrite with a
selected sentence is saved. A rejected rewrite saves nothing; the service
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
from graph_memory.summaries.sentences import statement_key

REJECTED = "rejected: weaker than current"
FIELD_KINDS = frozenset({"header", "client", "counterparty", "deadline", "invoice"})


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


def _served(content: Mapping[str, Any], in_slice: Mapping[str, str]) -> tuple[set[str], set[str]]:
    """(distinct sentences, distinct records) of the selected statements still backed by the slice."""
    found = [
        s
        for s in statements(content)
        if s.get("kind") == "sentence" and s.get("sources") and all(x in in_slice for x in s["sources"])
    ]
    return {statement_key(str(s.get("quote") or s.get("text"))) for s in found}, {
        x for s in found for x in s["sources"]
    }


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
    asked = int(counts.get("ids", 0) or 0)
    # An id the slice does not have is an invention; one selected twice is only redundant (it names a
    # sentence of the slice, served once): trust is judged on the inventions.
    known = asked - int(counts.get("unknown_id", 0) or 0)
    current_sentences, current_records = _served(current, in_slice)
    new_sentences, new_records = _served(new, in_slice)
    current_fields = _field_records(statements(current), in_slice)
    new_fields = _field_records(statements(new), in_slice)
    min_rate = float(conf.get("GUARD_MIN_KEPT_RATE"))
    min_share = float(conf.get("GUARD_MIN_SHARE"))
    figures: dict[str, Any] = {
        "ids": asked,
        "ids_known": known,
        "kept_rate": round(known / asked, 3) if asked else None,
        "current_statements": sum(1 for _ in statements(current)),
        "current_sentences": len(current_sentences),
        "current_records": len(current_records),
        "new_sentences": len(new_sentences),
        "new_records": len(new_records),
        "current_field_records": len(current_fields),
        "field_records_kept": len(current_fields & new_fields),
        "min_kept_rate": min_rate,
        "min_share": min_share,
    }
    if not figures["current_statements"]:
        return Judgement(figures=figures)
    if asked and known / asked < min_rate:
        return Judgement(
            f"{REJECTED}: {known} of {asked} selected sentence ids are in the slice (below {min_rate:.0%})", figures
        )
    for what, old, now in (("sentences", current_sentences, new_sentences), ("records", current_records, new_records)):
        needed = min_share * len(old)
        if len(now) < needed:
            return Judgement(
                f"{REJECTED}: serves {len(now)} distinct {what} against {len(old)} still backed in the current"
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


def _field_records(found: Iterator[Mapping[str, Any]], in_slice: Mapping[str, str]) -> set[str]:
    return {s for statement in found for s in statement.get("sources") or [] if in_slice.get(s) in FIELD_KINDS}
