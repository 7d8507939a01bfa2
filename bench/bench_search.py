"""Search and briefs at scale: recall against exact search, latency, query counts.

100,000 summaries with synthetic vectors across 10 firms (10,000 each), loaded
into a scratch database (`bench_search`) on the embedded server, created here
and dropped at the end. Viewers see 0.1%, 1%, 10% or 100% of their firm.
Prints one markdown section on stdout; progress goes to stderr.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scratch import drop_database, scratch_database  # noqa: E402

DB_NAME = "bench_search"
FIRMS = 10
PER_FIRM = 10_000
BIG_CLIENT_CASES = 1_000
SHARES = (0.001, 0.01, 0.1, 1.0)
MEASURED_FIRMS = 3  # viewers are made in this many firms; queries are spread over them
QUERIES = 60
WARMUP = 5
BRIEF_REPEATS = 60


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    admin_url, scratch_url = scratch_database(DB_NAME)
    os.environ["DATABASE_URL"] = scratch_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["GRAPH_MEMORY_EMBEDDER"] = "none"  # query vectors are given; the local model is timed apart
    import django

    django.setup()
    try:
        run()
    finally:
        drop_database(admin_url, DB_NAME)


def run() -> None:
    import numpy as np
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test import override_settings
    from django.test.utils import CaptureQueriesContext

    from accounts.models import User
    from graph_memory import conf, embeddings, search, services
    from graph_memory.models import Node
    from tests import search_support
    from tests.factories import FirmFactory, UserFactory

    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    progress("migrating the scratch database ...")
    call_command("migrate", verbosity=0)
    progress(f"loading {FIRMS} firms x {PER_FIRM:,} summarised, embedded cases ...")
    firms = [FirmFactory(slug=f"bench-{i}", name=f"Bench {i} LLP") for i in range(FIRMS)]
    corpus = search_support.load_corpus(
        firms=firms, per_firm=PER_FIRM, big_client_cases=BIG_CLIENT_CASES, with_graph=False
    )
    for firm in firms[:MEASURED_FIRMS]:  # only their viewers search: the other firms' maps would change nothing
        services.graph_rebuild_firm(firm_id=firm.pk)
    load_s = time.perf_counter() - started
    progress(f"loaded in {load_s:.0f}s; making viewers ...")
    viewers: dict[float, list[tuple[User, np.ndarray, object]]] = {share: [] for share in SHARES}
    for firm in firms[:MEASURED_FIRMS]:
        admin = UserFactory(firm=firm, username=f"admin-{firm.slug}", role=User.Role.ADMIN)
        viewers[1.0].append((admin, corpus.case_ids[firm.pk], firm))
        for share in SHARES[:-1]:
            user, visible = search_support.grant_share(corpus, firm, share=share, username=f"{share}-{firm.slug}")
            viewers[share].append((user, visible, firm))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    queries = corpus.queries(QUERIES + WARMUP, seed=2024)

    def measure(exact_max: int) -> list[tuple]:
        rows = []
        with override_settings(
            GRAPH_MEMORY={**settings.GRAPH_MEMORY, "EMBEDDER": "none", "SEARCH_EXACT_MAX": exact_max}
        ):
            for share in SHARES:
                recalls, vector_ms, search_ms, counts, methods = [], [], [], set(), set()
                for i, query in enumerate(queries):
                    viewer, visible, firm = viewers[share][i % len(viewers[share])]
                    t0 = time.perf_counter()
                    ranking = search.vector_ranking(viewer=viewer, vector=query, model=search_support.MODEL, depth=10)
                    t1 = time.perf_counter()
                    q = search_support.query_words(i)
                    stub = search_support.FixedEmbedder(query)
                    with CaptureQueriesContext(connection) as captured:
                        t2 = time.perf_counter()
                        result = services.search_cases(viewer=viewer, q=q, limit=10, embedder=stub)
                        t3 = time.perf_counter()
                    assert result.mode == "hybrid" and {h.case_id for h in result.results} <= set(visible.tolist())
                    if i < WARMUP:
                        continue
                    exact = search_support.exact_top(corpus, firm, visible, query, 10)
                    recalls.append(len(set(ranking.case_ids) & set(exact)) / len(exact))
                    vector_ms.append((t1 - t0) * 1000)
                    search_ms.append((t3 - t2) * 1000)
                    counts.add(len(captured))
                    methods.add(ranking.method)
                visible_count = len(viewers[share][0][1])
                rows.append(
                    (share, visible_count, "/".join(sorted(methods)), min(recalls), statistics.mean(recalls),
                     percentile(vector_ms, 50), percentile(vector_ms, 95),
                     percentile(search_ms, 50), percentile(search_ms, 95), "/".join(map(str, sorted(counts))))
                )  # fmt: skip
        return rows

    progress("measuring search (default settings) ...")
    default_rows = measure(int(conf.get("SEARCH_EXACT_MAX")))
    progress("measuring search (index forced for every share) ...")
    forced_rows = measure(1)

    progress("measuring client briefs over 1,000 cases ...")
    brief_rows = []
    for label, share_index in (("firm admin (all 1,000 visible)", 1.0), ("lawyer seeing 10% of the firm", 0.1)):
        viewer, visible, firm = viewers[share_index][0]
        client_node = Node.objects.get(firm=firm, kind="client", ref_id=corpus.big_client[firm.pk])
        for limit in (25, 100):
            timings, counts = [], set()
            for i in range(BRIEF_REPEATS + WARMUP):
                with CaptureQueriesContext(connection) as captured:
                    t0 = time.perf_counter()
                    brief = services.node_brief(viewer=viewer, node_id=client_node.pk, limit=limit)
                    t1 = time.perf_counter()
                if i >= WARMUP:
                    timings.append((t1 - t0) * 1000)
                    counts.add(len(captured))
            shown = len(brief.cases)
            brief_rows.append(
                (label, limit, shown, brief.has_more, percentile(timings, 50), percentile(timings, 95), counts)
            )

    encode_ms: list[float] = []
    if embeddings.local_available():
        progress("timing the local model on query texts ...")
        local = embeddings.LocalEmbedder()
        local.embed(["warm up"])
        for i in range(30):
            q = search_support.query_words(i, count=6)
            t0 = time.perf_counter()
            local.embed([q])
            encode_ms.append((time.perf_counter() - t0) * 1000)
    total_s = time.perf_counter() - started
    load_after = os.getloadavg()[0]

    print("## Search and briefs\n")
    print(
        f"{FIRMS * PER_FIRM:,} case summaries across {FIRMS} firms ({PER_FIRM:,} each). Each has a synthetic 384-d "
        f"vector (random in a rank-{search_support.RANK} subspace plus noise, normalised: sentence embeddings have a "
        "low intrinsic dimension; on vectors uniform over the whole sphere all neighbours are about equally far and "
        f"no approximate index ranks them) and {search_support.WORDS_PER_SUMMARY} words drawn Zipf-like from a "
        f"{len(search_support.WORDS):,}-word vocabulary. Viewers in {MEASURED_FIRMS} firms see a random 0.1%, 1%, "
        f"10% or 100% (firm admin) of their firm; {QUERIES} queries per row after {WARMUP} warm-up ones. "
        "Recall@10: the vector ranking against an exact ranking computed outside the database over the viewer's "
        "visible cases. Search: one whole `search_cases` call in hybrid mode (vector ranking, word ranking over "
        "three mid-frequency words, fusion, snippets), with the query vector given; embedding the query is timed "
        "separately below. HNSW: m=16, ef_construction=64, "
        f"hnsw.ef_search={conf.get('SEARCH_EF_SEARCH')}, iterative scan in strict order. "
        f"Loading (data, indexes, three firms' maps) took {load_s:.0f} s; the whole run {total_s:.0f} s. "
        f"Load average of the machine (other work included): {load_before:.1f} at the start, {load_after:.1f} at the end.\n"
    )
    header = (
        "| share of firm | visible cases | vector ranking | recall@10 min / mean | vector ms p50 / p95 "
        "| search ms p50 / p95 | queries per search |\n| ---: | ---: | --- | ---: | ---: | ---: | ---: |"
    )

    def table(rows: list[tuple]) -> None:
        print(header)
        for r in rows:
            print(
                f"| {r[0]:.1%} | {r[1]:,} | {r[2]} | {r[3]:.2f} / {r[4]:.3f} | {r[5]:.1f} / {r[6]:.1f} "
                f"| {r[7]:.1f} / {r[8]:.1f} | {r[9]} |"
            )

    print(
        f"Default settings (exact scan up to SEARCH_EXACT_MAX = {conf.get('SEARCH_EXACT_MAX'):,} visible cases, HNSW beyond):\n"
    )
    table(default_rows)
    print(
        "\nThe same queries with the index forced for every share (SEARCH_EXACT_MAX = 1), to show the filtered HNSW path:\n"
    )
    table(forced_rows)
    print(
        f"\nClient brief over {BIG_CLIENT_CASES:,} cases (`node_brief`, most recently active first, "
        f"{BRIEF_REPEATS} runs after {WARMUP} warm-up):\n"
    )
    print(
        "| viewer | limit | cases shown | has_more | ms p50 / p95 | queries |\n| --- | ---: | ---: | --- | ---: | ---: |"
    )
    for label, limit, shown, more, p50, p95, counts in brief_rows:
        print(
            f"| {label} | {limit} | {shown} | {more} | {p50:.1f} / {p95:.1f} | {'/'.join(map(str, sorted(counts)))} |"
        )
    if encode_ms:
        print(
            f"\nQuery embedding with the local model (all-MiniLM-L6-v2, CPU, one short query): "
            f"p50 {percentile(encode_ms, 50):.1f} ms, p95 {percentile(encode_ms, 95):.1f} ms, on top of the search "
            "figures above in hybrid mode with `EMBEDDER=local`."
        )


if __name__ == "__main__":
    main()
