"""bench/bench_scale.py's measurements, on the working copies "alone" and "beside" of bench/scale_world.py.

Only the app's public functions (services, search, memory_index) and generic SQL (table sizes,
PostgreSQL's row counters) are used, so the figures stay comparable whatever the app keeps inside.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench import scale_peer as peer
from bench import scale_world as world
from bench.scratch import percentile

CLASSES = ("associate", "group member", "partner", "firm admin")
READS = ("walk from a client node", "lookup by name", "lookup by case number", "conflict check",
         "brief of a client", "whole search_cases", "memory index", "ask (offline routing)")  # fmt: skip
SEARCH = "whole search_cases"
MEASURED = 3  # viewers per class, asked in turn
# Each kind of change, on other rows each time. A change takes a few ms: 31 repeats (11 left its beside ÷ alone
# moving by 0.3 between runs, 2026-12-03: 1.32x, then 0.95x, for the same group membership; 3 by more); the
# no-op rebuild of the big firm takes 3 s, and 9 (at 3, one database's own repeats spread by 29 %, 2,849-3,679
# ms on 2026-12-04: three times what beside ÷ alone is held to).
CHANGE_REPEATS, REBUILD_REPEATS = 31, 9
FIRST_READ_WORD = "north"  # the first read after a change: a lookup by this name


@dataclass
class Viewer:
    user: Any
    cls: str
    visible: np.ndarray  # sorted case ids
    client_nodes: list[str] = field(default_factory=list)  # a client node of each visible case, in order
    keys: list[str] = field(default_factory=list)  # each visible case's number
    document_nodes: list[str] = field(default_factory=list)  # case nodes of visible cases with a document


@dataclass
class World:
    firm_id: int
    viewers: dict[str, list[Viewer]]
    ids: np.ndarray  # the big firm's case ids, sorted
    vectors: np.ndarray  # their summary vectors, row for row
    questions: list[str]

    def exact_top(self, viewer: Viewer, query: np.ndarray, k: int = 10) -> list[int]:
        rows = np.searchsorted(self.ids, viewer.visible)
        order = np.argsort(-(self.vectors[rows] @ query), kind="stable")[:k]
        return [int(viewer.visible[i]) for i in order]


def load(scale: world.Scale) -> World:
    from django.db import connection
    from pgvector.psycopg import register_vector

    from accounts.models import Firm, User
    from graph_memory.models import CaseSummary, Node
    from graph_memory.wall import access
    from practice.models import Case, Document
    from tests.long_documents import long_agreement

    firm = Firm.objects.get(slug=world.BIG_SLUG)
    users = {u.username: u for u in User.objects.filter(firm=firm)}
    case_client = dict(Case.objects.filter(firm=firm).values_list("pk", "client_id"))
    case_key = dict(Case.objects.filter(firm=firm).values_list("pk", "key"))
    nodes = Node.objects.filter(firm_id=firm.pk)
    client_node = {r: str(n) for r, n in nodes.filter(kind=Node.Kind.CLIENT).values_list("ref_id", "pk")}
    case_node = {r: str(n) for r, n in nodes.filter(kind=Node.Kind.CASE).values_list("ref_id", "pk")}
    with_document = set(Document.objects.filter(firm=firm).values_list("case_id", flat=True))
    viewers: dict[str, list[Viewer]] = {}
    for cls, names in world.usernames(scale).items():
        viewers[cls] = []
        for name in names[:MEASURED]:
            user = users[name]
            visible = np.array(sorted(access.visible_cases(user).values_list("pk", flat=True)), dtype=np.int64)
            viewers[cls].append(Viewer(
                user, cls, visible, [client_node[case_client[int(c)]] for c in visible],
                [case_key[int(c)] for c in visible], [case_node[int(c)] for c in visible if int(c) in with_document],
            ))  # fmt: skip
    connection.ensure_connection()
    register_vector(connection.connection)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT case_id, embedding FROM {CaseSummary._meta.db_table} WHERE firm_id = %s ORDER BY case_id",
            [firm.pk],
        )
        rows = cursor.fetchall()
    _, questions = long_agreement(articles=3, pages_per_article=3)
    return World(
        firm.pk, viewers, np.array([r[0] for r in rows], dtype=np.int64),
        np.stack([r[1].to_numpy().astype(np.float32) for r in rows]), [q.text for q in questions],
    )  # fmt: skip


def _read(name: str) -> Callable[[Viewer, Any], Any]:
    from graph_memory import services
    from graph_memory.viewer import memory_index
    from graph_memory.wall import access
    from tests.search_support import FixedEmbedder

    def walk(v: Viewer, node: str) -> Any:
        return services.node_neighbors(viewer=v.user, node_id=node)

    def brief(v: Viewer, node: str) -> Any:
        try:
            return services.node_brief(viewer=v.user, node_id=node)
        except access.NotFound:  # a client of a visible case is always reachable: this would be a bug
            raise AssertionError(f"brief of a client of a visible case not found for {v.user}") from None

    return {
        "walk from a client node": walk,
        "lookup by name": lambda v, q: services.nodes_lookup(viewer=v.user, q=q),
        "lookup by case number": lambda v, q: services.nodes_lookup(viewer=v.user, q=q),
        "conflict check": lambda v, name: services.conflicts_check(viewer=v.user, name=name),
        "brief of a client": brief,
        SEARCH: lambda v, p: services.search_cases(viewer=v.user, q=p[0], limit=10, embedder=FixedEmbedder(p[1])),
        "memory index": lambda v, _: memory_index.memory_index(viewer=v.user),
        "ask (offline routing)": lambda v, p: services.ask_documents(viewer=v.user, node_id=p[0], question=p[1]),
    }[name]


def measure_reads(
    w: World, on: Callable[[str], None], *, warmup: int, samples: int, progress: Callable[[str], None]
) -> dict[str, Any]:
    """p50/p95 of every read for every class in both databases, and search against the peer (beside only),
    every call of a sample in a fresh random order; recall@10 of the vector rankings."""
    from bench.bench_graph import WORDS, company
    from graph_memory.viewer import search
    from tests import search_support

    rng = random.Random(28)
    queries = search_support._normalised(np.random.default_rng(99), warmup + samples, world.basis())
    times: dict[tuple[str, str, str], list[float]] = {}
    recall: dict[tuple[str, str], list[float]] = {}
    outside_top = dict.fromkeys(CLASSES, 0)  # hits by meaning alone that are not in the exact top 10
    for read in READS:
        progress(f"  {read} ...")
        fn = _read(read)
        for i in range(warmup + samples):
            shared = {
                "lookup by name": rng.choice(WORDS)[: rng.randint(3, 8)],
                "conflict check": company(rng),
                SEARCH: (search_support.query_words(i), queries[i]),
            }.get(read)
            jobs = []
            for cls in CLASSES:
                group = [v for v in w.viewers[cls] if v.document_nodes or read != "ask (offline routing)"]
                if not group:
                    continue
                v = group[i % len(group)]
                j = rng.randrange(len(v.visible))
                param = {
                    "walk from a client node": v.client_nodes[j], "brief of a client": v.client_nodes[j],
                    "lookup by case number": v.keys[j],
                    "ask (offline routing)": (rng.choice(v.document_nodes or [""]), rng.choice(w.questions)),
                }.get(read, shared)  # fmt: skip
                jobs += [(db, v, param, None) for db in ("alone", "beside")]
                if read == SEARCH:
                    jobs += [("beside", v, param, way) for way in peer.WAYS]
            for db, v, param, way in rng.sample(jobs, len(jobs)):
                on(db)
                t0 = time.perf_counter()
                if way is None:
                    result = fn(v, param)
                else:
                    result = peer.search(
                        way=way, viewer=v.user, q=param[0], vector=param[1], model=search_support.MODEL
                    )
                ms = (time.perf_counter() - t0) * 1000
                if read == SEARCH:
                    exact = w.exact_top(v, param[1])
                    hits = [h.case_id for h in result.results] if way is None else result[0]
                    assert set(hits) <= set(v.visible.tolist()), "a search returned a case the viewer may not open"
                    if way is None:
                        outside_top[v.cls] += sum(
                            h.case_id not in exact for h in result.results if h.matched == ("meaning",)
                        )
                    elif i >= warmup:
                        recall.setdefault((v.cls, way), []).append(len(set(result[1]) & set(exact)) / len(exact))
                if i >= warmup:
                    times.setdefault((read, v.cls, db if way is None else f"peer: {way}"), []).append(ms)
            if read == SEARCH and i >= warmup:
                on("beside")
                for cls in CLASSES:
                    v = w.viewers[cls][i % len(w.viewers[cls])]
                    found = search.vector_ranking(
                        viewer=v.user, vector=queries[i], model=search_support.MODEL, depth=10
                    )
                    exact = w.exact_top(v, queries[i])
                    recall.setdefault((cls, "this app"), []).append(len(set(found.case_ids) & set(exact)) / len(exact))
    return {
        "times": {
            "|".join(k): {"p50": percentile(t, 50), "p95": percentile(t, 95), "n": len(t)} for k, t in times.items()
        },
        "recall": {"|".join(k): {"min": min(r), "mean": statistics.mean(r)} for k, r in recall.items()},
        # Each sample asks one viewer the same thing in both databases: the median of those calls' own ratios
        # (beside ÷ alone), which the spread of what the samples ask (a three-letter name against an eight-letter
        # one) does not move as it moves the ratio of the two p50s.
        "paired": {
            f"{read}|{cls}": {"p50": percentile([b / a for a, b in zip(alone, beside, strict=True)], 50), "n": len(alone)}
            for (read, cls, db), alone in times.items()
            if db == "alone" and (beside := times.get((read, cls, "beside")))
        },
        "meaning_hits_outside_exact_top10": outside_top,
        # Every sample's time, in order (sample i asked the class's viewer i % its size): to look again.
        "samples_ms": {"|".join(k): [round(ms, 3) for ms in t] for k, t in times.items()},
    }


def storage(summaries_table: str) -> dict[str, Any]:
    """Every memory table's size (indexes and TOAST included; a partitioned table as the sum of its partitions)
    and rows, and the materialised per-viewer state: the tables with a `viewer_id` or `holder` column (the
    question log and the ledgers aside; a holder is a user, or a group negated: graph_memory.models.sight), their rows and bytes
    per viewer or holder, and the tables that only serve them (the sight's per-case and state rows)."""
    from graph_memory.models import AccessChange, DocumentQuery, ServedRow

    sql = world._sql
    tables = sql(
        r"""SELECT c.relname, CASE WHEN c.relkind = 'p' THEN (SELECT coalesce(sum(pg_total_relation_size(t.relid)), 0)
                   FROM pg_partition_tree(c.oid) t WHERE t.isleaf) ELSE pg_total_relation_size(c.oid) END
            FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
              AND NOT c.relispartition AND c.relname LIKE 'graph\_memory\_%%' ORDER BY 2 DESC, 1"""
    )
    sizes = {
        name: {"bytes": int(size), "rows": int(sql(f'SELECT count(*) FROM "{name}"')[0][0])} for name, size in tables
    }
    columns = sql(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND column_name IN ('viewer_id', 'holder') AND table_name = ANY(%s)", [list(sizes)],
    )  # fmt: skip
    # Records, not state that serves reads: the question log, the access and served ledgers (issue 31).
    records = {DocumentQuery._meta.db_table, AccessChange._meta.db_table, ServedRow._meta.db_table}
    keyed = {t: c for t, c in columns if t not in records}
    serving = {"graph_memory_sightcase", "graph_memory_sightstate", "graph_memory_sightviewer"} & set(sizes)
    viewer_tables = sorted(set(keyed) | serving)
    per_viewer: dict[int, list[int]] = {}
    for name, column in keyed.items():
        for viewer_id, rows, size in sql(
            f'SELECT "{column}", count(*), sum(pg_column_size(t.*)) FROM "{name}" t GROUP BY 1'
        ):
            got = per_viewer.setdefault(int(viewer_id), [0, 0])
            got[0], got[1] = got[0] + int(rows), got[1] + int(size)
    state = sum(sizes[t]["bytes"] for t in viewer_tables)
    return {
        "tables": sizes, "viewer_tables": viewer_tables, "per_viewer": per_viewer, "viewer_state_bytes": state,
        "summaries_bytes": sizes[summaries_table]["bytes"], "ratio": state / sizes[summaries_table]["bytes"],
        "database_bytes": int(sql("SELECT pg_database_size(current_database())")[0][0]),
    }  # fmt: skip


def per_class(per_viewer: dict[int, list[int]], scale: world.Scale) -> dict[str, dict[str, float]]:
    """Mean rows and bytes (row data, without indexes) per viewer that has any, by class."""
    from accounts.models import User

    classes = {u: c for c, names in world.usernames(scale).items() for u in names}
    name_of = dict(User.objects.filter(pk__in=list(per_viewer)).values_list("pk", "username"))
    out: dict[str, list[list[int]]] = {}
    for viewer_id, got in per_viewer.items():
        if viewer_id < 0:  # a group's rows, held once for all its members
            out.setdefault("group (held once for its members)", []).append(got)
            continue
        out.setdefault(classes.get(name_of.get(viewer_id, ""), "lawyer of a small firm"), []).append(got)
    return {c: {"viewers": len(v), "rows": statistics.mean(r for r, _ in v), "bytes": statistics.mean(b for _, b in v)}
            for c, v in out.items()}  # fmt: skip


def measure_changes(
    w: World, on: Callable[[str], None], rng: random.Random, repeats: int, rebuild_repeats: int
) -> list[dict[str, Any]]:
    """Each kind of case change and grant, `repeats` times (each on other rows; the no-op rebuild
    `rebuild_repeats` times), in both databases by turns: the write's time and the rows it wrote in memory tables,
    then each class's first read (a lookup) with the rows that read wrote. Medians over the repeats."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from guardian.shortcuts import assign_perm

    from graph_memory import services
    from graph_memory.models import CaseSummary
    from practice.models import Case, CaseCounterparty, Counterparty
    from tests import search_support

    first = {cls: w.viewers[cls][0] for cls in CLASSES}
    associates, members = w.viewers["associate"], w.viewers["group member"]
    other_member = members[1 % len(members)]
    # Cases every measured class may open: each class is the audience of a change to one.
    everyone = sorted(set.intersection(*(set(v.visible.tolist()) for v in first.values())))
    not_the_groups = sorted(set(other_member.visible.tolist()) - set(members[0].visible.tolist()))
    group_of = {g.pk: g for g in Group.objects.filter(name__startswith=f"{world.BIG_SLUG}-group-")}
    member_group = group_of[members[0].user.groups.values_list("pk", flat=True)[0]]
    joined_group = group_of[other_member.user.groups.values_list("pk", flat=True)[0]]
    vectors = search_support._normalised(np.random.default_rng(5), repeats, world.basis())
    # Who joins the group, one associate a repeat (a second join is no change): the measured associates, then
    # others of the firm (none is in a group), so the membership is repeated as often as the other changes.
    measured = {a.user.pk for a in associates}
    others = get_user_model().objects.filter(username__startswith=f"{world.BIG_SLUG}-associate-").exclude(pk__in=measured)
    joiners = [*associates, *(Viewer(u, "associate", np.array([], dtype=np.int64)) for u in others.order_by("username")[:repeats])]

    def resync(case_id: int) -> float:
        on_case = CaseCounterparty.objects.filter(case_id=case_id).values("counterparty_id")
        party = Counterparty.objects.filter(firm_id=w.firm_id).exclude(pk__in=on_case).order_by("pk").first()
        CaseCounterparty.objects.bulk_create([CaseCounterparty(firm_id=w.firm_id, case_id=case_id, counterparty=party)])
        started = time.perf_counter()
        services.graph_sync_case(case_id=case_id)
        return time.perf_counter() - started  # the host's insert is not the app's cost

    def plan(r: int) -> list[tuple[str, str, Callable[[], Any], dict[str, Viewer]]]:
        """(label, audience, write, the viewer whose first read is timed, by class) of repeat r: each repeat
        on other rows, for as many repeats as `distinct` says there are."""
        target, associate, joiner = everyone[r % len(everyone)], associates[r % len(associates)], joiners[r % len(joiners)]
        grantable = sorted(set(other_member.visible.tolist()) - set(associate.visible.tolist()))
        readers = {**first, "associate": associate}
        return [
            ("one case's map re-synced (a counterparty added)", "every class", lambda: resync(target), first),
            ("one summary's vector changed", "every class",
             lambda: CaseSummary.objects.filter(case_id=target).update(embedding=vectors[r].tolist()), first),
            ("user grant: an associate given one more case", "the associate",
             lambda: assign_perm("view_case", associate.user, Case.objects.get(pk=grantable[r])), readers),
            ("group grant: a practice group given one more case", "the group's members and partners",
             lambda: assign_perm("view_case", member_group, Case.objects.get(pk=not_the_groups[r])), first),
            ("group membership: an associate joins a practice group", "the associate",
             lambda: joiner.user.groups.add(joined_group), {**first, "associate": joiner}),
            ("no-op map rebuild of the big firm", "nobody", lambda: services.graph_rebuild_firm(firm_id=w.firm_id), first),
        ]  # fmt: skip

    # How many repeats of each change can be on other rows: a case every class may open each time; an
    # associate given another case each time (one of the measured associates in turn); another associate
    # joining the group each time (`joiners`); the rebuild, the same each time.
    grants = min(len(set(other_member.visible.tolist()) - set(a.visible.tolist())) for a in associates)
    distinct = [len(everyone), len(everyone), grants, len(not_the_groups), len(joiners), rebuild_repeats]
    rows = []
    for n, (label, audience, _, _) in enumerate(plan(0)):
        runs: dict[str, list[dict[str, Any]]] = {"alone": [], "beside": []}
        times = min(repeats, distinct[n])
        for r in range(times):
            for db in ("alone", "beside") if (n + r) % 2 == 0 else ("beside", "alone"):
                on(db)
                _, _, write, readers = plan(r)[n]
                before = world.memory_writes()
                t0 = time.perf_counter()
                own = write()
                ms = (own if isinstance(own, float) else time.perf_counter() - t0) * 1000
                got: dict[str, Any] = {"ms": ms, "written": world.writes_since(before), "first_reads": {}}
                for cls in rng.sample(CLASSES, len(CLASSES)):
                    before = world.memory_writes()
                    t0 = time.perf_counter()
                    services.nodes_lookup(viewer=readers[cls].user, q=FIRST_READ_WORD)
                    got["first_reads"][cls] = {"ms": (time.perf_counter() - t0) * 1000,
                                               "written": sum(world.writes_since(before).values())}  # fmt: skip
                runs[db].append(got)
                for group in w.viewers.values():  # every measured viewer current again before the next write
                    for v in group:
                        services.nodes_lookup(viewer=v.user, q="zq")
        # Repeat r wrote the same rows in both databases: the median of those repeats' own ratios, as for reads.
        paired = statistics.median(b["ms"] / a["ms"] for a, b in zip(runs["alone"], runs["beside"], strict=True))
        rows.append({"change": label, "audience": audience, "repeats": times, "paired": paired,
                     **{db: _medians(got) for db, got in runs.items()}})  # fmt: skip
    return rows


def _medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """A change's repeats summed up: median time, the rows written by the repeat of median total, and per class
    the median and the worst first read."""
    by_total = sorted(runs, key=lambda got: sum(got["written"].values()))
    return {
        "ms": statistics.median(got["ms"] for got in runs), "ms_all": [got["ms"] for got in runs],
        "written": by_total[len(by_total) // 2]["written"],
        "first_reads": {cls: {"ms": statistics.median(got["first_reads"][cls]["ms"] for got in runs),
                              "max": max(got["first_reads"][cls]["ms"] for got in runs),
                              "written": statistics.median(got["first_reads"][cls]["written"] for got in runs)}
                        for cls in CLASSES},
    }  # fmt: skip


def steady_lookup(w: World, on: Callable[[str], None], repeats: int = 7) -> dict[str, dict[str, float]]:
    """Each class's lookup of FIRST_READ_WORD when nothing changed (median of a few): what a first read is held against."""
    from graph_memory import services

    out: dict[str, dict[str, float]] = {}
    for db in ("alone", "beside"):
        on(db)
        for cls in CLASSES:
            v = w.viewers[cls][0]
            ms = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                services.nodes_lookup(viewer=v.user, q=FIRST_READ_WORD)
                ms.append((time.perf_counter() - t0) * 1000)
            out.setdefault(db, {})[cls] = statistics.median(ms[1:])
    return out


def run(scale: world.Scale, names: dict[str, str], progress: Callable[[str], None]) -> dict[str, Any]:
    from django.conf import settings
    from django.db import connections
    from django.test import override_settings

    from graph_memory.models import CaseSummary
    from tests import search_support

    dbs = {"alone": world.wrapper_for(names["alone"]), "beside": world.wrapper_for(names["beside"])}

    def on(db: str) -> None:
        connections["default"] = dbs[db]

    small = scale.name == "small"
    # 60 samples: at 30, which reads missed beside ÷ alone by the ratio of their p50s changed from run to run
    # (2026-12-03, docs/BENCHMARKS.md); the measurements take about twice as long.
    warmup, samples = (1, 3) if small else (3, 60)
    try:
        on("beside")
        w = load(scale)
        # The synthetic model gets a similarity floor of 0, so a search's page is full of hits by meaning
        # (each with its snippet), as a real model's is; with none, only word hits would qualify.
        floors = {search_support.MODEL: 0.0, "*": None}
        with override_settings(GRAPH_MEMORY={**settings.GRAPH_MEMORY, "SEARCH_MIN_SIMILARITY": floors}):
            progress(
                f"reads: {samples} samples after {warmup} warm-up, {len(READS)} reads x {len(CLASSES)} classes x 2 databases ..."
            )
            t0 = time.perf_counter()
            reads = measure_reads(w, on, warmup=warmup, samples=samples, progress=progress)
            reads["seconds"] = time.perf_counter() - t0
            progress("storage ...")
            sizes = {}
            for db in ("beside", "alone"):
                on(db)
                sizes[db] = storage(CaseSummary._meta.db_table)
                sizes[db]["per_class"] = per_class(sizes[db].pop("per_viewer"), scale)
            steady = steady_lookup(w, on)
            progress("one case change, one grant ...")
            changes = measure_changes(w, on, random.Random(7), repeats=CHANGE_REPEATS, rebuild_repeats=REBUILD_REPEATS)
        server = world._sql("SELECT version(), current_setting('shared_buffers'), current_setting('work_mem')")[0]
    finally:
        for wrapper in dbs.values():
            wrapper.close()
    return {
        "reads": reads, "storage": sizes, "steady_first_read": steady, "changes": changes, "server": list(server),
        "viewers": {c: [{"username": v.user.username, "visible": len(v.visible), "documents": len(v.document_nodes)}
                        for v in group] for c, group in w.viewers.items()},
        "samples": samples, "warmup": warmup, "peers": list(peer.WAYS), "change_repeats": CHANGE_REPEATS,
        "rebuild_repeats": REBUILD_REPEATS,
    }  # fmt: skip
