from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from practice.importer import ImportFailed, import_firm


class Command(BaseCommand):
    help = "Load one firm's records from an import file (format 1). All or nothing; safe to repeat."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="path to the firm's JSON import file")

    def handle(self, *args: Any, file: Path, **options: Any) -> None:
        try:
            raw = file.read_bytes()
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc.strerror}") from None
        try:
            counts = import_firm(raw)
        except ImportFailed as exc:
            for line in exc.errors:
                self.stderr.write(line)
            raise CommandError(f"{file}: {len(exc.errors)} problem(s); nothing was written") from None
        labels = sorted(set(counts.created) | set(counts.updated) | set(counts.unchanged))
        for label in labels:
            self.stdout.write(
                f"{label:>24}: {counts.created[label]} created, {counts.updated[label]} updated, "
                f"{counts.unchanged[label]} unchanged"
            )
        verdict = "no changes" if counts.changed == 0 else f"{counts.changed} change(s)"
        self.stdout.write(self.style.SUCCESS(f"Imported {file.name}: {verdict}."))
