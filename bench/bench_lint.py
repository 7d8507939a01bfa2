"""The lint pass on one 10,000-case firm: wall time per check and SQL statements (target: under 10 s).

Runs in a scratch database (`bench_lint`) on the embedded server, created
here and dropped at the end. The firm is written in bulk (no signals): 10,000
cases, 2,000 clients and 2,000 counterparties (a few near-duplicate names), two
deadlines, an invoice and a working note per case, the map rebuilt, and one
stored summary per case holding what the extractive writer stores (field
facts rendered by fields.py, the note's sentence selected). Then 1% of the deadlines are
marked done and 1% of the invoices paid, 1% of the summaries are long stale,
and `lint_firm` runs (no model call). Prints one markdown section.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scratch import django_on_scratch  # noqa: E402

DB_NAME = "bench_lint"
CASES = 10_000
PARTIES = 2_000


def seed() -> int:
    import datetime as dt
    from decimal import Decimal

    from django.utils import timezone

    from accounts.models import Firm, User
    from graph_memory.map.graph import graph_rebuild_firm
    from graph_memory.models import CaseSummary
    from graph_memory.summaries.context import ContextItem
    from graph_memory.summaries.fields import render
    from practice.models import Case, CaseCounterparty, Client, Counterparty, Deadline, Invoice, Note

    firm = Firm.objects.create(slug="bench-lint", name="Bench Lint LLP")
    owner = User.objects.create(username="lint-owner", firm=firm)
    clients = Client.objects.bulk_create(
        Client(firm=firm, key=f"c{i}", name=f"Client {i} Holdings, Inc." if i % 400 else f"Northwind {i} Trading AG")
        for i in range(PARTIES)
    )
    parties = Counterparty.objects.bulk_create(
        Counterparty(firm=firm, key=f"p{i}", name=f"Party {i} Logistics LLC" if i % 400 else f"Nortwind {i} Trading AG")
        for i in range(PARTIES)
    )
    opened = dt.date(2026, 1, 15)
    cases = Case.objects.bulk_create(
        Case(firm=firm, key=f"2026-{i:05d}", title=f"Matter {i}", opened=opened, description="A dispute.",
             client=clients[i % PARTIES], owner=owner)
        for i in range(CASES)
    )  # fmt: skip
    CaseCounterparty.objects.bulk_create(
        CaseCounterparty(firm=firm, case=c, counterparty=parties[i % PARTIES]) for i, c in enumerate(cases)
    )
    due = dt.date(2026, 12, 15)
    Deadline.objects.bulk_create(
        Deadline(firm=firm, case=c, key=f"d{n}", title=f"Deadline {n}", due=due) for c in cases for n in (1, 2)
    )
    Invoice.objects.bulk_create(
        Invoice(firm=firm, case=c, key="inv", number=f"INV-{i}", issued=opened, amount=Decimal("1200.00"),
                currency="USD", status="sent")
        for i, c in enumerate(cases)
    )  # fmt: skip
    now = timezone.now()
    note = "The client wants to settle before the hearing."
    Note.objects.bulk_create(Note(firm=firm, case=c, key="n1", created=now, text=note) for c in cases)
    graph_rebuild_firm(firm_id=firm.pk)

    def fact(source: str, kind: str, **fields: object) -> dict:
        return {"text": render(ContextItem(source, kind, "", fields=fields)), "sources": [source], "kind": "field"}

    rows = []
    for i, c in enumerate(cases):
        content = {
            "status": [fact("case:header", "header", reference=c.key, title=c.title, status="Open", opened=opened)],
            "parties": [
                fact(f"client:c{i % PARTIES}", "client", name=clients[i % PARTIES].name, role="client"),
                fact(f"counterparty:p{i % PARTIES}", "counterparty", name=parties[i % PARTIES].name, role="counterparty"),
            ],
            "key_dates": [fact(f"deadline:d{n}", "deadline", title=f"Deadline {n}", due=due, done=False) for n in (1, 2)],
            "money": [fact("invoice:inv", "invoice", number=f"INV-{i}", issued=opened, amount=Decimal("1200.00"),
                           currency="USD", status="sent")],
            "recent_activity": [{"text": note, "sources": ["note:n1"], "quote": note, "kind": "sentence", "label": "",
                                 "point": 1, "shortened": False}],
        }  # fmt: skip
        rows.append(
            CaseSummary(
                case=c, firm=firm, text="summary", content=content, writer="extractive", stale=False,
                verification={"kept": 1, "counts": {"points": 1, "ids": 1, "ids_kept": 1, "statements": 1, "kept": 1}}, written_at=now,
            )
        )  # fmt: skip
    CaseSummary.objects.bulk_create(rows, batch_size=2000)
    # Plant: 1% of the deadlines done, 1% of the invoices paid, 1% of the summaries stale for 10 nights.
    Deadline.objects.filter(case__in=cases[::100], key="d1").update(done=True)
    Invoice.objects.filter(case__in=cases[50::100]).update(status="paid")
    CaseSummary.objects.filter(case__in=cases[25::100]).update(stale=True, stale_since=now - dt.timedelta(days=10))
    return firm.pk


def run() -> None:
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from graph_memory import lint
    from graph_memory.models import LintFinding

    load_start = os.getloadavg()[0]
    print("migrating the scratch database ...", file=sys.stderr, flush=True)
    call_command("migrate", verbosity=0)
    print("seeding ...", file=sys.stderr, flush=True)
    firm_id = seed()
    timings = []
    for kind, check in lint.CHECKS:
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            found = check(firm_id=firm_id)
            timings.append((kind, time.perf_counter() - started, len(queries), len(found)))
    started = time.perf_counter()
    with CaptureQueriesContext(connection) as queries:
        run_ = lint.lint_firm(firm_id=firm_id, trigger="command")
    total, statements = time.perf_counter() - started, len(queries)
    assert run_.status == "done", run_.error
    stored = LintFinding.objects.filter(run=run_).count()

    import datetime as dt

    from bench.run import cpu_model

    load_end = os.getloadavg()[0]
    print("## Lint\n")
    print(
        f"Measured {dt.date.today().isoformat()} on {os.cpu_count()} cores ({cpu_model()}), embedded PostgreSQL 18; "
        f"load average (1 min) at start / end: {load_start:.1f} / {load_end:.1f} (above 2: other processes shared "
        "the machine and the timings are inflated). "
        f"`lint_firm` on one firm of {CASES:,} cases ({PARTIES:,} clients, {PARTIES:,} counterparties, "
        f"{4 * CASES:,} records, {CASES:,} stored summaries), 1% of deadlines done, 1% of invoices paid, "
        "1% of summaries stale for 10 nights (`bench/bench_lint.py`). Each check alone, then the whole run "
        "(checks, storing the findings, replacing the previous run):\n"
    )
    print("| check | wall time | SQL statements | findings |")
    print("| --- | ---: | ---: | ---: |")
    for kind, seconds, count, n in timings:
        print(f"| {kind} | {seconds:.2f} s | {count} | {n} |")
    print(f"| **whole run** | **{total:.2f} s** | {statements} | {stored} stored |")
    print(f"\nTarget: under 10 s per 10,000-case firm — {'met' if total < 10 else 'NOT met'}.")


def main() -> None:
    os.environ["GRAPH_MEMORY_EMBEDDER"] = "none"
    with django_on_scratch(DB_NAME):
        run()


if __name__ == "__main__":
    main()
