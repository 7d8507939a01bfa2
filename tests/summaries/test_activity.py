"""Each case's last activity (graph_memory/summaries/activity.py): one row a case, recomputed from its three clocks
(the host's, the summary's writing, its stale flag's raising) by every write that moves one, and caught up by the
nightly run for what the receivers never hear."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from graph_memory import services
from graph_memory.models import CaseActivity, CaseSummary, MissedChange
from graph_memory.summaries import activity
from practice.models import Case
from tests.conftest import Personas
from tests.factories import CaseFactory, NoteFactory

pytestmark = pytest.mark.django_db

OFFLINE = {"WRITER": "extractive", "EMBEDDER": "none"}
LONG_AGO = dt.datetime(2025, 1, 2, 3, 4, tzinfo=dt.UTC)


def active(case: Case) -> dt.datetime | None:
    """The case's row (it must have one)."""
    return CaseActivity.objects.values_list("active_at", flat=True).get(case_id=case.pk)


def clocks(case: Case) -> dt.datetime | None:
    """The latest of the three clocks, read from their own rows now."""
    updated = Case.objects.values_list("updated_at", flat=True).get(pk=case.pk)
    summary = CaseSummary.objects.filter(case_id=case.pk).values_list("written_at", "stale_since").first() or ()
    return max((t for t in (updated, *summary) if t is not None), default=None)


def quiet(case: Case) -> None:
    """The case as a settled one: summary written long ago and not stale, its own clock too, its row to match."""
    CaseSummary.objects.filter(case=case).update(stale=False, stale_since=None, written_at=LONG_AGO)
    Case.objects.filter(pk=case.pk).update(updated_at=LONG_AGO)
    activity.activity_touch(case_ids=[case.pk])
    assert active(case) == LONG_AGO


def test_a_new_case_gets_its_row_and_any_save_moves_it(personas: Personas) -> None:
    case = personas.case
    assert active(case) == clocks(case) is not None
    quiet(case)
    case.refresh_from_db()
    case.save()  # changes no field the watches name: only the host's clock (auto_now) moves
    assert active(case) == clocks(case) == Case.objects.get(pk=case.pk).updated_at > LONG_AGO


def _activity_writes(queries: list[dict[str, Any]]) -> int:
    table = CaseActivity._meta.db_table
    return sum(1 for q in queries if f"INSERT INTO {table}" in q["sql"] or f"INSERT INTO \"{table}\"" in q["sql"])


@pytest.mark.parametrize("title", [False, True], ids=["no watched field", "a watched field"])
def test_a_case_save_writes_its_activity_once(personas: Personas, title: bool) -> None:
    """Whether the save flags the summary stale (a watched field changed; that statement moves the activity)
    or not (only the host's clock moves; `_case_saved` moves it), one statement writes the activity."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    case = personas.case
    quiet(case)
    case.refresh_from_db()
    if title:
        case.title += " (renamed)"
    with CaptureQueriesContext(connection) as captured:
        case.save()
    assert _activity_writes(captured.captured_queries) == 1, [q["sql"][:120] for q in captured.captured_queries]
    assert active(case) == clocks(case) > LONG_AGO
    assert CaseSummary.objects.get(case=case).stale is title
    with CaptureQueriesContext(connection) as captured:
        case.save()  # the same instance saved again: nothing of the first save is left on it
    assert _activity_writes(captured.captured_queries) == 1


def test_marking_stale_moves_it_in_its_one_statement(personas: Personas, django_assert_num_queries: Any) -> None:
    quiet(personas.case)
    with django_assert_num_queries(1):
        assert services.mark_stale(case_ids=[personas.case.pk]) == 1
    since = CaseSummary.objects.values_list("stale_since", flat=True).get(case=personas.case)
    assert active(personas.case) == since == clocks(personas.case) > LONG_AGO
    # A record of the case: the receivers mark it, and the row follows (the flag's time is kept, so is the row).
    NoteFactory(case=personas.case)
    assert active(personas.case) == since


def test_a_case_marked_before_it_had_a_row_gets_one(personas: Personas) -> None:
    other = CaseFactory(firm=personas.firm)
    CaseActivity.objects.filter(case_id=other.pk).delete()
    services.mark_stale(case_ids=Case.objects.filter(pk=other.pk))
    assert active(other) == clocks(other) is not None


def test_a_written_summary_moves_it(personas: Personas, settings: Any) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **OFFLINE}
    quiet(personas.case)
    services.mark_stale(case_ids=[personas.case.pk])
    summary = services.summarize_case(case_id=personas.case.pk)
    assert not summary.stale and summary.stale_since is None
    assert active(personas.case) == summary.written_at == clocks(personas.case)


def test_an_excluded_case_keeps_its_row_with_the_hosts_clock_alone(personas: Personas, settings: Any) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **OFFLINE}
    case = personas.case
    written = services.summarize_case(case_id=case.pk).written_at
    Case.objects.filter(pk=case.pk).update(updated_at=LONG_AGO)
    activity.activity_touch(case_ids=[case.pk])
    assert active(case) == written
    services.memory_exclude(firm_id=personas.firm.pk, case_id=case.pk, reason="client declined")
    assert not CaseSummary.objects.filter(case=case).exists()
    assert active(case) == LONG_AGO == clocks(case)
    services.memory_include(firm_id=personas.firm.pk, case_id=case.pk)  # marked stale again: now
    assert active(case) == clocks(case) > LONG_AGO


def test_the_nightly_run_catches_up_what_the_receivers_never_heard(personas: Personas, settings: Any) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **OFFLINE, "NIGHTLY_BATCH_SIZE": 0}
    [bulk] = Case.objects.bulk_create([Case(
        firm=personas.firm, key="2026-9001", title="Bulk", opened=dt.date(2026, 1, 1), client=personas.case.client,
        owner=personas.owner,
    )])  # fmt: skip
    assert not CaseActivity.objects.filter(case_id=bulk.pk).exists()
    moved = timezone.now() + dt.timedelta(days=3)
    Case.objects.filter(pk=personas.case.pk).update(updated_at=moved)  # no signal: the row lags
    theirs = CaseFactory(firm=personas.other_firm)
    Case.objects.filter(pk=theirs.pk).update(updated_at=moved)
    assert active(personas.case) < moved
    services.refresh_firm(firm_id=personas.firm.pk)
    assert active(bulk) == clocks(bulk) and active(personas.case) == moved
    assert active(theirs) < moved  # another firm's rows wait for their own firm's run
    assert activity.activity_rebuild(firm_id=personas.firm.pk) == 0  # nothing moved: nothing written


def test_a_touch_that_fails_never_fails_the_hosts_save_and_the_night_redoes_it(
    personas: Personas, monkeypatch: pytest.MonkeyPatch
) -> None:
    quiet(personas.case)

    def broken(**kwargs: Any) -> int:
        raise RuntimeError("activity table unwritable")

    monkeypatch.setattr(activity, "activity_touch", broken)
    case = Case.objects.get(pk=personas.case.pk)
    case.save()
    assert Case.objects.get(pk=case.pk).updated_at > LONG_AGO  # the host's write stands
    [missed] = MissedChange.objects.filter(work=MissedChange.Work.ACTIVITY)
    assert (missed.firm_id, missed.case_ids, missed.error) == (
        personas.firm.pk, [case.pk], "RuntimeError: activity table unwritable"
    )  # fmt: skip
    assert active(case) == LONG_AGO
    monkeypatch.undo()
    services.repair_missed_changes(firm_id=personas.firm.pk)
    assert MissedChange.objects.get(pk=missed.pk).repaired_at is not None
    assert active(case) == clocks(case) > LONG_AGO


def test_touching_nothing_runs_nothing(django_assert_num_queries: Any) -> None:
    with django_assert_num_queries(0):
        assert activity.activity_touch(case_ids=[]) == 0
