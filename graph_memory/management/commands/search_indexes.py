"""`python manage.py search_indexes [--firm SLUG ...]`: give each large firm its own HNSW search index.

A firm holding SEARCH_FIRM_INDEX_MIN summary vectors gets one, built without
blocking writes; a firm below half of that, or gone, loses it; an index left
invalid by a failed build is built again (graph_memory/vectors/firm_indexes.py). The
nightly refresh does the same for each firm it refreshes. Safe to run at any
time: a firm whose index is in place costs one catalogue lookup.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from graph_memory import services
from graph_memory.map.graph import graph_firms
from graph_memory.vectors.firm_indexes import IndexChanges


class Command(BaseCommand):
    help = "Build, rebuild or drop the firms' own HNSW search indexes as their sizes ask (all firms, or --firm)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--firm", action="append", metavar="SLUG", help="Only this firm (may be repeated).")

    def handle(self, *args: Any, firm: list[str] | None = None, **options: Any) -> None:
        def progress(message: str) -> None:
            if options["verbosity"] > 0:
                self.stderr.write(f"building: {message} ...")

        if firm is None:
            changes = services.ensure_search_indexes(progress=progress)
        else:
            firms = graph_firms(slugs=firm)
            unknown = sorted(set(firm) - {slug for _, slug in firms})
            if unknown:
                raise CommandError(f"unknown firm: {', '.join(unknown)}")
            changes = IndexChanges()
            for firm_id, _ in firms:
                one = services.ensure_search_indexes(firm_id=firm_id, progress=progress)
                for name, ids in one.as_dict().items():
                    getattr(changes, name).extend(ids)
        self.stdout.write(
            f"{len(changes.built)} built, {len(changes.dropped)} dropped, {len(changes.kept)} in place"
            + (f", {len(changes.busy)} being built elsewhere" if changes.busy else "")
            + (f", {len(changes.failed)} failed (see the log; the next run tries again)" if changes.failed else "")
        )
        if changes.failed:
            raise CommandError(f"the index build failed for firm id(s) {', '.join(map(str, changes.failed))}")
