"""Timing side channels: does a lawyer's read take longer when many cases hidden from them match?

Runs in a scratch database (`bench_timing`) on the embedded server, created here
and dropped at the end. Three firms, each with one lawyer on the same five
visible cases: "absent" has nothing else; "hidden 400" and "hidden 2,000" add
that many cases of a colleague's, all for the client "Hub Holdings, Inc." and
each against its own "Hub Partners n LLC" (hidden-heavy: every one matches).
For lookup (`q=hub`), conflicts (`name=Hub Holdings`), walk and brief (of the
hub's node in the hidden-heavy firms, of an id that names nothing in "absent")
it takes 200 samples per firm, interleaved (absent, heavy, absent, heavy ...),
through the service functions the API views call (no HTTP: the difference
under test is the database's, and the HTTP stack only adds noise), and reports
medians, the difference, and a two-sided Mann-Whitney U p-value (normal
approximation). Target (issue 15): p > 0.01, or a difference under 1 ms that
does not grow from 400 to 2,000 hidden cases. Prints one markdown section.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import random
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scratch import django_on_scratch  # noqa: E402

DB_NAME = "bench_timing"
VISIBLE, SAMPLES, WARMUP = 5, 200, 20
HIDDEN_COUNTS = (2_000, 20_000)


def mann_whitney_p(a: list[float], b: list[float]) -> float:
    """Two-sided p-value of the Mann-Whitney U test, normal approximation with tie correction."""
    pooled = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    ranks = [0.0] * len(pooled)
    ties = 0.0
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        t = j - i + 1
        ties += t**3 - t
        i = j + 1
    n1, n2 = len(a), len(b)
    r1 = sum(r for r, (_, group) in zip(ranks, pooled, strict=True) if group == 0)
    u = r1 - n1 * (n1 + 1) / 2
    n = n1 + n2
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))))
    if sigma == 0:
        return 1.0
    z = (abs(u - n1 * n2 / 2) - 0.5) / sigma
    return math.erfc(max(z, 0) / math.sqrt(2))


def build_firm(slug: str, hidden: int) -> tuple[Any, Any, str | None]:
    """(firm, lawyer, hub node id or None): the lawyer's VISIBLE cases, and `hidden` hub cases of a colleague's."""
    from accounts.models import Firm, User
    from graph_memory import services
    from graph_memory.models import Node
    from practice.models import Case, CaseCounterparty, CaseUserObjectPermission, Client, Counterparty
    from practice.permissions import view_case_permission

    firm = Firm.objects.create(slug=slug, name=f"{slug} LLP")
    lawyer = User.objects.create(username=f"{slug}-lawyer", name="Few Cases", firm=firm)
    colleague = User.objects.create(username=f"{slug}-colleague", name="Many Cases", firm=firm)
    view_case = view_case_permission()
    specs = [(lawyer, f"Visible matter {i}", f"Visible Client {i} Ltd", f"Visible Opponent {i} LLC") for i in range(VISIBLE)]
    hub = Client.objects.create(firm=firm, key="hub", name="Hub Holdings, Inc.") if hidden else None
    specs += [(colleague, f"Hub matter {i}", None, f"Hub Partners {i} LLC") for i in range(hidden)]
    clients = Client.objects.bulk_create(
        Client(firm=firm, key=f"cl-{i}", name=name) for i, (_, _, name, _) in enumerate(specs) if name
    )
    cases = Case.objects.bulk_create(
        Case(firm=firm, key=f"2026-{i:05d}", title=title, opened=dt.date(2026, 1, 1), owner=owner,
             client=clients[i] if client_name else hub)
        for i, (owner, title, client_name, _) in enumerate(specs)
    )  # fmt: skip
    cps = Counterparty.objects.bulk_create(
        Counterparty(firm=firm, key=f"cp-{i}", name=name) for i, (*_, name) in enumerate(specs)
    )
    CaseCounterparty.objects.bulk_create(CaseCounterparty(firm=firm, case=c, counterparty=p) for c, p in zip(cases, cps, strict=True))
    CaseUserObjectPermission.objects.bulk_create(
        CaseUserObjectPermission(content_object=c, user=c.owner, permission=view_case) for c in cases
    )
    services.graph_rebuild_firm(firm_id=firm.pk)
    hub_id = str(Node.objects.get(firm=firm, kind=Node.Kind.CLIENT, ref_id=hub.pk).pk) if hub else None
    return firm, lawyer, hub_id


def sample(read: Any) -> float:
    from graph_memory.wall import access

    started = time.perf_counter()
    try:
        read()
    except access.NotFound:
        pass
    return (time.perf_counter() - started) * 1000


def main() -> None:
    with django_on_scratch(DB_NAME):
        run()


def run() -> None:
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test import override_settings

    from graph_memory import services
    from graph_memory.wall import sight

    load_before = os.getloadavg()[0]
    print("migrating the scratch database ...", file=sys.stderr, flush=True)
    call_command("migrate", verbosity=0)
    _, absent_lawyer, _ = build_firm("absent", 0)
    heavy = {n: build_firm(f"hidden-{n}", n) for n in HIDDEN_COUNTS}
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    unknown_id = str(uuid.UUID(int=random.Random(15).getrandbits(128)))

    def reads(viewer: Any, node_id: str) -> dict[str, Any]:
        return {
            "lookup `q=hub`": lambda: services.nodes_lookup(viewer=viewer, q="hub"),
            "conflicts `name=Hub Holdings`": lambda: services.conflicts_check(viewer=viewer, name="Hub Holdings"),
            "walk of the hub node": lambda: services.node_neighbors(viewer=viewer, node_id=node_id),
            "brief of the hub node": lambda: services.node_brief(viewer=viewer, node_id=node_id),
        }

    rows = []
    # The lawyer's reads both ways: from the sight (graph_memory.wall.sight, kept by its triggers) and
    # from the cases they may open (LAWYER_SIGHT off: what a read does after a TRUNCATE until the sight is built).
    for way, overrides in (("sight", {}), ("cases", {"LAWYER_SIGHT": False})):
        with override_settings(GRAPH_MEMORY={**settings.GRAPH_MEMORY, **overrides}):
            for n, (_, lawyer, hub_id) in heavy.items():
                base, loaded = reads(absent_lawyer, unknown_id), reads(lawyer, hub_id)
                for name in base:
                    for _ in range(WARMUP):
                        sample(base[name]), sample(loaded[name])
                    a, b = [], []
                    for _ in range(SAMPLES):  # interleaved, so drift in the machine's load hits both alike
                        a.append(sample(base[name]))
                        b.append(sample(loaded[name]))
                    rows.append((f"{name}, from their {way}", n, statistics.median(a), statistics.median(b),
                                 mann_whitney_p(a, b)))  # fmt: skip
    assert sight.current()

    print("## Timing side channels\n")
    print(
        f"Measured {dt.date.today().isoformat()} by `bench/bench_timing.py` on {os.cpu_count()} cores, embedded "
        f"PostgreSQL 18, through the service functions the API views call (no HTTP). A lawyer on {VISIBLE} cases; "
        "in the hidden-heavy firm a colleague's N cases are all for \"Hub Holdings, Inc.\" and each against its own "
        "\"Hub Partners n LLC\", in the other firm they are absent (walk and brief: the hub's node there, an id that "
        f"names nothing here). {SAMPLES} interleaved samples each after {WARMUP} warm-up calls; p is a two-sided "
        "Mann-Whitney U test (normal approximation). Each read twice: from the sight (kept by its "
        "triggers: graph_memory/wall/sight.py) and from the cases they may open (LAWYER_SIGHT off, as after a TRUNCATE until the sight is built). "
        "Target (issue 15): p > 0.01, or a difference under 1 ms that "
        f"does not grow with N. Load average (1 min) at start / end: {load_before:.1f} / {os.getloadavg()[0]:.1f}.\n"
    )
    print("| read | hidden cases N | median absent ms | median hidden-heavy ms | difference ms | p | target |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for name, n, a, b, p in rows:
        other = [r for r in rows if r[0] == name]
        growth = (other[-1][3] - other[-1][2]) - (other[0][3] - other[0][2])
        met = p > 0.01 or (abs(b - a) < 1 and growth < 0.1)
        print(f"| {name} | {n:,} | {a:.3f} | {b:.3f} | {b - a:+.3f} | {p:.2g} | {'met' if met else 'NOT met'} |")


if __name__ == "__main__":
    main()
