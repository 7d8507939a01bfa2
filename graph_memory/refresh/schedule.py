"""The nightly refresh's django-celery-beat entry: one namespaced periodic task, updated in place."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django_celery_beat.models import CrontabSchedule, IntervalSchedule, PeriodicTask
from django_celery_beat.validators import crontab_validator

from graph_memory import conf

PERIODIC_TASK_NAME = "graph_memory: nightly summary refresh"
TASK = "graph_memory.refresh_all_firms"
LINT_TASK_NAME = "graph_memory: weekly lint"
LINT_TASK = "graph_memory.lint_all_firms"
LEDGER_TASK_NAME = "graph_memory: seal the served ledger"
LEDGER_TASK = "graph_memory.seal_served_ledger"
CRONTAB_FIELDS = ("minute", "hour", "day_of_month", "month_of_year", "day_of_week")


class InvalidCrontab(ValueError):
    """NIGHTLY_CRONTAB is not a valid five-field cron expression."""


def parse_crontab(expression: str, *, setting: str = "NIGHTLY_CRONTAB") -> dict[str, str]:
    """Split and validate "m h dom mon dow"; raises InvalidCrontab naming the problem (and the setting)."""
    if not isinstance(expression, str):
        raise InvalidCrontab(f"{setting} must be a string, not {type(expression).__name__}")
    parts = expression.split()
    if len(parts) != len(CRONTAB_FIELDS):
        raise InvalidCrontab(
            f"{setting} {expression!r} must have 5 fields (minute hour day-of-month month day-of-week), "
            f"not {len(parts)}"
        )
    try:
        crontab_validator(" ".join(parts))
    except ValidationError as exc:
        raise InvalidCrontab(f"{setting} {expression!r}: {'; '.join(exc.messages)}") from exc
    return dict(zip(CRONTAB_FIELDS, parts, strict=True))


def _crontab(fields: dict[str, str]) -> CrontabSchedule:
    # filter().first(), not get_or_create: other apps may have made identical rows.
    crontab = CrontabSchedule.objects.filter(**fields, timezone="UTC").order_by("pk").first()
    return crontab or CrontabSchedule.objects.create(**fields, timezone="UTC")


@transaction.atomic
def setup_lint_schedule(*, expression: str | None = None) -> tuple[PeriodicTask, bool]:
    """Create or update the weekly lint's periodic task (LINT_CRONTAB, UTC); returns (task, created).

    Idempotent, like the nightly one: beat runs one task that fans out one lint per firm,
    so a firm added later is linted without touching the schedule.
    """
    fields = parse_crontab(conf.get("LINT_CRONTAB") if expression is None else expression, setting="LINT_CRONTAB")
    return PeriodicTask.objects.update_or_create(
        name=LINT_TASK_NAME,
        defaults={
            "task": LINT_TASK, "crontab": _crontab(fields), "interval": None, "solar": None, "clocked": None,
            "one_off": False, "enabled": True, "args": "[]", "kwargs": "{}",
            "description": "Lints the memory of every firm, one Celery task per firm (graph_memory).",
        },
    )  # fmt: skip


@transaction.atomic
def setup_nightly_schedule(*, expression: str | None = None) -> tuple[PeriodicTask, bool]:
    """Create or update the nightly periodic task; returns (task, created).

    Idempotent. Touches only the task named PERIODIC_TASK_NAME; a crontab row
    it used before is left in place, since other apps' tasks may share it.
    """
    fields = parse_crontab(conf.get("NIGHTLY_CRONTAB") if expression is None else expression)
    # Beat reads crontabs in UTC here (CELERY_TIMEZONE); firms' local nights differ,
    # and one fixed time keeps the load predictable.
    # filter().first(), not get_or_create: other apps may have made identical rows.
    crontab = CrontabSchedule.objects.filter(**fields, timezone="UTC").order_by("pk").first()
    if crontab is None:
        crontab = CrontabSchedule.objects.create(**fields, timezone="UTC")
    task, created = PeriodicTask.objects.update_or_create(
        name=PERIODIC_TASK_NAME,
        defaults={
            "task": TASK,
            "crontab": crontab,
            "interval": None,
            "solar": None,
            "clocked": None,
            "one_off": False,
            "enabled": True,
            "args": "[]",
            "kwargs": "{}",
            "description": "Rewrites stale case summaries, one Celery task per firm (graph_memory).",
        },
    )
    return task, created


@transaction.atomic
def setup_ledger_schedule(*, seconds: int | None = None) -> tuple[PeriodicTask, bool]:
    """Create or update the served ledger's sealing task: every SERVED_LEDGER_SEAL_SECONDS; returns (task, created).

    An interval, not a crontab: rows wait unsealed (unvouched for) only this long.
    """
    every = int(conf.get("SERVED_LEDGER_SEAL_SECONDS") if seconds is None else seconds)
    interval = IntervalSchedule.objects.filter(every=every, period=IntervalSchedule.SECONDS).order_by("pk").first()
    interval = interval or IntervalSchedule.objects.create(every=every, period=IntervalSchedule.SECONDS)
    return PeriodicTask.objects.update_or_create(
        name=LEDGER_TASK_NAME,
        defaults={
            "task": LEDGER_TASK, "interval": interval, "crontab": None, "solar": None, "clocked": None,
            "one_off": False, "enabled": True, "args": "[]", "kwargs": "{}",
            "description": "Seals new served-ledger rows into each firm's hash chain (graph_memory).",
        },
    )  # fmt: skip
