"""The served ledger's cost (issue 31, item 3): reads with and without their ledger row, alone and 8 at once.

Runs in a scratch database (`bench_served_ledger`) on the embedded server,
created here and dropped at the end. One firm of 2,000 cases, written in bulk,
each with a stored summary; a lawyer (Lena) owns 100 of them. Five
representative reads go through the API as Lena (Django's test client, token
authentication): a case's brief, a walk from a case, a keyword search, a
conflict check and a name lookup. Each is timed with the ledger (one INSERT per
answer, sent before the answer is rendered and confirmed before it leaves:
`served_ledger.send`) and with the row switched off (all the view does for it: the cases its answer
shows, the query's fingerprint, the INSERT); then 8 threads read the
same firm at once (a connection each), with and without the ledger, and with
the ledger while the sealer seals the firm's rows in a loop beside them: what
the readers would wait on if they waited on the chain. Prints one markdown section.
"""

from __future__ import annotations

import contextlib
import os
import random
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scratch import django_on_scratch, percentile, progress  # noqa: E402

DB_NAME = "bench_served_ledger"
CASES = 2_000
LENA_CASES = 100
READS = int(os.environ.get("BENCH_LEDGER_READS", "200"))
THREADS = 8
PER_THREAD = int(os.environ.get("BENCH_LEDGER_PER_THREAD", "20"))
ROUNDS = 3


def seed() -> dict[str, Any]:
    import datetime as dt

    from django.utils import timezone

    from accounts.models import Firm, User
    from graph_memory.map.graph import graph_rebuild_firm
    from graph_memory.models import CaseSummary
    from practice.models import Case, CaseCounterparty, CaseUserObjectPermission, Client, Counterparty
    from practice.permissions import view_case_permission

    firm = Firm.objects.create(slug="bench-ledger", name="Bench Ledger LLP")
    lena = User.objects.create(username="lena", firm=firm, name="Lena Ortiz")
    others = User.objects.bulk_create(User(username=f"lawyer{i}", firm=firm) for i in range(20))
    clients = Client.objects.bulk_create(
        Client(firm=firm, key=f"c{i}", name=f"Client{i} Shipping Ltd") for i in range(CASES)
    )
    parties = Counterparty.objects.bulk_create(
        Counterparty(firm=firm, key=f"p{i}", name=f"Party{i} Marine AB") for i in range(CASES)
    )
    cases = Case.objects.bulk_create(
        Case(firm=firm, key=f"2026-{i:05d}", title=f"Matter {i} cargo claim", opened=dt.date(2026, 1, 15),
             description=f"Cargo claim number {i}.", client=clients[i],
             owner=lena if i < LENA_CASES else others[i % 20])
        for i in range(CASES)
    )  # fmt: skip
    CaseCounterparty.objects.bulk_create(
        CaseCounterparty(firm=firm, case=c, counterparty=parties[i]) for i, c in enumerate(cases)
    )
    permission = view_case_permission()
    CaseUserObjectPermission.objects.bulk_create(
        CaseUserObjectPermission(content_object=c, user_id=c.owner_id, permission=permission) for c in cases
    )
    graph_rebuild_firm(firm_id=firm.pk)
    now = timezone.now()
    CaseSummary.objects.bulk_create(
        [CaseSummary(case=c, firm=firm, stale=False, written_at=now,
                     text=f"Cargo claim {i} for Client{i} Shipping Ltd against Party{i} Marine AB. " * 5)
         for i, c in enumerate(cases)],
        batch_size=1000,
    )  # fmt: skip
    return {"firm": firm, "lena": lena, "case": cases[7]}


def _reads(case_node: str) -> list[tuple[str, str, dict[str, str]]]:
    return [
        ("brief of a case", f"/api/memory/nodes/{case_node}/brief/", {}),
        ("walk from a case", f"/api/memory/nodes/{case_node}/neighbors/", {}),
        ("search (keywords)", "/api/memory/search/", {"q": "cargo claim Client7"}),
        ("conflict check", "/api/memory/conflicts/", {"name": "Client7 Shipping"}),
        ("name lookup", "/api/memory/nodes/", {"q": "Client4"}),
    ]


def _client(token: str) -> Any:
    from django.test import Client as HttpClient

    return HttpClient(headers={"Authorization": f"Token {token}"})


def _time(client: Any, path: str, params: dict[str, str], n: int) -> list[float]:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        response = client.get(path, params)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (path, response.status_code, response.content[:200])
    return times


class _Replaced:
    """The answer's whole ledger row (the API view's `_ledger_row`: the cases its answer shows, the query's
    fingerprint and the INSERT) replaced by `instead` for the block."""

    def __init__(self, instead: Callable[..., None]) -> None:
        self.instead = instead

    def __enter__(self) -> None:
        from graph_memory.api.views import MemoryWiring

        self.row = MemoryWiring.__dict__["_ledger_row"]
        MemoryWiring._ledger_row = self.instead  # type: ignore[method-assign]

    def __exit__(self, *exc: Any) -> None:
        from graph_memory.api.views import MemoryWiring

        MemoryWiring._ledger_row = self.row  # type: ignore[method-assign]


def _no_row(view: Any, *args: Any, **kwargs: Any) -> None:
    """The same answer without its row (what the ledger costs)."""


def _select_one(view: Any, *args: Any, **kwargs: Any) -> None:
    """One `SELECT 1` in the row's place: what any write the answer waits for costs at least, one round trip."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


class _Flushed:
    """SERVED_LEDGER_SYNCHRONOUS_COMMIT = True: the row's commit waits for its WAL flush (the default does not)."""

    def __enter__(self) -> None:
        os.environ["GRAPH_MEMORY_SERVED_LEDGER_SYNCHRONOUS_COMMIT"] = "1"

    def __exit__(self, *exc: Any) -> None:
        del os.environ["GRAPH_MEMORY_SERVED_LEDGER_SYNCHRONOUS_COMMIT"]


def _concurrent(token: str, reads: list[tuple[str, str, dict[str, str]]], *, sealing: bool = False) -> list[float]:
    from django.db import connection

    from graph_memory.ledger import served_chain

    times: list[list[float]] = [[] for _ in range(THREADS)]
    start, stop = threading.Barrier(THREADS + 1), threading.Event()

    def reader(i: int) -> None:
        client = _client(token)
        start.wait()
        for n in range(PER_THREAD):
            _, path, params = reads[(i + n) % len(reads)]
            times[i] += _time(client, path, params, 1)
        connection.close()

    def sealer() -> None:
        while not stop.is_set():
            served_chain.seal_all()
            time.sleep(0.05)
        connection.close()

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(THREADS)]
    extra = threading.Thread(target=sealer) if sealing else None
    for thread in threads:
        thread.start()
    if extra:
        extra.start()
    start.wait()
    for thread in threads:
        thread.join()
    stop.set()
    if extra:
        extra.join()
    return [t for per in times for t in per]


def _insert_times(world: dict[str, Any], *, unknown: bool = False) -> list[float]:
    """The row alone: `served_ledger.record` as a read calls it, autocommit (its own transaction and commit).
    `unknown`: the process has not resolved the case node yet (the first row naming that case), so the row
    looks it up in the map."""
    from graph_memory.ledger import served_ledger
    from graph_memory.models import Node

    case_node = str(Node.objects.get(kind="case", ref_id=world["case"].pk).pk)
    times = []
    for n in range(READS):
        if unknown:
            served_ledger.case_nodes.forget([case_node])
        started = time.perf_counter()
        served_ledger.record(
            firm_id=world["firm"].pk, viewer_id=world["lena"].pk, endpoint="api:NodeBriefApi", status="ok",
            query={"n": n}, case_node_ids=[case_node],
        )  # fmt: skip
        times.append((time.perf_counter() - started) * 1000)
    return times


def run() -> None:
    import datetime as dt

    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from bench.run import cpu_model
    from graph_memory.ledger import served_chain
    from graph_memory.models import Node, ServedRow

    load_start = os.getloadavg()[0]
    progress("migrating the scratch database ...")
    call_command("migrate", verbosity=0)
    progress("seeding ...")
    world = seed()
    token = Token.objects.create(user=world["lena"]).key
    reads = _reads(str(Node.objects.get(kind="case", ref_id=world["case"].pk).pk))
    client = _client(token)
    for _, path, params in reads:  # warm up: plans, caches, the permission id
        _time(client, path, params, 3)
    progress("single reads ...")
    single: list[tuple[str, float, float, float, float]] = []
    rng = random.Random(31)
    ways: dict[str, Callable[[], Any]] = {
        "without": lambda: _Replaced(_no_row), "with": contextlib.nullcontext,
        "flushed": _Flushed, "round trip": lambda: _Replaced(_select_one),
    }  # fmt: skip
    for label, path, params in reads:
        # Interleaved, the four ways once each per round, in a fresh random order: a busy neighbour slows all
        # alike, and none always follows the same one (a fixed order let one way pay for the one before it).
        times: dict[str, list[float]] = {way: [] for way in ways}
        for _ in range(READS):
            for way in rng.sample(list(ways), len(ways)):
                with ways[way]():
                    times[way] += _time(client, path, params, 1)
        single.append((label, *(statistics.median(times[w]) for w in ("without", "with", "flushed", "round trip"))))
    inserts = _insert_times(world)
    first_sightings = _insert_times(world, unknown=True)
    load_end = os.getloadavg()[0]  # before the 8 threads below, which load the machine themselves
    with _Flushed():
        flushed_inserts = _insert_times(world)
    progress("8 concurrent readers ...")
    off: list[float] = []
    on: list[float] = []
    sealing: list[float] = []
    for _ in range(ROUNDS):  # the three ways in turn, ROUNDS times, pooled: load drifts across a run
        with _Replaced(_no_row):
            off += _concurrent(token, reads)
        on += _concurrent(token, reads)
        sealing += _concurrent(token, reads, sealing=True)
    rows = ServedRow.objects.count()
    served_chain.seal_all()
    check = served_chain.verify_firm(firm_id=world["firm"].pk)
    assert check.ok and check.rows == rows, check.problems

    print("## Served ledger\n")
    print(
        f"Measured {dt.date.today().isoformat()} on {os.cpu_count()} cores ({cpu_model()}), embedded PostgreSQL 18; "
        f"load average (1 min) at the start and after the single reads: {load_start:.1f} / {load_end:.1f}"
        + (
            " (above the cores: other processes shared the machine and absolute timings are inflated; the "
            "with/without requests were taken back to back to keep them comparable)"
            if max(load_start, load_end) > (os.cpu_count() or 1)
            else ""
        )
        + f". Reads through the API as a lawyer who may open {LENA_CASES} of a "
        f'{CASES:,}-case firm (`bench/bench_served_ledger.py`), {READS} of each; "without" is the same request '
        "with its row switched off (all the view does for it: the cases its answer shows, the query's fingerprint, "
        "the INSERT); the last column replaces all that by one `SELECT 1`, the round "
        "trip any write the answer waits for costs; the four taken in turn, in a fresh random order each round. Goal: the ledger adds at most 10 % to a "
        "read's p50.\n"
    )
    print(
        "| read | p50 without | p50 with the ledger (default) | added | p50 with it, `SERVED_LEDGER_SYNCHRONOUS_COMMIT` "
        "True | added | p50 with a `SELECT 1` in its place | added |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, bare, ledgered, flushed_p50, trip in single:
        print(
            f"| {label} | {bare:.1f} ms | {ledgered:.1f} ms | {(ledgered / bare - 1) * 100:+.0f} % "
            f"| {flushed_p50:.1f} ms | {(flushed_p50 / bare - 1) * 100:+.0f} % "
            f"| {trip:.1f} ms | {(trip / bare - 1) * 100:+.0f} % |"
        )
    print(
        f"\nThe row alone (`served_ledger.record`: one INSERT, its own transaction): p50 "
        f"{statistics.median(inserts):.2f} ms, p90 {percentile(inserts, 90):.2f} ms over {READS} when its commit "
        f"does not wait for the WAL flush (the default); p50 {statistics.median(flushed_inserts):.2f} ms, p90 "
        f"{percentile(flushed_inserts, 90):.2f} ms when it does (`SERVED_LEDGER_SYNCHRONOUS_COMMIT` True). "
        "A row names its cases by case node ids, which the process resolves once and then knows (a node's id "
        "is fixed by its firm and case): the reads above, asked again and again, name known nodes. The first row "
        f"naming a case in a process looks its node up in the map: p50 {statistics.median(first_sightings):.2f} "
        f"ms, p90 {percentile(first_sightings, 90):.2f} ms (default commit)."
    )
    print(
        f"\n{THREADS} threads (a database connection each) reading the same firm at once, {PER_THREAD} reads each, "
        f"{ROUNDS} rounds of the three ways in turn, pooled; "
        "the five reads in turn. Readers append unsealed rows with one INSERT and take no lock; the sealer "
        "(`served_chain.seal_all`, in a loop every 50 ms in the third row) takes the firm's advisory lock, which no "
        "reader ever asks for. Goal: no reader waits on the chain (the rows with the ledger, and with the sealer "
        f"beside them, match the row without). All {rows:,} rows written were then sealed and verified.\n"
    )
    print("| 8 concurrent readers | p50 | p90 | max |")
    print("| --- | ---: | ---: | ---: |")
    for label, times in (
        ("without the ledger", off),
        ("with the ledger", on),
        ("with the ledger, sealer running", sealing),
    ):
        print(f"| {label} | {statistics.median(times):.1f} ms | {percentile(times, 90):.1f} ms | {max(times):.1f} ms |")


def main() -> None:
    os.environ["GRAPH_MEMORY_EMBEDDER"] = "none"
    os.environ["GRAPH_MEMORY_THROTTLE_RATE"] = "1000000/min"
    with django_on_scratch(DB_NAME):
        run()


if __name__ == "__main__":
    main()
