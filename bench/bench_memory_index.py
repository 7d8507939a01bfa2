"""The memory index at scale (issue 28): `memory_index` for each class of viewer of a 50,000-case firm.

bench/bench_scale.py measures every read and takes 25 minutes to generate; this one measures the
memory index alone, on a database made for it with the same generators (bench/scale_world.py's
`_firm`): one firm of 50,000 cases whose viewers are associates (~200 cases), practice-group members
(5,000), partners (4 groups and 100 cases of their own: ~20,000) and firm admins (all), alone in its
database and beside 20 firms of 2,000 cases. Unlike bench_scale's, the summaries' clocks differ from
case to case, as in a firm that has run for a year: each was written at its own time in the last year,
one in ten is stale since a later time, one in thirty has no summary at all (so the order is the
activity's and not, as when every clock ties, the reference's). The summaries' text and vector indexes
are left out (the index reads neither) and the map holds the case nodes only (the index reads those).

Prints one markdown section on stdout (progress on stderr): p50/p95 per class in both databases,
each sample asking every measured viewer in both databases in a fresh random order, and the plan of
one partner's and one firm admin's statement (EXPLAIN ANALYZE, its node types).

    python bench/bench_memory_index.py [--small] [--reuse] [--drop] [--samples N]

`--reuse`: keep the two generated databases and measure on them again while the migrations and this
generator are unchanged (generating the full size takes about 10 minutes on 2 cores). `--drop`: drop
them at the end. `--small`: a smoke run (a 1,200-case firm beside two of 200).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import random
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import scale_world as world  # noqa: E402
from bench.scratch import percentile, progress  # noqa: E402

GENERATOR_VERSION = 1  # bump when _clocks, _derived or generate change what is generated
CLASSES = ("associate", "group member", "partner", "firm admin")
MEASURED = 3  # viewers per class
GOAL_P50, GOAL_P95 = 50.0, 150.0
FULL = replace(world.FULL, name="mi_full", members_per_group=2, partners=3, admins=2, document_every=10**9)
SMALL = replace(world.SMALL, name="mi_small", document_every=10**9)


def _names(scale: world.Scale) -> dict[str, str]:
    suffix = os.environ.get("BENCH_DB_SUFFIX", "")
    return {"alone": f"bench_{scale.name}_alone{suffix}", "beside": f"bench_{scale.name}_beside{suffix}"}


def _fingerprint(scale: world.Scale) -> str:
    """What the databases depend on: the scale, the generators (GENERATOR_VERSION) and the migrations."""
    digest = hashlib.sha256(json.dumps([asdict(scale), GENERATOR_VERSION, world.SEED]).encode())
    for folder in ("graph_memory", "practice", "accounts"):
        for path in sorted((ROOT / folder / "migrations").glob("*.py")):
            digest.update(path.name.encode() + path.read_bytes())
    digest.update((ROOT / "bench" / "scale_world.py").read_bytes())
    return digest.hexdigest()[:16]


def _clocks(firm_id: int) -> None:
    """A year of summaries: each written at its own time, one in ten stale since later, one in thirty with no
    summary; every summary's first statement in its content (the index's gist). Deterministic per case id."""
    from graph_memory.models import CaseSummary

    table = CaseSummary._meta.db_table
    h = "((case_id * 2654435761) %% 1000003)"
    world._sql(f"DELETE FROM {table} WHERE firm_id = %s AND {h} %% 30 = 0", [firm_id])
    world._sql(
        f"""UPDATE {table} SET written_at = now() - ({h} %% 525600) * interval '1 minute',
            stale = {h} %% 10 = 1,
            stale_since = CASE WHEN {h} %% 10 = 1 THEN now() - ({h} %% 525600) * interval '1 minute' / 2 END,
            content = jsonb_build_object('status', jsonb_build_array(jsonb_build_object(
                'id', 's1', 'text', left(split_part(text, E'\\n- ', 2), 200))))
        WHERE firm_id = %s""",
        [firm_id],
    )


def _derived(firm_id: int) -> None:
    """What the app derives from the bulk-loaded rows, by its own functions: the map, then whatever the
    memory keeps for the index (rows bulk-loaded past the receivers are the nightly run's to catch up)."""
    from graph_memory import services

    services.graph_rebuild_firm(firm_id=firm_id)
    rebuild = getattr(services, "activity_rebuild", None)  # absent before issue 28's index (to measure before it)
    if rebuild is not None:
        rebuild(firm_id=firm_id)


def _load_firm(**kwargs: Any) -> int:
    from graph_memory.models import CaseSummary

    dropped = [i.name for i in CaseSummary._meta.indexes if i.name in {"gm_summary_fts", "gm_summary_embedding_hnsw"}]
    for name in dropped:
        world._sql(f"DROP INDEX IF EXISTS {name}")
    firm_id = world._firm(**kwargs)
    _clocks(firm_id)
    _derived(firm_id)
    return firm_id


def generate(scale: world.Scale, names: dict[str, str]) -> None:
    from django.core.management import call_command

    started = time.perf_counter()
    world.create(names["alone"])
    world.use_database(names["alone"])
    call_command("migrate", verbosity=0)
    progress(f"generating the big firm ({scale.cases:,} cases) ...")
    _load_firm(
        slug=world.BIG_SLUG, cases=scale.cases, groups=scale.groups, lawyers=world.usernames(scale),
        clients=scale.clients, counterparties=scale.counterparties, associate_cases=scale.associate_cases,
        partner_groups=scale.partner_groups, partner_own_cases=scale.partner_own_cases,
        document_every=scale.document_every, seed=world.SEED,
    )  # fmt: skip
    world._sql("VACUUM ANALYZE")
    world.release()
    world.create(names["beside"], template=names["alone"])
    world.use_database(names["beside"])
    progress(f"adding {scale.small_firms} firms of {scale.small_cases:,} cases ...")
    for n in range(scale.small_firms):
        slug = f"small-{n:02d}"
        _load_firm(
            slug=slug, cases=scale.small_cases, groups=2,
            lawyers={"associate": [f"{slug}-lawyer-{i:02d}" for i in range(scale.small_lawyers)],
                     "firm admin": [f"{slug}-admin"]},
            clients=max(20, scale.small_cases // 10), counterparties=max(50, scale.small_cases // 3),
            associate_cases=scale.small_cases * 1.3 / scale.small_lawyers, partner_groups=0,
            partner_own_cases=0, document_every=scale.document_every, seed=world.SEED + 1 + n,
        )  # fmt: skip
    world._sql("VACUUM ANALYZE")
    world.release()
    note = {"fingerprint": _fingerprint(scale), "generated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "seconds": round(time.perf_counter() - started, 1)}  # fmt: skip
    for name in names.values():
        world.set_template_note(name, note)


def _shape(plan: dict[str, Any], depth: int = 0, out: list[str] | None = None) -> list[str]:
    """The plan's nodes as indented lines: type, relation or index, rows and loops (EXPLAIN ANALYZE JSON)."""
    out = [] if out is None else out
    what = plan["Node Type"]
    if plan.get("Index Name"):
        what += f" using {plan['Index Name']}"
    elif plan.get("Relation Name"):
        what += f" on {plan['Relation Name']}"
    if plan.get("Subplan Name") or plan.get("Parent Relationship") in ("InitPlan", "SubPlan"):
        what = f"[{plan.get('Subplan Name') or plan['Parent Relationship']}] {what}"
    out.append(f"{'  ' * depth}{what} (rows {plan.get('Actual Rows', 0):,} x {plan.get('Actual Loops', 0):,}, "
               f"{plan.get('Actual Total Time', 0):.1f} ms)")  # fmt: skip
    for child in plan.get("Plans", []):
        _shape(child, depth + 1, out)
    return out


def explain(user: Any) -> tuple[float, list[str], int]:
    """(execution ms, the plan's shape, buffers hit) of the viewer's index statement, EXPLAIN (ANALYZE, BUFFERS)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from graph_memory.viewer.memory_index import memory_index
    from tests import plans

    with CaptureQueriesContext(connection) as captured:
        memory_index(viewer=user)
    statement = captured.captured_queries[-1]["sql"]
    plan = plans.explained(statement, options="ANALYZE, BUFFERS")
    return plan["Execution Time"], _shape(plan["Plan"]), int(plan["Plan"].get("Shared Hit Blocks", 0))


def measure(scale: world.Scale, names: dict[str, str], *, warmup: int, samples: int) -> dict[str, Any]:
    from django.db import connections

    from accounts.models import User
    from graph_memory.viewer.memory_index import memory_index
    from graph_memory.wall import access

    dbs = {db: world.wrapper_for(name) for db, name in names.items()}

    def on(db: str) -> None:
        connections["default"] = dbs[db]

    try:
        on("beside")
        users = {u.username: u for u in User.objects.filter(firm__slug=world.BIG_SLUG)}
        viewers = {cls: [users[n] for n in world.usernames(scale)[cls][:MEASURED]] for cls in CLASSES}
        visible = {cls: [access.visible_cases(u).count() for u in group] for cls, group in viewers.items()}
        shown = {cls: memory_index(viewer=viewers[cls][0]).cases for cls in CLASSES}
        rng = random.Random(28)
        times: dict[tuple[str, str], list[float]] = {}
        for i in range(warmup + samples):
            jobs = [(db, cls, u) for cls, group in viewers.items() for u in group for db in dbs]
            for db, cls, user in rng.sample(jobs, len(jobs)):
                on(db)
                t0 = time.perf_counter()
                memory_index(viewer=user)
                if i >= warmup:
                    times.setdefault((cls, db), []).append((time.perf_counter() - t0) * 1000)
        on("beside")
        plans = {cls: explain(viewers[cls][0]) for cls in CLASSES}
        server = world._sql("SELECT version(), current_setting('shared_buffers'), current_setting('work_mem')")[0]
    finally:
        for wrapper in dbs.values():
            wrapper.close()
    return {
        "times": {f"{c}|{d}": {"p50": percentile(t, 50), "p95": percentile(t, 95), "n": len(t)} for (c, d), t in times.items()},
        "visible": visible, "shown": shown, "plans": plans, "server": list(server), "warmup": warmup, "samples": samples,
    }  # fmt: skip


def section(scale: world.Scale, f: dict[str, Any]) -> str:
    from bench.run import cpu_model, memory_gib

    def t(cls: str, db: str) -> dict[str, float]:
        return f["times"][f"{cls}|{db}"]

    out = [f"## Memory index at scale (bench/bench_memory_index.py{' --small' if scale.name == SMALL.name else ''})\n"]
    out.append(
        f"Measured {f['date']} on {os.cpu_count()} cores ({cpu_model()}), {memory_gib()} memory, "
        f"{f['server'][0].split(' on ')[0]} (shared_buffers {f['server'][1]}, work_mem {f['server'][2]}); load "
        f"average (1 min) at start / end {f['load'][0]:.1f} / {f['load'][1]:.1f}. One firm of {scale.cases:,} cases "
        f"(bench/scale_world.py's generator: {scale.groups} practice groups, guardian user and group grants) alone "
        f"in its database and beside {scale.small_firms} firms of {scale.small_cases:,}; summaries written over a "
        "year, one in ten stale, one in thirty missing (the module docstring). "
        f"{f['samples']} samples after {f['warmup']} warm-up ones, each asking {MEASURED} viewers of every class "
        f"(the admins: {min(MEASURED, scale.admins)}) in both databases in a fresh random order; `memory_index` is "
        f"one statement. Generation took {f['generated_seconds'] / 60:.1f} min"
        f"{' (reused)' if f['reused'] else ''}.\n"
    )
    out.append(f"| viewer | visible cases | lines | p50 alone | p95 alone | p50 beside | p95 beside | goal (p50 ≤ {GOAL_P50:.0f}, p95 ≤ {GOAL_P95:.0f} ms) |")
    out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for cls in CLASSES:
        ok = all(t(cls, db)["p50"] <= GOAL_P50 and t(cls, db)["p95"] <= GOAL_P95 for db in ("alone", "beside"))
        out.append(
            f"| {cls} | {'/'.join(f'{n:,}' for n in f['visible'][cls])} | {f['shown'][cls]} | "
            f"{t(cls, 'alone')['p50']:.1f} | {t(cls, 'alone')['p95']:.1f} | {t(cls, 'beside')['p50']:.1f} | "
            f"{t(cls, 'beside')['p95']:.1f} | {'met' if ok else '**not met**'} |"
        )
    for cls in ("partner", "firm admin"):
        ms, shape, hits = f["plans"][cls]
        out.append(f"\nThe {cls}'s statement, beside (EXPLAIN ANALYZE: {ms:.1f} ms, {hits:,} buffers hit):\n")
        out.append("```text\n" + "\n".join(shape) + "\n```")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--small", "--reuse", "--drop"):
        parser.add_argument(flag, action="store_true")
    parser.add_argument("--samples", type=int)
    args = parser.parse_args()
    scale = SMALL if args.small else FULL
    os.environ.update(GRAPH_MEMORY_EMBEDDER="none", GRAPH_MEMORY_WRITER="extractive")
    os.environ.setdefault("GRAPH_MEMORY_LOG_LEVEL", "WARNING")
    os.environ["DATABASE_URL_ADMIN"] = world.admin_url()
    names = _names(scale)
    os.environ["DATABASE_URL"] = urlunsplit(urlsplit(os.environ["DATABASE_URL_ADMIN"])._replace(path=f"/{names['alone']}"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    load_before = os.getloadavg()[0]
    notes = [world.template_note(name) for name in names.values()]
    reused = bool(args.reuse and notes[0] and notes[0] == notes[1] and notes[0]["fingerprint"] == _fingerprint(scale))
    if reused:
        progress(f"reusing the databases generated {notes[0]['generated']}")
        note = notes[0]
    else:
        generate(scale, names)
        note = world.template_note(names["alone"]) or {}
        progress(f"generated in {note['seconds'] / 60:.1f} min")
    warmup, samples = (2, args.samples or 5) if args.small else (5, args.samples or 40)
    try:
        figures = measure(scale, names, warmup=warmup, samples=samples)
    finally:
        if args.drop:
            for name in names.values():
                world.drop(name)
    figures.update(
        date=dt.date.today().isoformat(), load=(load_before, os.getloadavg()[0]), reused=reused,
        generated_seconds=note["seconds"],
    )  # fmt: skip
    print(section(scale, figures))


if __name__ == "__main__":
    main()
