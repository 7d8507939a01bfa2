"""`manage.py refresh_summaries [--firm SLUG] [--limit N]`: run the nightly per-firm refresh now."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from graph_memory import conf
from graph_memory.adapter import firm_model, get_adapter
from graph_memory.models import RefreshRun
from graph_memory.refresh import due_summaries, refresh_firm

_FIELDS = ("status", "claimed", "rewritten", "failed", "skipped", "embedded", "tokens_used", "started_at", "finished_at")


class Command(BaseCommand):
    help = "Rewrite stale case summaries now, firm by firm, exactly as the nightly run does (same caps, same backoff)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--firm", metavar="SLUG", help="Only this firm (default: every firm).")
        parser.add_argument(
            "--limit", type=int, metavar="N", help="At most N cases per firm (default: NIGHTLY_BATCH_SIZE)."
        )

    def handle(self, *args: Any, firm: str | None = None, limit: int | None = None, **options: Any) -> None:
        if limit is not None and limit < 1:
            raise CommandError("--limit must be a positive integer")
        adapter = get_adapter()
        firms = firm_model().objects.order_by(adapter.firm_slug_field)
        if firm is not None:
            firms = firms.filter(**{adapter.firm_slug_field: firm})
            if not firms.exists():
                raise CommandError(f"no firm named {firm!r}")
        cap = int(conf.get("NIGHTLY_BATCH_SIZE") if limit is None else limit)
        failed = False
        for each in firms:
            total = min(cap, due_summaries(firm_id=each.pk).count())
            # tqdm redraws with "\r": it needs the raw stream, not the newline-adding wrapper.
            slug = adapter.firm_slug(each)
            with tqdm(total=total, desc=slug, unit="case", file=self.stderr._out, disable=total == 0) as bar:
                run = refresh_firm(firm_id=each.pk, limit=limit, trigger="command", progress=lambda _run: bar.update())
            self._print_run(slug, run)
            failed = failed or run.status != RefreshRun.Status.DONE
        if failed:
            raise CommandError("at least one firm's refresh failed (see the error above)")

    def _print_run(self, slug: str, run: RefreshRun) -> None:
        values = ", ".join(f"{name}={getattr(run, name)}" for name in _FIELDS)
        line = f"{slug}: run {run.pk} {values}"
        if run.error:
            line += f", error={run.error!r}"
        style = self.style.SUCCESS if run.status == RefreshRun.Status.DONE else self.style.ERROR
        self.stdout.write(style(line))
