"""The lint pass: a mechanical, per-firm health check of the memory (the wiki pattern's third step).

Each check (statements.py, freshness.py, mapping.py, notes.py, instructions.py) reads one firm in a fixed
number of queries, whatever its size (notes.py: a fixed number per case whose summary cites
a note), and returns `Finding`s; nothing here calls a model or writes a summary, a map row or a host record. `lint_firm`
stores the findings as the firm's one lint run, replacing the previous one.
Admin enqueues the mechanical fixes (graph_memory/admin/lint.py).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import ngettext

from graph_memory.adapter import firm_model, get_adapter
from graph_memory.lint import freshness, instructions, mapping, notes, statements
from graph_memory.lint.findings import Finding
from graph_memory.models import LintFinding, LintRun

logger = logging.getLogger(__name__)

__all__ = ["CHECKS", "Finding", "counts_words", "last_lint_run", "lint_firm", "lint_firms"]

# Each check takes the firm id and returns its findings; the order is the order of the report.
CHECKS: tuple[tuple[str, Callable[..., list[Finding]]], ...] = (
    (LintFinding.Kind.CONTRADICTED, statements.contradicted),
    (LintFinding.Kind.STALE, freshness.stale_too_long),
    (LintFinding.Kind.WEAK, freshness.weak_summaries),
    (LintFinding.Kind.MAP_DRIFT, mapping.map_drift),
    (LintFinding.Kind.PARTY_HYGIENE, mapping.party_hygiene),
    (LintFinding.Kind.SEARCH_GAP, freshness.search_gaps),
    (LintFinding.Kind.CROSSING_NOTE, notes.crossing_notes),
    (LintFinding.Kind.INSTRUCTION_LIKE, instructions.instruction_like_statements),
)
_ERROR_MAX = 500


def lint_firm(*, firm_id: int, trigger: str = "weekly", progress: Callable[[str], None] | None = None) -> LintRun:
    """Run every check on one firm and store the result as its lint run, replacing the previous run.

    Reads only this firm's rows. Writes only LintRun / LintFinding rows. A
    check that raises fails the run (recorded with the error) and keeps the
    previous run's findings, so admin never shows half a report.
    """
    run = LintRun.objects.create(firm_id=firm_id, trigger=trigger)
    found: list[Finding] = []
    try:
        for kind, check in CHECKS:
            found += check(firm_id=firm_id)
            if progress is not None:
                progress(kind)
    except Exception as exc:
        logger.exception("lint of firm %s failed", firm_id)
        run.status, run.error, run.finished_at = (
            LintRun.Status.FAILED,
            f"{type(exc).__name__}: {exc}"[:_ERROR_MAX],
            timezone.now(),
        )
        run.save(update_fields=["status", "error", "finished_at"])
        return run
    counts = Counter(f.kind for f in found)
    run.counts = {str(kind): counts.get(kind, 0) for kind, _ in CHECKS}
    run.status, run.finished_at = LintRun.Status.DONE, timezone.now()
    with transaction.atomic():
        LintFinding.objects.bulk_create([f.row(run=run, firm_id=firm_id) for f in found])
        run.save(update_fields=["counts", "status", "finished_at"])
        # The next run replaces the previous one (its findings go with it).
        LintRun.objects.filter(firm_id=firm_id).exclude(pk=run.pk).delete()
    logger.info("lint of firm %s: %s", firm_id, counts_words(run.counts))
    return run


def counts_words(counts: dict[str, int]) -> str:
    """A run's counts in words, the kinds with findings only: "5 findings: 1 party hygiene, 4 search gap"."""
    total = sum(counts.values())
    if not total:
        return "no findings"
    kinds = ", ".join(f"{counts[str(k)]} {LintFinding.Kind(k).label.lower()}" for k, _ in CHECKS if counts.get(str(k)))
    return f"{total} {ngettext('finding', 'findings', total)}: {kinds}"


def lint_firms(*, slugs: Iterable[str] | None = None) -> list[tuple[int, str]]:
    """(id, slug) of the firms to lint: all, or those with these slugs (for the command and the task)."""
    slug = get_adapter().firm_slug_field
    firms = firm_model().objects.order_by("pk")
    if slugs is not None:
        firms = firms.filter(**{f"{slug}__in": list(slugs)})
    return list(firms.values_list("pk", slug))


def last_lint_run(*, firm_id: int) -> LintRun | None:
    """The firm's latest complete lint run (the one whose findings are stored), or None: one query.
    A failed run keeps the previous report, so it is not the one shown."""
    return LintRun.objects.filter(firm_id=firm_id, status=LintRun.Status.DONE).first()


def findings_of(run: LintRun) -> QuerySet[Any]:
    return LintFinding.objects.filter(run=run).order_by("kind", "code", "case_id", "id")
