"""Keeping summaries current: the cost of marking, and a nightly run over 10 firms x 500 stale cases.

Runs in a scratch database (`bench_refresh`) on the embedded server, created
here and dropped at the end. The model is a local OpenAI-compatible server
(tests/openai_server.py) answering every chat request after ~50 ms; the real
`openai` client talks to it over HTTP. The nightly run is `refresh_firm`
per firm, in 1 and then 2 worker processes (each with its own database
connection), the way Celery's per-firm tasks run. Prints one markdown section.

BENCH_REFRESH_CAP (default 30) is the per-firm batch size used for the
nightly runs, kept low so the whole benchmark stays within ~3 minutes.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scratch import django_on_scratch  # noqa: E402

DB_NAME = "bench_refresh"
FIRMS = 10
CASES_PER_FIRM = 500
MARKS = 10_000
COMMITTED_MARKS = 1_000
MODEL_DELAY = 0.05
CAP = int(os.environ.get("BENCH_REFRESH_CAP", "30"))


def _worker_setup() -> None:
    import django

    django.setup()


def _refresh_one_firm(firm_id: int) -> int:
    from graph_memory.refresh import refresh_firm

    return refresh_firm(firm_id=firm_id, limit=CAP).pk


def _noop(_: int) -> int:
    return os.getpid()


def seed_firms() -> list[int]:
    """10 firms x 500 cases, written in bulk (no signals), then flagged with one mark_stale."""
    import datetime as dt

    from accounts.models import Firm, User
    from graph_memory.refresh import mark_stale
    from practice.models import Case, Client

    firm_ids = []
    for f in range(FIRMS):
        firm = Firm.objects.create(slug=f"bench-{f}", name=f"Bench {f} LLP")
        owner = User.objects.create(username=f"owner-{f}", firm=firm)
        clients = Client.objects.bulk_create(
            Client(firm=firm, key=f"client-{i}", name=f"Client {i} Holdings, Inc.") for i in range(50)
        )
        Case.objects.bulk_create(
            Case(
                firm=firm, key=f"2026-{i:04d}", title=f"Matter {i}", opened=dt.date(2026, 1, 15),
                description="A commercial lease dispute.", client=clients[i % 50], owner=owner,
            )
            for i in range(CASES_PER_FIRM)
        )  # fmt: skip
        firm_ids.append(firm.pk)
    mark_stale(case_ids=Case.objects.all())
    return firm_ids


def marking_costs() -> list[tuple[str, int, int]]:
    """(event, statements on the summary table, all statements) for one change event each."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from practice.models import Case, CaseCounterparty, Counterparty, Document
    from tests.factories import DocumentFactory, NoteFactory

    case = Case.objects.order_by("pk").first()
    cp = Counterparty.objects.create(firm_id=case.firm_id, key="cp-bench", name="Bench Counterparty LLC")
    doc = DocumentFactory(case=case, status=Document.Status.PROCESSING)
    note = NoteFactory(case=case, author=None)
    events = []

    def measure(label: str, action) -> None:
        with CaptureQueriesContext(connection) as queries:
            action()
        ours = sum(1 for q in queries.captured_queries if "graph_memory_casesummary" in q["sql"])
        events.append((label, ours, len(queries)))

    def process() -> None:
        doc.status = Document.Status.PROCESSED
        doc.save()

    def edit_note() -> None:
        note.text = "Revised working note."
        note.save()

    def retitle() -> None:
        loaded = Case.objects.get(pk=case.pk)
        loaded.title = "Renamed matter"
        loaded.save()

    def still_processing() -> None:
        other = Document.objects.get(pk=DocumentFactory(case=case, status=Document.Status.UPLOADED).pk)
        other.status = Document.Status.PROCESSING
        other.save()

    measure("document reaches processed (save)", process)
    measure("document uploaded, then processing (2 saves)", still_processing)
    measure("working note edited (save)", edit_note)
    measure("case title changed (get + save)", retitle)
    measure(
        "counterparty added (create link)",
        lambda: CaseCounterparty.objects.create(case=case, counterparty=cp, firm_id=case.firm_id),
    )
    return events


def round_trip_seconds() -> float:
    """A `SELECT 1` through Django, for scale: the floor under any one-statement operation here."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        started = time.perf_counter()
        for _ in range(MARKS):
            cursor.execute("SELECT 1")
        return (time.perf_counter() - started) / MARKS


def marking_speed(case_ids: list[int]) -> tuple[float, float, float]:
    """Seconds for MARKS single-case marks in one transaction (as receivers run, inside the host's
    transaction), for COMMITTED_MARKS marks each committed on its own, and for one mark of every case."""
    from django.db import transaction

    from graph_memory.refresh import mark_stale
    from practice.models import Case

    started = time.perf_counter()
    with transaction.atomic():
        for i in range(MARKS):
            mark_stale(case_ids=[case_ids[i % len(case_ids)]])
    in_transaction = time.perf_counter() - started
    started = time.perf_counter()
    for i in range(COMMITTED_MARKS):
        mark_stale(case_ids=[case_ids[i % len(case_ids)]])
    committed = time.perf_counter() - started
    started = time.perf_counter()
    mark_stale(case_ids=Case.objects.all())
    bulk = time.perf_counter() - started
    return in_transaction, committed, bulk


def nightly(firm_ids: list[int], workers: int, server) -> dict:
    from django.db import connections

    from graph_memory.models import AICall, RefreshRun
    from graph_memory.refresh import mark_stale
    from practice.models import Case

    mark_stale(case_ids=Case.objects.all())  # every case stale again
    connections.close_all()
    calls_before, aicalls_before = server.calls("/v1/chat/completions"), AICall.objects.count()
    with multiprocessing.get_context("spawn").Pool(workers, initializer=_worker_setup) as pool:
        pool.map(_noop, range(workers * 4))  # Django set up in every worker before the clock starts
        started = time.perf_counter()
        run_ids = pool.map(_refresh_one_firm, firm_ids, chunksize=1)
        wall = time.perf_counter() - started
    runs = list(RefreshRun.objects.filter(pk__in=run_ids).order_by("firm_id"))
    return {
        "workers": workers,
        "wall": wall,
        "rewritten": sum(r.rewritten for r in runs),
        "failed": sum(r.failed for r in runs),
        "claimed": sorted({r.claimed for r in runs}),
        "skipped": sorted({r.skipped for r in runs}),
        "tokens": sum(r.tokens_used for r in runs),
        "model_calls": server.calls("/v1/chat/completions") - calls_before,
        "ai_calls": AICall.objects.count() - aicalls_before,
        "statuses": sorted({r.status for r in runs}),
    }


def main() -> None:
    os.environ["GRAPH_MEMORY_EMBEDDER"] = "none"  # embedding cost is not what this measures
    os.environ["GRAPH_MEMORY_OPENAI_MAX_RETRIES"] = "0"
    os.environ["GRAPH_MEMORY_WRITER"] = "openai"
    with django_on_scratch(DB_NAME):
        from tests.openai_server import OpenAIServer
        from tests.refresh_support import valid_reply

        server = OpenAIServer().start()
        server.default_chat = valid_reply(delay=MODEL_DELAY)
        os.environ["OPENAI_BASE_URL"] = server.base_url  # read per call, and inherited by the spawned workers
        os.environ["OPENAI_API_KEY"] = "bench-key"
        try:
            run(server)
        finally:
            server.stop()


def run(server) -> None:
    from django.core.management import call_command

    from practice.models import Case

    print("migrating the scratch database ...", file=sys.stderr, flush=True)
    call_command("migrate", verbosity=0)
    firm_ids = seed_firms()
    events = marking_costs()
    print("marking ...", file=sys.stderr, flush=True)
    in_transaction, committed, bulk = marking_speed(list(Case.objects.values_list("pk", flat=True)))
    floor = round_trip_seconds()
    results = []
    for workers in (1, 2):
        print(f"nightly run with {workers} worker(s) ...", file=sys.stderr, flush=True)
        results.append(nightly(firm_ids, workers, server))

    total = Case.objects.count()
    print("## Keeping summaries current\n")
    print("Marking: SQL statements per change event (on the summary table / all statements of the event).\n")
    print("| change event | statements marking | all statements |")
    print("| --- | ---: | ---: |")
    for label, ours, everything in events:
        print(f"| {label} | {ours} | {everything} |")
    print(
        f"\n{MARKS:,} single-case marks (`mark_stale(case_ids=[id])`, 1 statement each) inside one transaction, "
        f"as receivers run inside the host's own transaction: {in_transaction:.2f} s "
        f"({in_transaction / MARKS * 1e6:.0f} µs a mark). {COMMITTED_MARKS:,} marks each committed on its own "
        f"(commit included): {committed:.2f} s ({committed / COMMITTED_MARKS * 1e6:.0f} µs a mark). "
        f"One `mark_stale` over all {total:,} cases: {bulk * 1000:.0f} ms, 1 statement. For scale, a `SELECT 1` "
        f"round trip through Django takes {floor * 1e6:.0f} µs on this machine during the same run.\n"
    )
    print(
        f"Nightly run: {FIRMS} firms x {CASES_PER_FIRM} stale cases, per-firm batch size {CAP}, model answering "
        f"after {MODEL_DELAY * 1000:.0f} ms through the real `openai` client, one `refresh_firm` per firm "
        "spread over worker processes.\n"
    )
    print("| workers | wall time | cases rewritten | model calls | AICall rows | failed | claimed per firm "
          "| skipped per firm | tokens | run status |")  # fmt: skip
    print("| ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | --- |")
    for r in results:
        print(
            f"| {r['workers']} | {r['wall']:.1f} s | {r['rewritten']} | {r['model_calls']} | {r['ai_calls']} "
            f"| {r['failed']} | {r['claimed']} | {r['skipped']} | {r['tokens']:,} | {', '.join(r['statuses'])} |"
        )
    ok = all(r["model_calls"] == r["rewritten"] == FIRMS * CAP for r in results)
    print(
        f"\nModel calls equal cases rewritten, and every firm stopped at its cap of {CAP}: {'yes' if ok else 'NO'}. "
        f"A full night at the default batch size (50) would rewrite {FIRMS * 50} of these {total:,} cases."
    )


if __name__ == "__main__":
    main()
