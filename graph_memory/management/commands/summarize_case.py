from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from graph_memory import conf
from graph_memory.adapter import get_adapter
from graph_memory.summaries.rewrite import SummaryFailed, summarize_case


class Command(BaseCommand):
    help = "Write, verify and save one case's summary now, and print it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--firm", required=True, help="the firm's command-line name (its slug in the reference host)")
        parser.add_argument("case_key", help="the case number, e.g. 2026-014")

    def handle(self, *args: Any, firm: str, case_key: str, **options: Any) -> None:
        adapter = get_adapter()
        found = adapter.firm_by_slug(firm)
        if found is None:
            raise CommandError(f"no firm named {firm!r}")
        case_id = adapter.case_id_by_reference(firm_id=found.pk, reference=case_key)
        if case_id is None:
            raise CommandError(f"no case {case_key!r} in firm {firm!r}")
        try:
            summary = summarize_case(case_id=case_id)
        except SummaryFailed as exc:
            raise CommandError(
                f"case {case_key}: summary failed ({exc.reason}); the previous summary is unchanged"
            ) from None
        counts = summary.verification.get("counts", {})
        self.stdout.write(summary.text)
        self.stdout.write("")
        self.stdout.write(f"Writer: {summary.writer}" + (f" ({summary.model})" if summary.model else " (no model)"))
        self.stdout.write(
            f"Selection: {counts.get('ids_kept', 0)} of {counts.get('ids', 0)} sentence ids kept, "
            f"{counts.get('statements', 0)} statements served ({counts.get('shortened', 0)} shortened)"
        )
        for entry in summary.verification.get("dropped", []):
            self.stdout.write(f"  dropped ({entry['reason']}): {entry['section']}")
        self.stdout.write(f"Tokens: {summary.tokens_in} in, {summary.tokens_out} out; prompt {summary.prompt_version}")
        self.stdout.write(conf.get("NOTICE"))
        self.stdout.write(self.style.SUCCESS(f"Saved the summary of case {case_key}."))
