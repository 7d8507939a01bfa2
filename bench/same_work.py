"""Same work before and after a change: each read's statements, answers and buffers at two commits, on one database.

A change that promises "behaviour unchanged" (issue 30's scope and statements) should leave every
read sending the same statements and answering the same. Timings on a shared machine drift by more
than such a change moves them; the answers and PostgreSQL's buffer counts do not. This builds one
scratch database with the current code (`bench_same_work`: a 10,000-case firm as bench_graph.py
generates it, its map and sight, a summary with a synthetic vector on every case, the firm's own
vector index), then runs the same
calls through `graph_memory.services` at each commit — BEFORE and AFTER as git worktrees, or the
working tree — in a process of its own, and runs each statement a call sent under `EXPLAIN (ANALYZE,
BUFFERS)`: shared buffers touched, planning and execution time. The two commits must have the same
migrations (the database is built once). Prints one markdown section; `--write` puts it in
docs/BENCHMARKS.md.

    python bench/same_work.py BEFORE [AFTER] [--write]      (AFTER: the working tree when not given)
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = "bench_same_work"
CALLS = 20  # per read and viewer
READS = ("walk from a lawyer node", "walk from a client node", "brief of a client node", "lookup (a word of a name)",
         "lookup (case number)", "conflict check", "vector ranking", "whole search_cases")  # fmt: skip


# --- the child: one commit's code, the calls, each statement explained ----------------------------


def child(calls_path: str, out_path: str) -> None:
    """Run every call with the code of the working directory (a commit's worktree), writing what each did."""
    sys.path.insert(0, os.getcwd())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    import dataclasses

    from django.conf import settings
    from django.db import connection
    from django.test import override_settings
    from django.test.utils import CaptureQueriesContext

    from accounts.models import User
    from graph_memory import services
    from tests.search_support import MODEL, FixedEmbedder

    try:
        from graph_memory.viewer.search import vector_ranking
    except ImportError:  # before issue 30's folders
        from graph_memory.search import vector_ranking  # type: ignore[no-redef]

    def answer(value: Any) -> str:
        shown = dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value
        return hashlib.sha256(json.dumps(shown, sort_keys=True, default=str).encode()).hexdigest()[:16]

    def called(read: str, viewer: Any, argument: Any) -> Any:
        try:
            return run[read](viewer, argument)
        except Exception as exc:  # the wall's NotFound (its module moved) is an answer; anything else is not
            if type(exc).__name__ != "NotFound":
                raise
            return "not found"

    run = {
        "walk from a lawyer node": lambda v, a: services.node_neighbors(viewer=v, node_id=a),
        "walk from a client node": lambda v, a: services.node_neighbors(viewer=v, node_id=a),
        "brief of a client node": lambda v, a: services.node_brief(viewer=v, node_id=a),
        "lookup (a word of a name)": lambda v, a: services.nodes_lookup(viewer=v, q=a),
        "lookup (case number)": lambda v, a: services.nodes_lookup(viewer=v, q=a),
        "conflict check": lambda v, a: services.conflicts_check(viewer=v, name=a),
        "vector ranking": lambda v, a: vector_ranking(viewer=v, vector=a, model=MODEL, depth=10),
        "whole search_cases": lambda v, a: services.search_cases(viewer=v, q=a[0], limit=10, embedder=FixedEmbedder(a[1])),
    }  # fmt: skip
    floors = {MODEL: 0.0, "*": None}
    results = []
    with override_settings(GRAPH_MEMORY={**settings.GRAPH_MEMORY, "SEARCH_MIN_SIMILARITY": floors}):
        for read, who, username, argument in json.loads(Path(calls_path).read_text()):
            viewer = User.objects.get(username=username)
            with CaptureQueriesContext(connection) as captured:
                shown = called(read, viewer, argument)
            statements = []
            for query in captured.captured_queries:
                if not query["sql"].lstrip().upper().startswith(("SELECT", "WITH")):
                    continue
                # Not tests.plans.explained: this runs on an earlier commit's code, which may not have it.
                with connection.cursor() as cursor:
                    cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + query["sql"])
                    (plan,) = cursor.fetchone()[0]
                top = plan["Plan"]
                statements.append(
                    {
                        "buffers": top.get("Shared Hit Blocks", 0) + top.get("Shared Read Blocks", 0),
                        "planning": plan["Planning Time"],
                        "execution": plan["Execution Time"],
                    }
                )
            results.append({"read": read, "who": who, "answer": answer(shown), "statements": statements})
    Path(out_path).write_text(json.dumps(results))


# --- the parent: the database, the calls, a worktree per commit, the table ------------------------


def build(calls_path: Path) -> None:
    """The scratch database and the calls (the same for both commits)."""
    import numpy as np
    from django.core.management import call_command
    from django.db import connection

    from bench.bench_graph import WORDS, company, few_cases_lawyer, generate_firm
    from bench.scratch import progress
    from graph_memory import services
    from graph_memory.models import CaseSummary, Node
    from graph_memory.vectors import firm_indexes
    from graph_memory.wall import access, sight
    from practice.models import Case
    from tests import search_support

    progress("migrating, generating the firm ...")
    call_command("migrate", verbosity=0)
    firm, (admin, *lawyers) = generate_firm()
    services.graph_rebuild_firm(firm_id=firm.pk)
    progress("summaries with synthetic vectors ...")
    rng = np.random.default_rng(5)
    basis = rng.standard_normal((search_support.RANK, search_support.vector_dimensions()), dtype=np.float32)
    case_ids = np.array(sorted(Case.objects.filter(firm=firm).values_list("pk", flat=True)), dtype=np.int64)
    search_support._copy_summaries(
        firm.pk, case_ids, search_support._normalised(rng, len(case_ids), basis),
        search_support._random_texts(rng, len(case_ids)),
    )  # fmt: skip
    firm_indexes.ensure_search_indexes(firm_id=firm.pk)  # as the nightly refresh keeps them
    sight.build()
    few = few_cases_lawyer(firm)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {CaseSummary._meta.db_table}")
        cursor.execute("ANALYZE")
    viewers = [("firm admin", admin), (f"lawyer ({access.visible_cases(lawyers[0]).count():,} cases)", lawyers[0]),
               (f"lawyer ({access.visible_cases(few).count():,} cases)", few)]  # fmt: skip
    nodes = {kind: [str(n) for n in Node.objects.filter(firm=firm, kind=kind).values_list("pk", flat=True)]
             for kind in ("lawyer", "client")}  # fmt: skip
    pick = random.Random(2026)

    def argument(read: str) -> Any:
        if read.startswith("walk from a lawyer"):
            return pick.choice(nodes["lawyer"])
        if read.startswith(("walk from a client", "brief")):
            return pick.choice(nodes["client"])
        if read.startswith("lookup (a word"):
            return pick.choice(WORDS)[: pick.randint(3, 8)]
        if read.startswith("lookup (case"):
            return f"2026-{pick.randrange(len(case_ids)):05d}"
        if read == "conflict check":
            return company(pick)
        vector = search_support._normalised(rng, 1, basis)[0].tolist()
        return vector if read == "vector ranking" else [search_support.query_words(pick.randrange(200)), vector]

    calls = [(read, who, viewer.username, argument(read)) for read in READS for _ in range(CALLS)
             for who, viewer in viewers]  # fmt: skip
    calls_path.write_text(json.dumps(calls))


def worktree(ref: str | None, into: Path) -> tuple[str, Path]:
    """(the commit's short name, the folder its code is in): a detached worktree of `ref`, or this tree."""
    if ref is None:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "graph_memory"], cwd=ROOT, capture_output=True,
                               text=True).stdout.strip()  # fmt: skip
        return head.stdout.strip() + (" + changes" if dirty else ""), ROOT
    sha = subprocess.run(["git", "rev-parse", "--short", ref], cwd=ROOT, capture_output=True, text=True, check=True)
    folder = into / sha.stdout.strip()
    subprocess.run(["git", "worktree", "add", "--detach", str(folder), ref], cwd=ROOT, check=True, capture_output=True)
    return sha.stdout.strip(), folder


def migrations(folder: Path) -> list[str]:
    return sorted(
        p.name for app in ("graph_memory", "practice", "accounts") for p in (folder / app / "migrations").glob("0*.py")
    )


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--write"]
    if args[:1] == ["--child"]:
        child(*args[1:3])
        return
    if not 1 <= len(args) <= 2:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    sys.path.insert(0, str(ROOT))
    from bench.scratch import django_on_scratch, progress

    with tempfile.TemporaryDirectory(prefix="same_work_") as scratch:
        into = Path(scratch)
        commits = [worktree(args[0], into), worktree(args[1] if len(args) > 1 else None, into)]
        try:
            for name, folder in commits:
                if migrations(folder) != migrations(ROOT):
                    sys.exit(f"{name} has other migrations than this tree: one database cannot serve both")
            with django_on_scratch(DB_NAME):
                build(into / "calls.json")
                from django.db import connection

                url = os.environ["DATABASE_URL"]
                connection.close()
                runs = []
                for name, folder in commits:
                    progress(f"reading at {name} ...")
                    out = into / f"{name.split()[0]}.json"
                    env = {**os.environ, "DATABASE_URL": url, "PYTHONPATH": str(folder)}
                    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(into / "calls.json"),
                                    str(out)], cwd=folder, env=env, check=True)  # fmt: skip
                    runs.append((name, json.loads(out.read_text())))
        finally:
            for _, folder in commits:
                if folder != ROOT:
                    subprocess.run(["git", "worktree", "remove", "--force", str(folder)], cwd=ROOT, capture_output=True)
    section = report(runs)
    print(section)
    if "--write" in sys.argv:
        from bench.run import OUT, replace_sections

        OUT.write_text(replace_sections(OUT.read_text(), [section]))


def report(runs: list[tuple[str, list[dict[str, Any]]]]) -> str:
    from bench.run import cpu_model

    (before_name, before), (after_name, after) = runs
    groups: dict[tuple[str, str], list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for old, new in zip(before, after, strict=True):
        groups.setdefault((old["read"], old["who"]), []).append((old, new))

    def per_call(items: list[dict[str, Any]], key: str) -> float:
        return statistics.median(sum(s[key] for s in item["statements"]) for item in items)

    lines = [
        "## Same work at two commits (bench/same_work.py)",
        "",
        f"Measured {dt.date.today().isoformat()} on {os.cpu_count()} cores ({cpu_model()}), embedded PostgreSQL 18; "
        f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}. `python bench/same_work.py {before_name} "
        f"{after_name.split()[0]}`: one scratch database (a 10,000-case firm as in the connection map's benchmark, "
        f"its sight, a summary with a synthetic vector on every case, the firm's own vector index), the same {CALLS} calls per read and viewer at "
        "both commits through `graph_memory.services`, and each statement a call sent run again under `EXPLAIN "
        "(ANALYZE, BUFFERS)`. Answers: calls whose whole answer (every field) is the same at both commits. Buffers: "
        "shared buffers the call's statements touched (hit or read), median per call: the work, which load does not "
        "change. Planning and execution: PostgreSQL's own times, median per call; they move with the machine's load.",
        "",
        f"| read | viewer | same answers | statements per call {before_name} / {after_name} | buffers {before_name} / {after_name} | planning ms "
        f"{before_name} / {after_name} | execution ms {before_name} / {after_name} |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for (read, who), pairs in groups.items():
        olds, news = [p[0] for p in pairs], [p[1] for p in pairs]
        same = sum(o["answer"] == n["answer"] for o, n in pairs)
        statements = " / ".join(
            ", ".join(str(c) for c in sorted({len(i["statements"]) for i in items})) for items in (olds, news)
        )
        lines.append(
            f"| {read} | {who} | {same}/{len(pairs)} | {statements} | {per_call(olds, 'buffers'):,.0f} / "
            f"{per_call(news, 'buffers'):,.0f} | {per_call(olds, 'planning'):.2f} / {per_call(news, 'planning'):.2f} | "
            f"{per_call(olds, 'execution'):.2f} / {per_call(news, 'execution'):.2f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
