"""Keeping case summaries current: notice changes cheaply, rewrite in bounded nightly batches.

- `marking`: `mark_stale` flips the stale flag, one SQL statement.
- `nightly`: `refresh_firm` claims and rewrites one firm's stale cases; `firms_to_refresh` lists the
  firms the nightly task (`tasks.refresh_all_firms_task`) fans out to; `record_unqueued_runs` records
  the runs a fan-out could not enqueue, `note_on_run` what failed after a run finished.
- `on_demand`: `ensure_summary` writes a first summary on the spot, single-flight.
- `missed`: host changes the receivers failed to react to, recorded, and redone by the nightly run.
- `schedule`: the django-celery-beat entry for the nightly run.
"""

from __future__ import annotations

from graph_memory.refresh.marking import mark_stale
from graph_memory.refresh.missed import repair_missed_changes
from graph_memory.refresh.nightly import (
    backoff_delay,
    due_summaries,
    firms_to_refresh,
    note_on_run,
    record_unqueued_runs,
    refresh_firm,
)
from graph_memory.refresh.on_demand import ensure_summary

__all__ = [
    "backoff_delay",
    "due_summaries",
    "ensure_summary",
    "firms_to_refresh",
    "mark_stale",
    "note_on_run",
    "record_unqueued_runs",
    "refresh_firm",
    "repair_missed_changes",
]
