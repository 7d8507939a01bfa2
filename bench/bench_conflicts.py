"""Conflict checks on name variants: recall and precision per variant class, and latency.

Two firms of 10,000 parties each (tests/name_variants.py: companies and people,
with near-miss distractors), one case per client-counterparty pair, loaded
into a scratch database (`bench_conflicts`) on the embedded server, created
here and dropped at the end. Queries are labelled variants of one firm's
parties, asked through `services.conflicts_check` by its firm admin and by a
lawyer who may open 10% of its cases. Prints one markdown section on stdout;
progress goes to stderr.
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scratch import django_on_scratch, percentile, progress  # noqa: E402

DB_NAME = "bench_conflicts"
PARTIES = int(os.environ.get("BENCH_CONFLICT_PARTIES", 10_000))
PER_CLASS = int(os.environ.get("BENCH_CONFLICT_QUERIES", 500))
LAWYER_SHARE = 0.1
WARMUP = 20


def main() -> None:
    with django_on_scratch(DB_NAME):
        run()


def load_firm(slug: str, seed: int):  # -> tuple[Firm, User, Population, dict[str, int], list[int]]
    from accounts.models import Firm, User
    from practice.models import Case, CaseCounterparty, Client, Counterparty
    from tests import name_variants

    pop = name_variants.population(PARTIES, seed=seed)
    firm = Firm.objects.create(slug=slug, name=f"{slug} LLP")
    owner = User.objects.create(username=f"owner-{slug}", firm=firm, name=f"Owner of {slug}")
    half = len(pop.parties) // 2
    clients = Client.objects.bulk_create(
        Client(firm=firm, key=f"c{i}", name=pop.parties[i].name) for i in range(half)
    )
    counterparties = Counterparty.objects.bulk_create(
        Counterparty(firm=firm, key=f"p{i}", name=pop.parties[half + i].name) for i in range(len(pop.parties) - half)
    )
    cases = Case.objects.bulk_create(
        Case(firm=firm, key=f"M-{i:05d}", title=f"Matter {i}", opened=dt.date(2026, 1, 1), client=clients[i], owner=owner)
        for i in range(half)
    )
    CaseCounterparty.objects.bulk_create(
        CaseCounterparty(case=cases[i % half], counterparty=cp, firm=firm) for i, cp in enumerate(counterparties)
    )
    # Which party of the population each host row is, by node: (kind, host id) -> population index.
    index = {("client", c.pk): i for i, c in enumerate(clients)}
    index |= {("counterparty", cp.pk): half + i for i, cp in enumerate(counterparties)}
    return firm, owner, pop, index, [c.pk for c in cases]


def run() -> None:
    import random

    from django.contrib.auth.models import Permission
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from accounts.models import User
    from graph_memory import services
    from graph_memory.map import names
    from graph_memory.models import Node
    from practice.models import CaseUserObjectPermission
    from tests import name_variants

    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    progress("migrating the scratch database ...")
    call_command("migrate", verbosity=0)
    progress(f"loading two firms of {PARTIES:,} parties ...")
    firm, _, pop, index, case_ids = load_firm("variants", seed=14)
    other, _, _, _, _ = load_firm("other", seed=15)
    rebuild_s = []
    for f in (firm, other):
        t0 = time.perf_counter()
        services.graph_rebuild_firm(firm_id=f.pk)
        rebuild_s.append(time.perf_counter() - t0)
    admin = User.objects.create(username="variants-admin", firm=firm, role=User.Role.ADMIN)
    lawyer = User.objects.create(username="variants-lawyer", firm=firm)
    permission = Permission.objects.get(codename="view_case", content_type__app_label="practice")
    chosen = random.Random(3).sample(case_ids, round(len(case_ids) * LAWYER_SHARE))
    CaseUserObjectPermission.objects.bulk_create(
        CaseUserObjectPermission(permission=permission, user=lawyer, content_object_id=c) for c in chosen
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
        cursor.execute("SELECT pg_relation_size('gm_node_party_variants')")
        index_bytes = cursor.fetchone()[0]
    node_party = {
        str(pk): index[(kind, ref)]
        for pk, kind, ref in Node.objects.filter(firm=firm, kind__in=["client", "counterparty"]).values_list("pk", "kind", "ref_id")
    }
    load_s = time.perf_counter() - started
    queries = name_variants.queries(pop, PER_CLASS)
    progress(f"loaded in {load_s:.0f}s; {len(queries):,} queries ...")

    for q in queries[:WARMUP]:
        services.conflicts_check(viewer=admin, name=q.text)
    rows, counts, kinds_seen = [], set(), {}
    lawyer_ms: list[float] = []
    visible_cases = {str(pk) for pk in Node.objects.filter(firm=firm, kind="case", ref_id__in=chosen).values_list("pk", flat=True)}
    for kind in name_variants.CLASSES:
        asked = [q for q in queries if q.kind == kind]
        found, relevant_hits, hits, ms = 0, 0, 0, []
        for q in asked:
            with CaptureQueriesContext(connection) as captured:
                t0 = time.perf_counter()
                report = services.conflicts_check(viewer=admin, name=q.text, limit=100)
                ms.append((time.perf_counter() - t0) * 1000)
            counts.add(len(captured))
            parties = {node_party[m.party.id] for m in report.matches}
            found += q.target in parties
            if q.target not in parties or ms[-1] > 50:
                progress(f"  {kind}: {q.text!r} for {pop.parties[q.target].name!r}: {ms[-1]:.0f} ms, {len(parties)} parties"
                         + ("" if q.target in parties else " (missed)"))
            relevant_hits += len(parties & q.relevant)
            hits += len(parties)
            for m in report.matches:
                if node_party[m.party.id] == q.target:
                    kinds_seen.setdefault(kind, {}).setdefault(m.match, 0)
                    kinds_seen[kind][m.match] += 1
                    break
            t0 = time.perf_counter()
            mine = services.conflicts_check(viewer=lawyer, name=q.text, limit=100)
            lawyer_ms.append((time.perf_counter() - t0) * 1000)
            assert {m.case.id for m in mine.matches} <= visible_cases  # the wall
        rows.append((kind, len(asked), found / len(asked), relevant_hits / max(hits, 1), ms, kinds_seen.get(kind, {})))
    all_ms = [x for r in rows for x in r[4]]
    total_s = time.perf_counter() - started
    load_after = os.getloadavg()[0]

    persons = sum(p.person for p in pop.parties)
    print("## Conflict checks on name variants\n")
    from bench.run import cpu_model

    print(
        f"Measured {dt.date.today().isoformat()} on {os.cpu_count()} cores ({cpu_model()}), embedded PostgreSQL 18. "
        f"Two firms of {PARTIES:,} parties each ({persons:,} people and {PARTIES - persons:,} companies in the "
        f"measured firm, {pop.distractors:,} of its parties near-miss distractors of another), every party on a "
        f"case, the connection map built by `graph_rebuild_firm` ({rebuild_s[0]:.1f} s and {rebuild_s[1]:.1f} s "
        f"with the variant index; that index is {index_bytes / 2**20:.0f} MiB for both firms). Each query is one "
        f"labelled variant of a random party of the firm (`tests/name_variants.py`), asked by its firm admin with "
        "`limit=100`. Recall: the party the variant came from is among the matches. Precision: of the parties "
        "returned, the share that are that party or hold every word of its name (a short form: every word asked). "
        f"Thresholds (`graph_memory/map/names.py`): a word of n letters may carry min(2, n - 1) edits, a name "
        f"{names.name_edits_allowed(4)} edit from 4 letters and {names.name_edits_allowed(7)} from 7. "
        f"Loading took {load_s:.0f} s; the whole run {total_s:.0f} s. Load average of the machine (other work "
        f"included): {load_before:.1f} at the start, {load_after:.1f} at the end.\n"
    )
    print("| variant class | queries | recall | precision | matched as | ms p50 / p95 |\n| --- | ---: | ---: | ---: | --- | ---: |")
    for kind, n, recall, precision, ms, seen in rows:
        how = ", ".join(f"{k} {v}" for k, v in sorted(seen.items(), key=lambda kv: -kv[1]))
        print(f"| {kind} | {n} | {recall:.3f} | {precision:.3f} | {how} | {percentile(ms, 50):.1f} / {percentile(ms, 95):.1f} |")
    print(
        f"\nAll {len(all_ms):,} checks by the firm admin: p50 {percentile(all_ms, 50):.1f} ms, p95 "
        f"{percentile(all_ms, 95):.1f} ms, mean {statistics.mean(all_ms):.1f} ms; the same queries by a lawyer who "
        f"may open {LAWYER_SHARE:.0%} of the cases: p50 {percentile(lawyer_ms, 50):.1f} ms, p95 "
        f"{percentile(lawyer_ms, 95):.1f} ms (every case returned to the lawyer checked to be one they may open). "
        f"SQL statements per check: {'/'.join(map(str, sorted(counts)))}."
    )


if __name__ == "__main__":
    main()
