"""What a small viewer's whole search costs the server: planning against execution, beside the peers (issue 28).

For a lawyer on a few hundred cases, planning is a large share of the server's time: the statement
is planned on every call (Django binds parameters on the client, and the firm's own HNSW index needs
`firm_id = N` written inline), and running it takes a few milliseconds. Three firms of 10,000
summarised, embedded cases (tests/search_support.py) in a scratch database
(`bench_search_planning`); in each firm a lawyer granted ~20, ~200 and ~2,000 cases and the firm's
admin, asked in turn. For each class: the statement's length as sent, its planning and execution
time (EXPLAIN (ANALYZE, TIMING OFF), the median of the samples), and the whole `search_cases`
(hybrid, limit 10, the query vector given, three mid-frequency words) against bench/scale_peer.py's
peers with their recall@10: each sample runs every class and every way in a fresh random order.
Prints one markdown section on stdout (progress on stderr).

    python bench/bench_search_planning.py [--samples N] [--keep] [--reuse] [--json PATH]

`--keep` keeps the scratch database, `--reuse` measures on a kept one (to compare two versions of
the code on the same rows; BENCH_DB_SUFFIX names a database of one's own).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scratch import drop_database, percentile, progress, scratch_database  # noqa: E402

DB_NAME = "bench_search_planning" + os.environ.get("BENCH_DB_SUFFIX", "")
FIRMS, PER_FIRM, SEED = 3, 10_000, 7
CLASSES = {"lawyer on ~20": 0.002, "lawyer on ~200": 0.02, "lawyer on ~2,000": 0.2, "firm admin": 1.0}
OURS = "search_cases"
WARMUP = 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--reuse", action="store_true", help="measure on a kept scratch database")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args()
    os.environ.update(GRAPH_MEMORY_EMBEDDER="none", GRAPH_MEMORY_LOG_LEVEL="WARNING")
    admin_url, url = _database(reuse=args.reuse)
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    try:
        if not args.reuse:
            build()
        figures = measure(samples=args.samples)
    finally:
        if args.keep or args.reuse:
            progress(f"kept database {DB_NAME}")
        else:
            drop_database(admin_url, DB_NAME)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    print(section(figures))


def _database(*, reuse: bool) -> tuple[str, str]:
    if not reuse:
        return scratch_database(DB_NAME)
    from config.embedded_db import embedded_database_url

    admin_url = os.environ.get("DATABASE_URL") or embedded_database_url(ROOT)
    return admin_url, urlunsplit(urlsplit(admin_url)._replace(path=f"/{DB_NAME}"))


def build() -> None:
    from django.core.management import call_command
    from django.db import connection

    from accounts.models import User
    from graph_memory.vectors import firm_indexes
    from tests import search_support
    from tests.factories import FirmFactory, UserFactory

    t0 = time.perf_counter()
    progress("migrating the scratch database ...")
    call_command("migrate", verbosity=0)
    progress(f"loading {FIRMS} firms x {PER_FIRM:,} summarised, embedded cases with their maps ...")
    firms = [FirmFactory(slug=f"plan-{i}", name=f"Plan {i} LLP") for i in range(FIRMS)]
    corpus = search_support.load_corpus(firms=firms, per_firm=PER_FIRM, seed=SEED)
    firm_indexes.ensure_search_indexes(progress=progress)
    for firm in firms:
        for cls, share in CLASSES.items():
            name = _username(cls, firm.slug)
            if share == 1.0:
                UserFactory(firm=firm, username=name, role=User.Role.ADMIN)
            else:
                search_support.grant_share(corpus, firm, share=share, username=name)
    # As autovacuum would soon after such a load: hint bits, visibility map and statistics of every table
    # (a fresh load measured up to half again slower, the peers as much as this app).
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    progress(f"built in {time.perf_counter() - t0:.0f} s")


def _username(cls: str, firm_slug: str) -> str:
    return f"{cls.split()[-1].strip('~').replace(',', '')}-{firm_slug}"


def _explained(statements: list[tuple[str, Any]]) -> tuple[float, float, float, str, int]:
    """(planning ms, execution ms, parsing ms, the vector ranking's path, its length as sent) of the last
    statement, after the others (the peers' SET LOCAL), in one transaction. Parsing is a PREPARE of the text
    timed from the client: parse, analysis and rewrite, which "Planning Time" leaves out, and a round trip."""
    from django.db import connection, transaction

    from tests import plans

    with transaction.atomic(), connection.cursor() as cursor:
        for sql, params in statements[:-1]:
            cursor.execute(sql, params)
        sql, params = statements[-1]
        # Django binds parameters on the client: what PostgreSQL parses is the text with the values in it.
        sent = len(cursor.cursor.mogrify(sql, params)) if hasattr(cursor.cursor, "mogrify") else len(sql)
        plan = plans.explained(sql, params, options="ANALYZE, TIMING OFF", cursor=cursor)
        started = time.perf_counter()
        cursor.execute("PREPARE gm_bench_parsed AS " + sql, params)
        parsed = (time.perf_counter() - started) * 1000
        cursor.execute("DEALLOCATE gm_bench_parsed")
    return plan["Planning Time"], plan["Execution Time"], parsed, _path(plan["Plan"]), sent


def _path(plan: dict[str, Any]) -> str:
    """Which way the vector ranking went: an HNSW index walked, else the exact scan."""
    from tests import plans

    walked = any(node.get("Index Name", "").startswith("gm_summary_") and "hnsw" in node.get("Index Name", "")
                 and node.get("Actual Loops") for node in plans.nodes(plan))  # fmt: skip
    return "index walk" if walked else "exact"


def measure(*, samples: int) -> dict[str, Any]:
    import numpy as np
    from django.conf import settings
    from django.db import connection
    from django.test import override_settings

    from accounts.models import User
    from bench import scale_peer as peer
    from graph_memory import services
    from graph_memory.vectors.embeddings import vector_dimensions
    from graph_memory.wall import access
    from tests import plans, search_support

    firms = sorted(
        {u.firm.slug for u in User.objects.filter(username__startswith="admin-plan-").select_related("firm")}
    )
    users = {u.username: u for u in User.objects.filter(firm__slug__in=firms)}
    viewers = {cls: [users[_username(cls, slug)] for slug in firms] for cls in CLASSES}
    visible = {u.pk: set(access.visible_cases(u).values_list("pk", flat=True)) for vs in viewers.values() for u in vs}
    basis = np.random.default_rng(SEED).standard_normal((search_support.RANK, vector_dimensions()), dtype=np.float32)
    queries = search_support._normalised(np.random.default_rng(99), WARMUP + samples, basis)
    ways = (OURS, *peer.WAYS)

    def run(way: str, viewer: Any, q: str, vector: Any) -> tuple[list[int], list[int]]:
        """(the page, the vector ranking's top 10: a peer's; none for this app's, whose recall tests pin)."""
        if way == OURS:
            embedder = search_support.FixedEmbedder(vector)
            found = services.search_cases(viewer=viewer, q=q, limit=10, embedder=embedder).results
            return [h.case_id for h in found], []
        return peer.search(way=way, viewer=viewer, q=q, vector=vector, model=search_support.MODEL)

    rng = random.Random(28)
    tops: dict[tuple[str, str, int], list[int]] = {}  # the peers' vector top 10, per class, way and sample
    whole: dict[tuple[str, str], list[float]] = {}
    planned: dict[tuple[str, str], list[tuple[float, float]]] = {}
    paths: dict[str, set[str]] = {}
    length: dict[str, list[int]] = {}
    load = [os.getloadavg()[0]]
    floors = {search_support.MODEL: 0.0, "*": None}
    progress(f"measuring: {samples} samples after {WARMUP} warm-up, {len(CLASSES)} classes x {len(ways)} ways ...")
    with override_settings(GRAPH_MEMORY={**settings.GRAPH_MEMORY, "SEARCH_MIN_SIMILARITY": floors}):
        for i in range(WARMUP + samples):
            q, vector = search_support.query_words(i), queries[i]
            jobs = [(cls, way, kind) for cls in CLASSES for way in ways for kind in ("whole", "explain")]
            for cls, way, kind in rng.sample(jobs, len(jobs)):
                viewer = viewers[cls][i % len(viewers[cls])]
                if kind == "whole":
                    t0 = time.perf_counter()
                    page, top = run(way, viewer, q, vector)
                    ms = (time.perf_counter() - t0) * 1000
                    assert set(page) <= visible[viewer.pk], "a search returned a case the viewer may not open"
                    if i >= WARMUP:
                        whole.setdefault((cls, way), []).append(ms)
                        tops[(cls, way, i)] = top
                    continue
                statements = plans.sent(lambda: run(way, viewer, q, vector))  # noqa: B023
                plan_ms, exec_ms, parsed_ms, path, sent = _explained(statements)
                if i >= WARMUP:
                    planned.setdefault((cls, way), []).append((plan_ms, exec_ms, parsed_ms))
                    if way == OURS:
                        assert len(statements) == 1, "search_cases ran more than one statement"
                        paths.setdefault(cls, set()).add(path)
                        length.setdefault(cls, []).append(sent)
            if i % 10 == 9:
                progress(f"  {i + 1} / {WARMUP + samples}")
                load.append(os.getloadavg()[0])
        server = connection.cursor().connection.info.server_version
    return {
        "samples": samples, "warmup": WARMUP, "ways": list(ways), "classes": list(CLASSES),
        "visible": {cls: [len(visible[u.pk]) for u in vs] for cls, vs in viewers.items()},
        "whole_p50": {f"{c}|{w}": percentile(t, 50) for (c, w), t in whole.items()},
        # Recall@10 of each peer's vector ranking against the exact way's (which ranks every visible vector).
        "peer_recall_min": {
            f"{c}|{w}": min(len(set(tops[(c, w, i)]) & set(tops[(c, "exact", i)])) / 10 for i in range(WARMUP, WARMUP + samples))
            for c in CLASSES for w in peer.WAYS
        },
        "whole_p95": {f"{c}|{w}": percentile(t, 95) for (c, w), t in whole.items()},
        "planning": {f"{c}|{w}": statistics.median(p for p, _, _ in t) for (c, w), t in planned.items()},
        "execution": {f"{c}|{w}": statistics.median(e for _, e, _ in t) for (c, w), t in planned.items()},
        "parse": {f"{c}|{w}": statistics.median(x for _, _, x in t) for (c, w), t in planned.items()},
        "paths": {c: sorted(p) for c, p in paths.items()}, "chars": {c: max(n) for c, n in length.items()},
        "load": load, "server_version": server, "date": time.strftime("%Y-%m-%d"), "exact_cap": search_support.exact_cap(),
    }  # fmt: skip


def section(f: dict[str, Any]) -> str:
    ways = f["ways"]
    lines = [
        "## Search planning (issue 28)",
        "",
        f"{FIRMS} firms of {PER_FIRM:,} summarised cases with synthetic 384-d vectors and their maps "
        "(tests/search_support.py), each firm with its own HNSW index; in each firm a lawyer granted a random "
        "share of its cases and the firm's admin, asked in turn (visible cases: "
        + "; ".join(f"{c} {'/'.join(f'{n:,}' for n in f['visible'][c])}" for c in f["classes"])
        + f"; the exact scan's cap: {f['exact_cap']:,} visible vectors). {f['samples']} samples after "
        f"{f['warmup']} warm-up; each sample runs every class and every way, "
        "whole and under EXPLAIN (ANALYZE, TIMING OFF), in a fresh random order. Whole: `search_cases` (hybrid, "
        "limit 10, the query vector given, three mid-frequency words, the synthetic model's similarity floor at 0) "
        "and bench/scale_peer.py's `search` for each way; plan and run: the median Planning and Execution Time "
        "of the one statement each runs; parse: a PREPARE of it timed from the client (a round trip that parses, "
        "analyses and rewrites the text, which Planning Time leaves out). Recall@10: each peer's vector top 10 against the exact way's (which "
        "ranks every visible vector), the least over the samples; the ratio is to the fastest peer at 1.0. "
        f"Load average (1 min) during the run: "
        f"{min(f['load']):.1f}-{max(f['load']):.1f} on {os.cpu_count()} cores shared with other work; {f['date']}.",
        "",
        "| viewer | statement as sent (chars) | vector ranking | ours: plan / run ms | peer exact: plan / run ms | "
        "parse ms: ours / peer exact | "
        + " | ".join(f"whole p50: {w}" for w in ways)
        + " | peers' recall@10, least (as above) | fastest recall-1.0 peer ÷ ours |",
        "| --- | ---: | --- | ---: | ---: | ---: | " + " | ".join("---:" for _ in ways) + " | --- | ---: |",
    ]
    for c in f["classes"]:
        p50 = {w: f["whole_p50"][f"{c}|{w}"] for w in ways}
        recall = {w: f["peer_recall_min"][f"{c}|{w}"] for w in ways if w != OURS}
        fastest = min(p50[w] for w, r in recall.items() if r == 1.0)
        lines.append(
            f"| {c} | {f['chars'][c]:,} | {', '.join(f['paths'][c])} | "
            f"{f['planning'][f'{c}|{OURS}']:.2f} / {f['execution'][f'{c}|{OURS}']:.2f} | "
            f"{f['planning'][f'{c}|exact']:.2f} / {f['execution'][f'{c}|exact']:.2f} | "
            f"{f['parse'][f'{c}|{OURS}']:.2f} / {f['parse'][f'{c}|exact']:.2f} | "
            + " | ".join(f"{p50[w]:.1f}" for w in ways)
            + f" | {' / '.join(f'{r:.1f}' for r in recall.values())} | {fastest / p50[OURS]:.2f}x |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
