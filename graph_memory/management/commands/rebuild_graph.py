"""`python manage.py rebuild_graph [--firm SLUG ...]`: rebuild the connection map from the host records.

Safe to run at any time and as often as wanted: a firm whose records did not
change gets zero rows written.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from graph_memory import services
from graph_memory.map.graph import GraphChanges, graph_firms


class Command(BaseCommand):
    help = "Rebuild the connection map (nodes and edges) of every firm, or of the firms named with --firm."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--firm", action="append", metavar="SLUG", help="Only this firm (may be repeated).")

    def handle(self, *args: Any, firm: list[str] | None = None, **options: Any) -> None:
        firms = graph_firms(slugs=firm)
        unknown = sorted(set(firm or ()) - {slug for _, slug in firms})
        if unknown:
            raise CommandError(f"unknown firm: {', '.join(unknown)}")
        total = GraphChanges()
        # tqdm writes to the real stderr: Django's wrapper would end each redraw with a newline.
        with tqdm(firms, desc="rebuilding graph", unit="firm", disable=options["verbosity"] == 0, file=sys.stderr) as bar:
            for firm_id, slug in bar:
                bar.set_postfix_str(slug)
                total += services.graph_rebuild_firm(firm_id=firm_id)
        self.stdout.write(
            f"{len(firms)} firm(s): {total.added} row(s) added, {total.removed} removed, "
            f"{total.nodes_updated} relabelled, {total.unchanged} unchanged"
            + (" (already up to date: nothing to write)" if firms and not total.written else "")
        )
