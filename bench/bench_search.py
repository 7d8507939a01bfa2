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

from bench.scratch import django_on_scratch, percentile, progress  # noqa: E402

# BENCH_DB_SUFFIX: a scratch database of its own when several runs share the server.
DB_NAME = "bench_search" + os.environ.get("BENCH_DB_SUFFIX", "")
# Smaller runs while developing: BENCH_SEARCH_FIRMS=2 BENCH_SEARCH_PER_FIRM=2000 BENCH_REAL_CASES=1000 ...
FIRMS = int(os.environ.get("BENCH_SEARCH_FIRMS", 10))
PER_FIRM = int(os.environ.get("BENCH_SEARCH_PER_FIRM", 10_000))
REAL_CASES = int(os.environ.get("BENCH_REAL_CASES", 4_000))  # texts embedded with the local model
BIG_CLIENT_CASES = min(1_000, PER_FIRM // 10)
SHARES = (0.001, 0.01, 0.1, 1.0)
MEASURED_FIRMS = min(3, FIRMS)  # viewers are made in this many firms; queries are spread over them
QUERIES = int(os.environ.get("BENCH_SEARCH_QUERIES", 60))
WARMUP = 5
BRIEF_REPEATS = 60
FLOORS = [round(0.20 + 0.01 * i, 2) for i in range(31)]


def main() -> None:
    os.environ["GRAPH_MEMORY_EMBEDDER"] = "none"  # query vectors are given; the local model is timed apart
    with django_on_scratch(DB_NAME):
        run()


def real_embeddings_phase() -> tuple[list, list, str]:
    """The similarity floor's calibration, and the side-by-side table on real all-MiniLM-L6-v2 embeddings
    of case-like texts, in a firm of their own (loaded before the synthetic firms: a one-firm index)."""
    import numpy as np
    from django.conf import settings

    from accounts.models import User
    from bench import search_side_by_side as side_by_side
    from graph_memory.vectors import embeddings, firm_indexes
    from tests import relevance_corpus, search_support
    from tests.factories import FirmFactory, UserFactory

    if not embeddings.local_available():
        return [], [], "The local model is not installed: no floor calibration and no real-embedding table."
    local = embeddings.LocalEmbedder()
    progress("calibrating the similarity floor on case-like texts ...")
    docs = np.array(local.embed(relevance_corpus.documents()).vectors)
    asked = [q for m in relevance_corpus.MATTERS for q in m.queries]
    on_topic = np.array(local.embed(asked).vectors) @ docs.T
    off_domain = np.array(local.embed(list(relevance_corpus.OFF_DOMAIN)).vectors) @ docs.T
    floor_rows = relevance_corpus.floor_rows(on_topic.tolist(), off_domain.tolist(), FLOORS)
    progress(f"embedding {REAL_CASES:,} case-like texts with the local model ...")
    t0 = time.perf_counter()
    texts = relevance_corpus.case_like_texts(REAL_CASES)
    vectors = np.array(local.embed(texts).vectors, dtype=np.float32)
    embed_s = time.perf_counter() - t0
    firm = FirmFactory(slug="real-minilm", name="Real MiniLM LLP")
    case_ids = search_support.load_documents(firm=firm, texts=texts, vectors=vectors, model=local.model)
    firm_indexes.ensure_search_indexes()
    corpus = search_support.Corpus(basis=np.zeros((1, vectors.shape[1])), case_ids={firm.pk: case_ids})
    viewers = {1.0: [(UserFactory(firm=firm, username="admin-real", role=User.Role.ADMIN), case_ids)]}
    for share in SHARES[:-1]:
        viewers[share] = [search_support.grant_share(corpus, firm, share=share, username=f"real-{share}")]
    viewers = dict(sorted(viewers.items()))
    queries = np.array(local.embed(asked[: QUERIES + WARMUP]).vectors, dtype=np.float32)
    position = {int(c): i for i, c in enumerate(case_ids)}

    def exact_top(visible: np.ndarray, query: np.ndarray) -> list[int]:
        rows = np.array([position[int(c)] for c in visible])
        order = np.argsort(-(vectors[rows] @ query), kind="stable")[:10]
        return [int(visible[i]) for i in order]

    progress("measuring the side-by-side vector rankings on real embeddings ...")
    rows = side_by_side.measure(
        viewers=viewers, queries=queries, model=local.model, exact_top=exact_top, warmup=WARMUP,
        settings_base={**settings.GRAPH_MEMORY, "EMBEDDER": "none"},
    )  # fmt: skip
    note = (
        f"{REAL_CASES:,} case-like texts (`relevance_corpus.case_like_texts`: the thirty labelled matters varied "
        "in parties, figures, facts and activity lines) embedded with all-MiniLM-L6-v2 "
        f"({embed_s:.0f} s on this CPU), in a firm of their own loaded before the synthetic firms (so both "
        f"indexes hold only them; the firm's own is the denser build); {QUERIES} of the labelled queries, embedded the same way, after {WARMUP} warm-up ones."
    )
    return floor_rows, rows, note


def run() -> None:
    import numpy as np
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test import override_settings
    from django.test.utils import CaptureQueriesContext

    from accounts.models import User
    from bench import search_side_by_side as side_by_side
    from graph_memory import conf, services
    from graph_memory.models import Node
    from graph_memory.vectors import embeddings, firm_indexes
    from graph_memory.viewer import search
    from tests import relevance_corpus, search_support
    from tests.factories import FirmFactory, UserFactory

    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    progress("migrating the scratch database ...")
    call_command("migrate", verbosity=0)
    floor_rows, real_rows, real_note = real_embeddings_phase()
    progress(f"loading {FIRMS} firms x {PER_FIRM:,} summarised, embedded cases ...")
    firms = [FirmFactory(slug=f"bench-{i}", name=f"Bench {i} LLP") for i in range(FIRMS)]
    corpus = search_support.load_corpus(
        firms=firms, per_firm=PER_FIRM, big_client_cases=BIG_CLIENT_CASES, with_graph=False
    )
    for firm in firms[:MEASURED_FIRMS]:  # only their viewers search: the other firms' maps would change nothing
        services.graph_rebuild_firm(firm_id=firm.pk)
    progress("building the firms' own search indexes ...")
    t0 = time.perf_counter()
    built = firm_indexes.ensure_search_indexes(progress=progress)
    index_s = time.perf_counter() - t0
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
    firm_of = {int(c): firm for firm in firms[:MEASURED_FIRMS] for c in corpus.case_ids[firm.pk]}

    def measure() -> list[tuple]:
        rows = []
        with override_settings(GRAPH_MEMORY={**settings.GRAPH_MEMORY, "EMBEDDER": "none"}):
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
    default_rows = measure()
    progress("measuring the side-by-side vector rankings on synthetic vectors ...")
    synthetic_rows = side_by_side.measure(
        viewers={share: [(v, vis) for v, vis, _ in group] for share, group in viewers.items()},
        queries=queries, model=search_support.MODEL, settings_base={**settings.GRAPH_MEMORY, "EMBEDDER": "none"},
        exact_top=lambda visible, q: search_support.exact_top(corpus, firm_of[int(visible[0])], visible, q, 10),
        warmup=WARMUP,
    )  # fmt: skip

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
        "separately below. HNSW, iterative scan in strict order: each firm of at least "
        f"SEARCH_FIRM_INDEX_MIN = {conf.get('SEARCH_FIRM_INDEX_MIN'):,} vectors has an index of its own "
        f"(graph_memory/vectors/firm_indexes.py: m={firm_indexes.M}, ef_construction={firm_indexes.EF_CONSTRUCTION}, "
        f"hnsw.ef_search={conf.get('SEARCH_FIRM_EF_SEARCH')}; all {len(built.built)} built in {index_s:.0f} s), "
        f"beside the index shared by every firm (m=16, ef_construction=64, hnsw.ef_search={conf.get('SEARCH_EF_SEARCH')}). "
        "A lawyer's exact scan reads the summary row of each of their visible cases; a firm admin's "
        "reads the summary row of each case of the firm, probing the wall once per case (the vector kept in the row, column storage MAIN, migration "
        "0011: no TOAST lookup). "
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
        "\nVector ranking side by side (`search.vector_ranking`, depth 10), each approach run on the same query in "
        f"turn, in a random order each time: this app as configured (exact scan when the viewer sees at most SEARCH_EXACT_MAX = "
        f"{conf.get('SEARCH_EXACT_MAX'):,} vectors or at most SEARCH_EXACT_SHARE = {conf.get('SEARCH_EXACT_SHARE'):.0%} "
        f"of the index, here of all {FIRMS} synthetic firms' vectors and the real ones), its exact scan and its index path each forced, and the two "
        f"usual ways to filter pgvector's HNSW index (ef_search = {side_by_side.PEER_EF_SEARCH}): post-filtering, "
        "and the iterative scan in relaxed order. Each peer runs two ways: as a plain pgvector set-up has it, on the "
        "one index over every firm's vectors (issue 14's peers; the first verdict below is against these), and on "
        "this app's index of the viewer's firm. Synthetic vectors:\n"
    )

    def verdicts(rows: list[tuple]) -> None:
        print(f"\nThis app against the fastest peer on the shared index, p50: {side_by_side.verdict(rows)}.\n")
        print(
            "Against the fastest peer given this app's index of the firm too, p50: "
            f"{side_by_side.verdict(rows, side_by_side.OWN_INDEX_PEERS)}.\n"
        )

    print(side_by_side.table(synthetic_rows))
    verdicts(synthetic_rows)
    print(f"The same on real embeddings: {real_note}\n")
    if real_rows:
        print(side_by_side.table(real_rows))
        verdicts(real_rows)
    if floor_rows:
        picked = relevance_corpus.pick_floor(floor_rows)
        print(
            "Similarity floor of the local model (SEARCH_MIN_SIMILARITY). All-MiniLM-L6-v2 embeddings of the "
            f"{len(relevance_corpus.MATTERS)} labelled matters of `tests/relevance_corpus.py`, each laid out as the "
            "embedder sees a case, against three queries per matter (other words, a short topic, some shared words) "
            f"and {len(relevance_corpus.OFF_DOMAIN)} off-domain queries. For each candidate floor: meaning-only recall "
            "(on-topic query and matter at or above it), the share of (query, other matter) pairs above it (wrong-case "
            "hits; related matters, such as two acquisitions, count here too), and the share of off-domain queries "
            "with any hit. The rule: the lowest floor with no off-domain hit and at most "
            f"{relevance_corpus.MAX_OTHER_MATTERS:.0%} wrong-case pairs. It picks **{picked.floor:.2f}**; the "
            f"configured floor is {embeddings.min_similarity(embeddings.LocalEmbedder.model)} "
            "(tests/vectors/test_search_floor.py holds the two equal). Words still find what meaning misses: with an "
            "embedder, a summary holding every word of the query is a hit whatever its similarity.\n"
        )
        print("| floor | meaning-only recall | wrong-case pairs above | off-domain queries with a hit |")
        print("| ---: | ---: | ---: | ---: |")
        for row in floor_rows:
            if round(row.floor * 100) % 2 == 0 or row.floor == picked.floor:
                mark = " ←" if row.floor == picked.floor else ""
                print(f"| {row.floor:.2f}{mark} | {row.recall:.3f} | {row.other_matters:.3f} | {row.off_domain:.2f} |")
        print()
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
