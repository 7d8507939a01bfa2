"""Notes that would cross the wall: working notes filed before the write-back guard (issue 31).

A note filed into a case is read by everyone who may open it. The guard now
refuses a note carrying facts of a case outside that audience; this check
finds the notes already stored that it would have refused. It reads the notes
the stored summaries cite (the ones compiled into briefs and search), in one
call of the adapter's `lint_records`, and compares each with the cases that
someone who may open its case may open and someone else who may open it may
not (`writeback.guard.note_crossings`, with the case's audience as holders:
the note's author was one of them; a case only one lawyer may open is skipped
without a query). The finding names the kinds of fact and
the cases (references only: no fact of the other case is copied into the
report); firm admins, who read it, may open both.
"""

from __future__ import annotations

from collections import defaultdict

from graph_memory.adapter import get_adapter
from graph_memory.lint.findings import HIGH, Finding
from graph_memory.models import CaseSummary, LintFinding
from graph_memory.wall import access
from graph_memory.wall.writeback.guard import note_crossings


def crossing_notes(*, firm_id: int) -> list[Finding]:
    cited: set[tuple[int, str]] = set()
    for case_id, source_ids in CaseSummary.objects.filter(firm_id=firm_id).values_list("case_id", "source_ids"):
        cited |= {(case_id, s.removeprefix("note:")) for s in source_ids or () if s.startswith("note:")}
    if not cited:
        return []
    notes = defaultdict(list)
    for case_id, record in get_adapter().lint_records(firm_id=firm_id, cited={"note": cited}):
        if record.kind == "note":
            notes[case_id].append(record)
    audiences = access.case_audiences(case_ids=sorted(notes), firm_id=firm_id)
    if audiences is None:
        return []  # a host that cannot say who may open a case: no holders to check a note against
    found = []
    for case_id, records in sorted(notes.items()):
        audience = audiences[case_id]
        if len(audience) < 2:
            continue  # one reader (and the admins) may open every case they may open: nothing can cross
        for record in sorted(records, key=lambda r: r.key):
            text = f"{record.title}\n{record.text}"
            matches, cases = note_crossings(
                holders=audience, case_id=case_id, firm_id=firm_id, text=text, note_key=record.key
            )
            if not matches:
                continue
            kinds = sorted({m.kind for m in matches})
            sources = sorted({m.case_id for m in matches}, key=lambda c: cases[c].reference)
            message = (
                f"Note note:{record.key} carries facts ({', '.join(kinds)}) of "
                f"{', '.join(cases[c].reference for c in sources)}, which not everyone who may open this case "
                "may open: the guard would refuse it now. Review it with the note's author."
            )
            found.append(
                Finding(
                    LintFinding.Kind.CROSSING_NOTE, "note_crosses_wall", HIGH, message, case_id=case_id,
                    records=[{"type": "source", "id": f"note:{record.key}"}]
                    + [{"type": "case", "id": c, "reference": cases[c].reference} for c in sources],
                )
            )  # fmt: skip
    return found
