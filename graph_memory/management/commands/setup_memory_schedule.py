"""`manage.py setup_memory_schedule`: register (or update) the nightly summary refresh in django-celery-beat."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from graph_memory.refresh.schedule import InvalidCrontab, setup_nightly_schedule


class Command(BaseCommand):
    help = (
        "Create or update the periodic task 'graph_memory: nightly summary refresh' from "
        "GRAPH_MEMORY['NIGHTLY_CRONTAB']. Idempotent; other periodic tasks are never touched."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            task, created = setup_nightly_schedule()
        except InvalidCrontab as exc:
            raise CommandError(str(exc)) from exc
        verb = "Created" if created else "Updated"
        self.stdout.write(self.style.SUCCESS(f"{verb} periodic task {task.name!r}: {task.task} at '{task.crontab}'"))
