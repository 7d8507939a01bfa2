"""`manage.py setup_memory_schedule`: register (or update) the nightly refresh and the weekly lint in django-celery-beat."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from graph_memory.refresh.schedule import (
    InvalidCrontab,
    setup_ledger_schedule,
    setup_lint_schedule,
    setup_nightly_schedule,
)


class Command(BaseCommand):
    help = (
        "Create or update the periodic tasks 'graph_memory: nightly summary refresh' and "
        "'graph_memory: weekly lint' from GRAPH_MEMORY['NIGHTLY_CRONTAB'] and ['LINT_CRONTAB'], and "
        "'graph_memory: seal the served ledger' every ['SERVED_LEDGER_SEAL_SECONDS']. "
        "Idempotent; other periodic tasks are never touched."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            # Both or neither: a bad LINT_CRONTAB must not leave the nightly task half-updated.
            with transaction.atomic():
                done = [setup() for setup in (setup_nightly_schedule, setup_lint_schedule, setup_ledger_schedule)]
        except InvalidCrontab as exc:
            raise CommandError(str(exc)) from exc
        for task, created in done:
            verb = "Created" if created else "Updated"
            self.stdout.write(self.style.SUCCESS(f"{verb} periodic task {task.name!r}: {task.task} at '{task.crontab or task.interval}'"))
