"""`setup_memory_schedule` and `refresh_summaries` (graph_memory/management/commands/)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django_celery_beat.models import CrontabSchedule, IntervalSchedule, PeriodicTask

from graph_memory.models import CaseSummary, RefreshRun
from graph_memory.refresh.schedule import PERIODIC_TASK_NAME, parse_crontab
from tests.factories import CaseFactory, FirmFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def refresh_settings(settings):
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "EMBEDDER": "none", "NIGHTLY_CRONTAB": "30 1 * * *"}
    return settings


def foreign_task() -> PeriodicTask:
    every_minute = IntervalSchedule.objects.create(every=1, period=IntervalSchedule.MINUTES)
    return PeriodicTask.objects.create(
        name="billing: send reminders", task="billing.send_reminders", interval=every_minute, kwargs=json.dumps({"x": 1})
    )


def snapshot(task: PeriodicTask) -> dict:
    task.refresh_from_db()
    return {f.name: getattr(task, f.name) for f in PeriodicTask._meta.concrete_fields if f.name != "date_changed"}


def test_setup_twice_gives_one_task_and_leaves_foreign_tasks_alone(refresh_settings) -> None:
    foreign = foreign_task()
    before = snapshot(foreign)
    out = io.StringIO()
    call_command("setup_memory_schedule", stdout=out)
    call_command("setup_memory_schedule", stdout=out)
    assert "Created" in out.getvalue() and "Updated" in out.getvalue()
    ours = PeriodicTask.objects.get(name=PERIODIC_TASK_NAME)
    assert PeriodicTask.objects.filter(task="graph_memory.refresh_all_firms").count() == 1
    assert (ours.task, ours.enabled, ours.crontab.minute, ours.crontab.hour) == (
        "graph_memory.refresh_all_firms", True, "30", "1"
    )
    assert snapshot(foreign) == before

    refresh_settings.GRAPH_MEMORY = {**refresh_settings.GRAPH_MEMORY, "NIGHTLY_CRONTAB": "15 3 * * 1-5"}
    call_command("setup_memory_schedule", stdout=out)
    moved = PeriodicTask.objects.get(name=PERIODIC_TASK_NAME)
    assert moved.pk == ours.pk  # updated in place
    assert (moved.crontab.minute, moved.crontab.hour, moved.crontab.day_of_week) == ("15", "3", "1-5")
    assert PeriodicTask.objects.count() == 4 and snapshot(foreign) == before  # nightly, weekly lint, ledger sealer, foreign


@pytest.mark.parametrize("bad", ["0 2 * *", "61 2 * * *", "0 2 * * * *", "every night", ""])
def test_an_invalid_crontab_is_refused_and_nothing_is_written(refresh_settings, bad) -> None:
    refresh_settings.GRAPH_MEMORY = {**refresh_settings.GRAPH_MEMORY, "NIGHTLY_CRONTAB": bad}
    with pytest.raises(CommandError, match="NIGHTLY_CRONTAB"):
        call_command("setup_memory_schedule", stdout=io.StringIO())
    assert not PeriodicTask.objects.exists() and not CrontabSchedule.objects.exists()


def test_system_check_catches_a_bad_crontab(refresh_settings) -> None:
    from graph_memory.checks import check_settings

    assert not [e for e in check_settings() if e.id == "graph_memory.E020"]
    refresh_settings.GRAPH_MEMORY = {**refresh_settings.GRAPH_MEMORY, "NIGHTLY_CRONTAB": "0 25 * * *"}
    assert [e.id for e in check_settings() if e.id == "graph_memory.E020"] == ["graph_memory.E020"]


def test_parse_crontab_names_the_fields() -> None:
    assert parse_crontab("0 2 * * *") == {
        "minute": "0", "hour": "2", "day_of_month": "*", "month_of_year": "*", "day_of_week": "*"
    }


def test_refresh_summaries_runs_one_firm_now_and_prints_the_run() -> None:
    firm, other = FirmFactory(slug="busy-firm"), FirmFactory(slug="quiet-firm")
    CaseFactory.create_batch(3, firm=firm)
    CaseFactory(firm=other)
    out, err = io.StringIO(), io.StringIO()
    call_command("refresh_summaries", "--firm", "busy-firm", "--limit", "2", stdout=out, stderr=err)
    run = RefreshRun.objects.get()
    assert (run.firm_id, run.trigger, run.status, run.claimed, run.rewritten, run.skipped) == (
        firm.pk, "command", "done", 2, 2, 1
    )
    assert f"busy-firm: run {run.pk} status=done, claimed=2, rewritten=2, failed=0, skipped=1" in out.getvalue()
    assert "2/2" in err.getvalue()  # the progress bar
    assert CaseSummary.objects.filter(firm=other, stale=True).count() == 1

    call_command("refresh_summaries", stdout=out, stderr=err)  # every firm
    assert not CaseSummary.objects.filter(stale=True).exists()


def test_refresh_summaries_rejects_bad_arguments() -> None:
    with pytest.raises(CommandError, match="no firm named 'nope'"):
        call_command("refresh_summaries", "--firm", "nope", stdout=io.StringIO())
    with pytest.raises(CommandError, match="--limit"):
        call_command("refresh_summaries", "--limit", "0", stdout=io.StringIO())
