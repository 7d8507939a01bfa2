"""`python manage.py lint_memory [--firm SLUG ...] [--json]`: the lint pass, now.

Reports and stores (each firm's run replaces its previous one); never writes a
summary, a map row or a host record.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from graph_memory import services
from graph_memory.lint import CHECKS, findings_of
from graph_memory.models import LintRun


class Command(BaseCommand):
    help = "Lint the memory of every firm, or of the firms named with --firm: findings by kind, stored for admin."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--firm", action="append", metavar="SLUG", help="Only this firm (may be repeated).")
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="Print every finding as JSON instead of the table."
        )

    def handle(self, *args: Any, firm: list[str] | None = None, as_json: bool = False, **options: Any) -> None:
        firms = services.lint_firms(slugs=firm)
        unknown = sorted(set(firm or ()) - {slug for _, slug in firms})
        if unknown:
            raise CommandError(f"unknown firm: {', '.join(unknown)}")
        runs: list[tuple[str, LintRun]] = []
        steps = len(firms) * len(CHECKS)
        # tqdm redraws with "\r": it needs the raw stream, not the newline-adding wrapper.
        with _lint_log_quiet(), tqdm(
            total=steps, desc="linting", unit="check", disable=options["verbosity"] == 0, file=self.stderr._out
        ) as bar:
            for firm_id, slug in firms:
                bar.set_postfix_str(slug)
                runs.append(
                    (slug, services.lint_firm(firm_id=firm_id, trigger="command", progress=lambda _: bar.update()))
                )
        if as_json:
            self._json(runs)
        else:
            self._table(runs)
        failed = [slug for slug, run in runs if run.status == LintRun.Status.FAILED]
        if failed:
            raise CommandError(f"lint failed for: {', '.join(failed)} (see the lint run's error)")

    def _table(self, runs: list[tuple[str, LintRun]]) -> None:
        kinds = [str(kind) for kind, _ in CHECKS]
        header = ["firm", *kinds, "total"]
        rows = [
            [slug, *(str(run.counts.get(k, 0)) for k in kinds), str(sum(run.counts.values()))]
            if run.status == LintRun.Status.DONE
            else [slug, *("-" for _ in kinds), f"failed: {run.error}"]
            for slug, run in runs
        ]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        for row in [header, ["-" * w for w in widths], *rows]:
            self.stdout.write("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())

    def _json(self, runs: list[tuple[str, LintRun]]) -> None:
        out = [
            {
                "firm": slug,
                "status": run.status,
                "error": run.error,
                "counts": run.counts,
                "findings": [_finding(f) for f in findings_of(run)],
            }
            for slug, run in runs
        ]
        self.stdout.write(json.dumps(out, indent=2, ensure_ascii=False, default=str))


@contextmanager
def _lint_log_quiet() -> Iterator[None]:
    """The lint's one INFO line per firm says what the table after the bar says; printed while the bar draws,
    it lands inside the bar's line. Warnings and errors still go through."""
    log = logging.getLogger("graph_memory.lint")
    level = log.level
    log.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        log.setLevel(level)


def _finding(f: Any) -> dict[str, Any]:
    return {
        "kind": f.kind, "code": f.code, "severity": f.severity, "case_id": f.case_id,
        "message": f.message, "records": f.records,
    }  # fmt: skip
