"""Celery tasks: thin, idempotent, ids in, one service call each."""

from __future__ import annotations

import logging

from celery import group, shared_task
from django.db import transaction
from kombu.exceptions import OperationalError as BrokerUnavailable

from graph_memory import services
from graph_memory.ledger import served_chain
from graph_memory.vectors.firm_indexes import InsideTransaction
from graph_memory.wall import sight
from graph_memory.wall.sight import build_sight  # its task, registered with the others

logger = logging.getLogger(__name__)

# --- Connection map -----------------------------------------------------------


@shared_task(name="graph_memory.rebuild_graph_firm", acks_late=True)
def graph_rebuild_firm_task(firm_id: int) -> dict[str, int]:
    """Rebuild one firm's connection map; safe to run twice (a second run writes nothing)."""
    return services.graph_rebuild_firm(firm_id=firm_id).as_dict()


@shared_task(name="graph_memory.sync_graph_case", acks_late=True)
def graph_sync_case_task(case_id: int) -> dict[str, int]:
    """Sync one case's part of the map."""
    return services.graph_sync_case(case_id=case_id).as_dict()


# --- Nightly summary refresh --------------------------------------------------
# Beat runs "graph_memory.refresh_all_firms" (see `manage.py setup_memory_schedule`);
# it fans out one "graph_memory.refresh_firm" per firm. Running either twice is
# harmless: a second firm run finds nothing stale, or only what is still due.


@shared_task(name="graph_memory.refresh_all_firms", acks_late=True, ignore_result=True)
def refresh_all_firms_task() -> list[int]:
    """The nightly entry point: enqueue one refresh per firm (a group, firm ids only), on commit; returns the ids.

    First redoes the missed host changes no firm could be told for (each firm's run redoes its own)."""
    services.repair_missed_changes(firm_id=None)
    if sight.enabled() and not sight.current():  # a TRUNCATE left lawyers' sight unbuilt
        transaction.on_commit(build_sight.delay)
    firm_ids = services.firms_to_refresh()
    if firm_ids:
        # Each firm is its own task: one firm's bad night (or crash) cannot touch another's.
        transaction.on_commit(lambda: _fan_out(firm_ids))
    return firm_ids


def _fan_out(firm_ids: list[int]) -> None:
    try:
        group(refresh_firm_task.s(firm_id) for firm_id in firm_ids).apply_async()
    except BrokerUnavailable as exc:
        # No worker will ever see these runs: without a record the night would pass unseen in admin.
        # Their cases stay stale and due, so the next night's runs take them.
        logger.exception("nightly fan-out could not enqueue %s firm runs", len(firm_ids))
        services.record_unqueued_runs(firm_ids=firm_ids, error=f"{type(exc).__name__}: {exc}")


@shared_task(name="graph_memory.refresh_firm", acks_late=True)
def refresh_firm_task(firm_id: int) -> int:
    """Rewrite one firm's stale summaries, then (its own task, after commit) see to the firm's search index;
    returns the run record's id. The follow-up's failure is noted on the run, which stays as it ended."""
    run = services.refresh_firm(firm_id=firm_id)
    transaction.on_commit(lambda: _queue_search_index(firm_id=firm_id, run_id=run.pk))
    return run.pk


def _queue_search_index(*, firm_id: int, run_id: int) -> None:
    try:
        search_index_firm_task.delay(firm_id, run_id=run_id)
    except BrokerUnavailable as exc:
        # The summaries are written: the run's work is done, and the next run sees to the index.
        logger.exception("search index of firm %s not queued", firm_id)
        note = f"search index follow-up not queued (queue unavailable: {type(exc).__name__}: {exc})"
        services.note_on_run(firm_id=firm_id, run_id=run_id, note=note)


@shared_task(name="graph_memory.search_index_firm", acks_late=True, ignore_result=True)
def search_index_firm_task(firm_id: int, run_id: int | None = None) -> dict[str, list[int]]:
    """Build, rebuild or drop one firm's own HNSW index as its size asks (firm_indexes); safe to run twice.

    A worker runs it outside any transaction. Run eagerly inside one (a test's), it cannot build
    concurrently: it says so in the log and leaves the work to the next run. Queued by a firm's run
    (`run_id`), a failure is noted on that run and left to the next one, not raised as the run's."""
    try:
        return services.ensure_search_indexes(firm_id=firm_id).as_dict()
    except InsideTransaction:
        logger.warning("search index of firm %s left to the next run: called inside a transaction", firm_id)
        return {}
    except Exception as exc:
        if run_id is None:
            raise
        logger.exception("search index of firm %s failed after run %s", firm_id, run_id)
        note = f"search index follow-up failed: {type(exc).__name__}: {exc}"
        services.note_on_run(firm_id=firm_id, run_id=run_id, note=note)
        return {}


# --- Search: embed a saved summary ----------------------------------------------


@shared_task(name="graph_memory.embed_case_summary", acks_late=True, ignore_result=True)
def embed_case_summary_task(case_id: int) -> bool:
    """Embed one case's current summary; running it twice stores the same vector."""
    return services.embed_case_summary(case_id=case_id)


# --- Lint: the weekly health check ----------------------------------------------
# Beat runs "graph_memory.lint_all_firms" weekly (see `manage.py setup_memory_schedule`);
# it fans out one "graph_memory.lint_firm" per firm. A second run replaces the first's findings.


@shared_task(name="graph_memory.lint_all_firms", acks_late=True, ignore_result=True)
def lint_all_firms_task() -> list[int]:
    """Enqueue one lint per firm (a group, firm ids only), on commit; returns the ids."""
    firm_ids = [firm_id for firm_id, _ in services.lint_firms()]
    if firm_ids:
        transaction.on_commit(group(lint_firm_task.s(firm_id) for firm_id in firm_ids).apply_async)
    return firm_ids


@shared_task(name="graph_memory.lint_firm", acks_late=True)
def lint_firm_task(firm_id: int) -> int:
    """Lint one firm; returns the lint run's id."""
    return services.lint_firm(firm_id=firm_id).pk


# --- The served ledger ----------------------------------------------------------
# Beat runs it every SERVED_LEDGER_SEAL_SECONDS (`manage.py setup_memory_schedule`). Idempotent: a second
# run finds nothing unsealed, and a firm another sealer holds is skipped (that sealer seals its rows).


@shared_task(name="graph_memory.seal_served_ledger", acks_late=True, ignore_result=True)
def seal_served_ledger_task() -> dict[int, int]:
    """Seal every firm's new served-ledger rows into its chain; per firm, how many."""
    return served_chain.seal_all()
