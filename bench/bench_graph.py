"""Connection map: full and no-op rebuilds, one-case sync, and the three reads on a large firm.

Runs in a scratch database (`bench_graph`) on the embedded server, created
here and dropped at the end; dev and test data are never touched. The firm
is generated with bulk inserts (no per-row signals): 10,000 cases, 30
lawyers, about 60,000 edges. Prints one markdown section on stdout.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scratch import django_on_scratch  # noqa: E402

DB_NAME = "bench_graph"
CASES, LAWYERS, CLIENTS, COUNTERPARTIES = 10_000, 30, 2_000, 5_000
READS = 200  # timed calls per read kind and viewer
SYNCS = 50

WORDS = (
    "Northwind Brightline Meridian Castell Parkside Harbor Summit Granite Cedar Falcon Orion Atlas Vertex Juniper "
    "Sterling Beacon Copper Maple Aurora Pioneer Redwood Silver Trident Willow Zephyr Evergreen Keystone Lakeshore "
    "Monarch Horizon Quarry Riverside Sable Tundra Union Valley Westfield Yardley Zenith Ashford Bramble Crescent"
).split()
TRADES = "Holdings Logistics Foods Components Realty Partners Capital Energy Systems Health Media Labs Group".split()
FORMS = ["Inc.", "LLC", "Corp.", "Ltd", "GmbH", "S.A.", "plc", "Corporation", ""]


def company(rng: random.Random) -> str:
    return " ".join(w for w in (rng.choice(WORDS), rng.choice(TRADES), rng.choice(FORMS)) if w)


def generate_firm() -> tuple[Any, list[Any]]:
    """A firm of CASES cases, bulk-inserted: signals do not fire, so the map starts empty."""
    from accounts.models import Firm, User
    from practice.models import Case, CaseCounterparty, CaseTeamMember, CaseUserObjectPermission, Client, Counterparty
    from practice.permissions import view_case_permission

    rng = random.Random(2026)
    firm = Firm.objects.create(slug="bench-firm", name="Bench Firm LLP")
    admin = User.objects.create(username="bench-admin", name="Bench Admin", firm=firm, role=User.Role.ADMIN)
    lawyers = User.objects.bulk_create(
        User(username=f"lawyer{i:02d}", name=f"{rng.choice(WORDS)} Lawyer{i:02d}", firm=firm) for i in range(LAWYERS)
    )
    clients = Client.objects.bulk_create(Client(firm=firm, key=f"cl-{i}", name=company(rng)) for i in range(CLIENTS))
    cps = Counterparty.objects.bulk_create(
        Counterparty(firm=firm, key=f"cp-{i}", name=company(rng)) for i in range(COUNTERPARTIES)
    )
    cases = Case.objects.bulk_create(
        (
            Case(
                firm=firm, key=f"2026-{i:05d}", title=f"{rng.choice(WORDS)} v. {rng.choice(WORDS)} ({i})",
                opened=dt.date(2026, 1, 1), client=rng.choice(clients), owner=rng.choice(lawyers),
            )
            for i in range(CASES)
        ),
        batch_size=2000,
    )  # fmt: skip
    team, links, grants = [], [], []
    view_case = view_case_permission()
    for case in cases:
        members = {case.owner, *rng.sample(lawyers, rng.randint(2, 4))}
        team += [CaseTeamMember(firm=firm, case=case, user=u) for u in members if u != case.owner]
        links.append(CaseCounterparty(firm=firm, case=case, counterparty=rng.choice(cps)))
        grants += [CaseUserObjectPermission(content_object=case, user=u, permission=view_case) for u in members]
    CaseTeamMember.objects.bulk_create(team, batch_size=5000)
    CaseCounterparty.objects.bulk_create(links, batch_size=5000)
    CaseUserObjectPermission.objects.bulk_create(grants, batch_size=5000)
    return firm, [admin, *lawyers]


def row_fingerprint() -> str:
    """A digest of every node's and edge's (id, xmin): it changes if PostgreSQL writes any row."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT md5(string_agg(id::text || ':' || xmin::text, ',' ORDER BY id)) FROM "
            "(SELECT id, xmin FROM graph_memory_node UNION ALL SELECT id, xmin FROM graph_memory_edge) rows"
        )
        return cursor.fetchone()[0]


def timed(fn: Any) -> tuple[float, int, Any]:
    """(milliseconds, queries, result) of one call."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        result = fn()
        elapsed = (time.perf_counter() - started) * 1000
    return elapsed, len(queries), result


def sight_rows(written_after: int) -> int:
    """Rows of the sight whose current version a transaction after `written_after` (a transaction id)
    wrote: inserted or updated (the scratch database is young: its transaction ids have not wrapped)."""
    from django.db import connection

    from graph_memory.models import Sight

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {Sight._meta.db_table} WHERE xmin::text::bigint > %s", [written_after])
        return cursor.fetchone()[0]


def sight_changes() -> int:
    """Rows of the sight the current transaction inserted, updated or deleted so far (savepoints included)."""
    from django.db import connection

    from graph_memory.models import Sight

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_xact_user_tables "
            "WHERE relid IN (SELECT %s::regclass UNION SELECT inhrelid FROM pg_inherits WHERE inhparent = %s::regclass)",
            [Sight._meta.db_table, Sight._meta.db_table],
        )
        return int(cursor.fetchone()[0])


def current_xid() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_xact_id()::text::bigint")
        return cursor.fetchone()[0]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    with django_on_scratch(DB_NAME):
        run()


def run() -> None:
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.test import override_settings

    from graph_memory import services
    from graph_memory.models import Edge, Node, Sight
    from graph_memory.wall import access, sight
    from practice.models import Case, Client

    load_before = os.getloadavg()[0]
    print("migrating the scratch database ...", file=sys.stderr, flush=True)
    call_command("migrate", verbosity=0)
    print("generating the firm ...", file=sys.stderr, flush=True)
    started = time.perf_counter()
    firm, (admin, *lawyers) = generate_firm()
    generate_s = time.perf_counter() - started
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")

    print("rebuilding ...", file=sys.stderr, flush=True)
    full_ms, full_queries, full = timed(lambda: services.graph_rebuild_firm(firm_id=firm.pk))
    full_sight = Sight.objects.count()  # written by the sight's triggers in the rebuild's own statements
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE graph_memory_node; ANALYZE graph_memory_edge")
    nodes, edges = Node.objects.filter(firm=firm).count(), Edge.objects.filter(firm=firm).count()
    before = row_fingerprint()
    noop_runs = [timed(lambda: services.graph_rebuild_firm(firm_id=firm.pk)) for _ in range(3)]
    noop_written = sum(r[2].written for r in noop_runs)
    rewritten = "none" if row_fingerprint() == before else "SOME"

    print("syncing single cases ...", file=sys.stderr, flush=True)
    rng = random.Random(7)
    sample_cases = rng.sample(list(Case.objects.filter(firm=firm).values_list("pk", flat=True)), SYNCS)
    sync_ms, sync_queries, sync_written, sync_sight = [], set(), 0, 0
    for case_id in sample_cases:
        # Edit and sync in one transaction, timing the sync alone; the signal's
        # own after-commit sync then finds nothing left to do.
        with transaction.atomic():
            case = Case.objects.get(pk=case_id)
            case.team.add(rng.choice(lawyers), through_defaults={"firm": firm})
            case.counterparties.clear()
            before = sight_changes()
            ms, queries, changes = timed(lambda case_id=case_id: services.graph_sync_case(case_id=case_id))
            sync_sight += sight_changes() - before
        sync_ms.append(ms)
        sync_queries.add(queries)
        sync_written += changes.written
    doomed = Case.objects.get(pk=sample_cases[0])
    # Deleting a case that still has a team trips a host bug (its permission
    # receiver re-grants access mid-delete), so the team goes first.
    doomed.team.clear()
    with transaction.atomic():
        doomed.delete()
        delete_ms, delete_queries, _ = timed(lambda: services.graph_sync_case(case_id=sample_cases[0]))
    client = Client.objects.filter(firm=firm).order_by("pk").first()
    client.name = "Renamed Holdings AG"
    since = current_xid()
    relabel_ms, _, _ = timed(client.save)  # no transaction open: the label refresh runs at once
    relabel_sight = sight_rows(since)
    after_sync = services.graph_rebuild_firm(firm_id=firm.pk)

    print("reading ...", file=sys.stderr, flush=True)
    all_nodes = list(Node.objects.filter(firm=firm).values_list("pk", "kind", "label"))
    lawyer = lawyers[0]
    lawyer_cases = access.visible_cases(lawyer).count()
    few = few_cases_lawyer(firm)  # its own random stream: the figures above keep theirs
    build_ms, build_queries, _ = timed(sight.build)
    held = [(who, Sight.objects.filter(holder=viewer.pk).count())
            for who, viewer in ((f"{lawyer_cases:,} cases", lawyer), (f"{FEW:,} cases", few))]  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE graph_memory_sight")
    # Each lawyer twice: from the sight (kept by the triggers), and from the cases they may open
    # (LAWYER_SIGHT off: the statements every read used before, and still uses after a TRUNCATE until the build).
    viewers = [("firm admin", admin, True)]
    for viewer, size in ((lawyer, lawyer_cases), (few, FEW)):
        viewers += [
            (f"lawyer ({size:,} cases), sight", viewer, True),
            (f"lawyer ({size:,} cases), cases", viewer, False),
        ]
    open_case_nodes = {
        who: sorted(
            Node.objects.filter(
                firm=firm, kind=Node.Kind.CASE, ref_id__in=access.visible_cases(viewer).values("pk")
            ).values_list("pk", flat=True)
        )
        for who, viewer, _ in viewers
    }
    by_kind = {kind: [n[0] for n in all_nodes if n[1] == kind] for kind in ("lawyer", "case", "client")}
    off = {**settings.GRAPH_MEMORY, "LAWYER_SIGHT": False}

    def lookup(viewer: Any, text: str) -> Any:
        return services.nodes_lookup(viewer=viewer, q=text).results or None

    def conflicts(viewer: Any, text: str) -> Any:
        return services.conflicts_check(viewer=viewer, name=text).matches or None

    def brief(viewer: Any, node_id: Any) -> Any:
        try:
            return services.node_brief(viewer=viewer, node_id=node_id).cases or None
        except access.NotFound:
            return None

    kinds = [
        ("walk from a lawyer node", walk, lambda who: rng.choice(by_kind["lawyer"])),
        ("walk from a case node", walk, lambda who: rng.choice(by_kind["case"])),
        ("walk from a case node they may open", walk, lambda who: rng.choice(open_case_nodes[who])),
        ("walk from a client node", walk, lambda who: rng.choice(by_kind["client"])),
        ("brief of a client node", brief, lambda who: rng.choice(by_kind["client"])),
        ("lookup (prefix or word of a name)", lookup, lambda who: rng.choice(WORDS)[: rng.randint(3, 8)]),
        ("lookup (case number)", lookup, lambda who: f"2026-{rng.randrange(CASES):05d}"),
        ("conflict check", conflicts, lambda who: company(rng)),
    ]
    reads: dict[tuple[str, str], tuple[list[float], set[int], list[int]]] = {}
    for label, read, pick in kinds:
        for _ in range(READS):
            # The same start for every viewer, but for "they may open": their own.
            shared = None if "they may open" in label else pick("")
            # Every viewer in turn on the same start, in a fresh order: drift in the machine's load
            # falls on all of them alike.
            for who, viewer, with_sight in rng.sample(viewers, len(viewers)):
                start = pick(who) if "they may open" in label else shared
                with override_settings(GRAPH_MEMORY=settings.GRAPH_MEMORY if with_sight else off):
                    t, q, found = timed(lambda viewer=viewer, start=start, read=read: read(viewer, start))
                ms, queries, answered = reads.setdefault((label, who), ([], set(), []))
                ms.append(t)
                queries.add(q)
                answered.append(found is not None)
    current = sight.current()

    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    print("## Connection map\n")
    print(
        f"Measured {dt.date.today().isoformat()} on {os.cpu_count()} cores ({cpu}), embedded PostgreSQL 18. "
        f"Generated firm: {CASES:,} cases, {LAWYERS} lawyers, {CLIENTS:,} clients, {COUNTERPARTIES:,} counterparties "
        f"(generated in {generate_s:.1f} s with bulk inserts, no signals) → {nodes:,} nodes, {edges:,} edges. "
        f"Load average (1 min) at start / end: {load_before:.1f} / {os.getloadavg()[0]:.1f}; figures above "
        f"{os.cpu_count()} mean other processes shared the machine and the timings are inflated.\n"
    )
    print("| operation | time | SQL queries | rows written |")
    print("| --- | ---: | ---: | ---: |")
    print(
        f"| full rebuild (empty map → {nodes + edges:,} rows) | {full_ms / 1000:.2f} s | {full_queries} "
        f"| {full.written:,}; sight {full_sight:,} |"
    )
    noop = [r[0] for r in noop_runs]
    print(
        f"| no-op rebuild (best / worst of 3) | {min(noop) / 1000:.2f} / {max(noop) / 1000:.2f} s | {noop_runs[0][1]} "
        f"| {noop_written} (rows with a new xmin: {rewritten}) |"
    )
    print(
        f"| sync one case after a team and counterparty edit (p50 / p95 of {SYNCS}) | {percentile(sync_ms, 0.5):.1f} / "
        f"{percentile(sync_ms, 0.95):.1f} ms | {'/'.join(map(str, sorted(sync_queries)))} "
        f"| {sync_written / SYNCS:.1f} per case; sight {sync_sight / SYNCS:.1f} |"
    )
    print(
        f"| sync a deleted case (its edges cascade; orphan sweep of the firm) | {delete_ms:.1f} ms | {delete_queries} | |"
    )
    print(f"| rename a client (save + label refresh) | {relabel_ms:.1f} ms | | sight {relabel_sight} |")
    print(f"| full rebuild after all the syncs (must write nothing) | | | {after_sync.written} |")
    print(
        "\nRows written: the map's own; \"sight\": rows of graph_memory_sight the sight's triggers wrote in the map's "
        "own statements: those the full rebuild left, those each sync inserted, updated or deleted, those the rename "
        "inserted or updated (a row that already held the case under the same names is not rewritten). The times "
        "include them."
    )
    print(f"\nReads ({READS} calls each, random starting points, every viewer on each in turn; default page of 25):\n")
    print("| read | viewer | p50 ms | p95 ms | vs firm admin | SQL queries | answered |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    labels, order = [k[0] for k in kinds], [who for who, _, _ in viewers]
    for (label, who), (ms, queries, answered) in sorted(
        reads.items(), key=lambda r: (labels.index(r[0][0]), order.index(r[0][1]))
    ):
        admin_p50 = statistics.median(reads[(label, "firm admin")][0])
        ratio = "" if who == "firm admin" else f"{statistics.median(ms) / admin_p50:.2f} x"
        print(
            f"| {label} | {who} | {statistics.median(ms):.2f} | {percentile(ms, 0.95):.2f} | {ratio} "
            f"| {'/'.join(map(str, sorted(queries)))} | {sum(answered)}/{len(ms)} |"
        )
    print(
        '\n"sight": the lawyer\'s reads answer from the rows of graph_memory_sight their grants hold (graph_memory/wall/sight.py), '
        "built throughout the reads: " + ("yes" if current else "NO") + '. "cases": the same lawyer with '
        "LAWYER_SIGHT off, from the cases they may open (what a read does after a TRUNCATE until the sight is built, plus one "
        'statement). The "vs firm admin" column is the p50 against the firm admin\'s for the same read. Building the whole sight '
        f"from nothing (every grant of the database): {build_ms:.0f} ms, {build_queries} statements, {Sight.objects.count():,} rows; "
        + "; ".join(f"the lawyer on {who} holds {rows:,}" for who, rows in held)
        + "."
    )


FEW = 100  # a lawyer on 1% of the firm


def few_cases_lawyer(firm: Any) -> Any:
    """A lawyer granted FEW random cases of the firm (issue 14 speaks of lawyers on 1 to 10%)."""
    from accounts.models import User
    from practice.models import Case, CaseUserObjectPermission
    from practice.permissions import view_case_permission

    user = User.objects.create(username="few-cases", name="Few Cases", firm=firm)
    ids = random.Random(11).sample(sorted(Case.objects.filter(firm=firm).values_list("pk", flat=True)), FEW)
    CaseUserObjectPermission.objects.bulk_create(
        CaseUserObjectPermission(content_object_id=i, user=user, permission=view_case_permission()) for i in ids
    )
    return user


def walk(viewer: Any, node_id: Any) -> Any:
    """A walk as the API runs it; None where the viewer reaches the node through no case they may open."""
    from graph_memory import services
    from graph_memory.wall import access

    try:
        return services.node_neighbors(viewer=viewer, node_id=node_id)
    except access.NotFound:
        return None


if __name__ == "__main__":
    main()
