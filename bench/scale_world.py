"""The database of issue 28's goal, for bench/bench_scale.py: one big firm beside many small ones.

The big firm has four classes of viewer, as a large practice grants access:
- associates, each on the team of ~ASSOCIATE_CASES cases (django-guardian user grants, as the
  host writes them for owner and team);
- practice-group members: GROUPS practice groups split the firm's cases, each group holds a
  guardian GROUP grant on its cases, and a member belongs to one group;
- partners, members of PARTNER_GROUPS groups, and on the team of a few cases of their own anywhere
  in the firm (user grants);
- firm admins, who may open every case.
Each case has a client (a few clients hold many cases), 1-3 counterparties, an owner and a team,
a summary with a synthetic 384-d vector and words (tests/search_support.py's generators), and one
case in DOCUMENT_EVERY a processed document. Rows go in with bulk inserts and no signals; the map
is built by the app's own `graph_rebuild_firm`, the cases' last activity (the memory index's order)
by `activity_rebuild`, the firms' search indexes by `ensure_search_indexes`.
Then every lawyer reads once (a lookup), so whatever the app keeps per viewer is there, as on a
working day.

Generation runs once into two template databases, kept between runs (`--reuse`): "alone" (the big
firm only) and "beside" (a copy of it to which the small firms are added, so the big firm's rows
and ids are the same in both). Each run measures on fresh copies of them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
GENERATOR_VERSION = 2  # bump when what is generated changes: kept templates are then regenerated
SEED = 2028
BIG_SLUG = "big-firm"
DOCUMENT_KEY = "agreement"


@dataclass(frozen=True)
class Scale:
    name: str
    cases: int  # in the big firm
    groups: int
    members_per_group: int
    partners: int
    partner_groups: int
    partner_own_cases: int
    associates: int
    associate_cases: int  # the mean an associate is on
    admins: int
    clients: int
    counterparties: int
    small_firms: int
    small_cases: int
    small_lawyers: int
    document_every: int  # one case in this many has a processed document


FULL = Scale(
    name="full", cases=50_000, groups=10, members_per_group=16, partners=20, partner_groups=4, partner_own_cases=100,
    associates=320, associate_cases=200, admins=5, clients=5_000, counterparties=15_000,
    small_firms=20, small_cases=2_000, small_lawyers=20, document_every=100,
)  # fmt: skip
SMALL = Scale(
    name="small", cases=1_200, groups=3, members_per_group=2, partners=2, partner_groups=2, partner_own_cases=10,
    associates=6, associate_cases=40, admins=1, clients=200, counterparties=500,
    small_firms=2, small_cases=200, small_lawyers=4, document_every=40,
)  # fmt: skip


def database_names(scale: Scale) -> dict[str, str]:
    """Template and working database names; all end in `_scale` (BENCH_DB_SUFFIX: several runs on one server)."""
    suffix = os.environ.get("BENCH_DB_SUFFIX", "") + "_scale"
    base = f"bench_{scale.name}"
    return {
        "alone_tpl": f"{base}_alone_tpl{suffix}",
        "beside_tpl": f"{base}_beside_tpl{suffix}",
        "alone": f"{base}_alone{suffix}",
        "beside": f"{base}_beside{suffix}",
    }


def fingerprint(scale: Scale) -> str:
    """What the templates depend on: the scale, this generator, and the code of the app and the host
    (their models, migrations and the map and sight builders), so a kept template is reused only as built."""
    digest = hashlib.sha256(json.dumps([asdict(scale), GENERATOR_VERSION, SEED]).encode())
    for folder in ("graph_memory", "practice", "accounts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            digest.update(str(path.relative_to(ROOT)).encode())
            digest.update(path.read_bytes())
    for path in (ROOT / "bench" / "scale_world.py", ROOT / "tests" / "search_support.py"):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


# --- the server and its databases -----------------------------------------------------------------


def admin_url() -> str:
    from config.embedded_db import embedded_database_url

    return os.environ.get("DATABASE_URL_ADMIN") or os.environ.get("DATABASE_URL") or embedded_database_url(ROOT)


def _admin(statement: str, params: tuple[Any, ...] = ()) -> list[tuple]:
    import psycopg

    with psycopg.connect(admin_url(), autocommit=True) as conn:
        cur = conn.execute(statement, params)
        return cur.fetchall() if cur.description else []


def drop(name: str) -> None:
    _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def create(name: str, template: str | None = None) -> None:
    drop(name)
    # FILE_COPY: a copy of the files, not of every row through the WAL (minutes faster for gigabytes).
    _admin(f"CREATE DATABASE {name}" + (f" TEMPLATE {template} STRATEGY FILE_COPY" if template else ""))


def template_note(name: str) -> dict[str, Any] | None:
    """What a kept template says about itself (written once its generation finished), or None."""
    rows = _admin("SELECT shobj_description(d.oid, 'pg_database') FROM pg_database d WHERE d.datname = %s", (name,))
    if not rows or not rows[0][0]:
        return None
    try:
        return json.loads(rows[0][0])
    except ValueError:
        return None


def set_template_note(name: str, note: dict[str, Any]) -> None:
    text = json.dumps(note).replace("'", "''")
    _admin(f"COMMENT ON DATABASE {name} IS '{text}'")


def database_bytes(name: str) -> int:
    return int(_admin("SELECT pg_database_size(%s)", (name,))[0][0])


def use_database(name: str) -> None:
    """Point Django's default connection at database `name` (the previous one is closed). Django must be set up."""
    from django.db import connections

    current = connections["default"]
    current.close()
    settings = {**current.settings_dict, "NAME": name}
    connections["default"] = type(current)(settings, alias="default")


def release() -> None:
    """Close Django's connection (a database is copied only while nobody is connected to it)."""
    from django.db import connections

    connections["default"].close()


def wrapper_for(name: str) -> Any:
    """A second connection object, alias "default", on database `name` (swapped in by `connections["default"] = ...`)."""
    from django.db import connections

    current = connections["default"]
    return type(current)({**current.settings_dict, "NAME": name}, alias="default")


# --- generation -----------------------------------------------------------------------------------


def usernames(scale: Scale, slug: str = BIG_SLUG) -> dict[str, list[str]]:
    """The big firm's viewers by class, in the order they are made (the first ones are measured)."""
    return {
        "associate": [f"{slug}-associate-{i:03d}" for i in range(scale.associates)],
        "group member": [
            f"{slug}-member-g{g}-{i:02d}" for i in range(scale.members_per_group) for g in range(scale.groups)
        ],
        "partner": [f"{slug}-partner-{i:02d}" for i in range(scale.partners)],
        "firm admin": [f"{slug}-admin-{i}" for i in range(scale.admins)],
    }


def _sql(statement: str, params: tuple[Any, ...] | list[Any] = ()) -> list[tuple]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


def basis() -> np.ndarray:
    """The low-rank subspace every summary vector and query is drawn from (tests/search_support.py)."""
    from graph_memory.vectors.embeddings import vector_dimensions
    from tests import search_support

    return np.random.default_rng(SEED).standard_normal((search_support.RANK, vector_dimensions()), dtype=np.float32)


def _firm(
    *, slug: str, cases: int, groups: int, lawyers: dict[str, list[str]], clients: int, counterparties: int,
    associate_cases: int, partner_groups: int, partner_own_cases: int, document_every: int, seed: int,
) -> int:  # fmt: skip
    """One firm's host rows (users, groups, clients, counterparties, cases, teams, grants, documents) and
    summaries; returns the firm id. The map, search indexes and sights are built after."""
    from django.contrib.auth.models import Group
    from django.utils import timezone

    from accounts.models import Firm, User
    from bench.bench_graph import WORDS, company
    from graph_memory.ledger.users import record_user
    from graph_memory.models import CaseSummary
    from practice.models import (
        Case,
        CaseCounterparty,
        CaseGroupObjectPermission,
        CaseTeamMember,
        CaseUserObjectPermission,
        Client,
        Counterparty,
        Document,
    )  # fmt: skip
    from practice.permissions import view_case_permission
    from tests import search_support
    from tests.long_documents import long_agreement

    rng, nprng = random.Random(seed), np.random.default_rng(seed)
    firm = Firm.objects.create(slug=slug, name=f"{slug.replace('-', ' ').title()} LLP")
    made = {}
    for role, names in lawyers.items():
        admin = role == "firm admin"
        made[role] = User.objects.bulk_create(
            User(username=u, name=f"{rng.choice(('Ada', 'Ben', 'Chen', 'Dana', 'Eli'))} {u}", firm=firm,
                 role=User.Role.ADMIN if admin else User.Role.LAWYER, is_staff=admin)
            for u in names
        )  # fmt: skip
    # What a host's User.save() records through Django's post_save (ledger/users.py): the user's firm, so that
    # a group membership's trigger finds it, as it does on a real host. bulk_create sends no signal.
    for role_users in made.values():
        for u in role_users:
            record_user(viewer_id=u.pk, user=u, created=True)
    group_rows = Group.objects.bulk_create(Group(name=f"{slug}-group-{g}") for g in range(groups))
    memberships = [
        User.groups.through(user_id=u.pk, group_id=group_rows[int(u.username.rsplit("-g", 1)[1].split("-")[0])].pk)
        for u in made.get("group member", [])
    ]
    for i, p in enumerate(made.get("partner", [])):
        memberships += [
            User.groups.through(user_id=p.pk, group_id=group_rows[(i + j) % groups].pk) for j in range(partner_groups)
        ]
    User.groups.through.objects.bulk_create(memberships)
    client_ids = [c.pk for c in Client.objects.bulk_create(
        (Client(firm=firm, key=f"cl-{i}", name=company(rng)) for i in range(clients)), batch_size=5000)]  # fmt: skip
    party_ids = [c.pk for c in Counterparty.objects.bulk_create(
        (Counterparty(firm=firm, key=f"cp-{i}", name=company(rng)) for i in range(counterparties)), batch_size=5000)]  # fmt: skip
    # A few clients hold many cases (Zipf-like), as in a real practice: their briefs and walks page.
    weights = 1.0 / (np.arange(clients) + 5.0)
    case_clients = nprng.choice(client_ids, size=cases, p=weights / weights.sum()).tolist()
    members = [[u.pk for u in made.get("group member", []) if f"-g{g}-" in u.username] for g in range(groups)]
    everyone = [u.pk for role in ("group member", "partner", "associate") for u in made.get(role, [])]
    owners = [rng.choice(members[i % groups] or everyone) for i in range(cases)]
    now = timezone.now()
    rows = _sql(
        f"""INSERT INTO {Case._meta.db_table} (firm_id, key, title, status, opened, description, client_id, owner_id, updated_at)
        SELECT %s, k, t, 'open', DATE '2024-01-01' + (n %% 900)::int, 'A matter.', c, o, %s - n * interval '1 minute'
        FROM unnest(%s::text[], %s::text[], %s::bigint[], %s::bigint[]) WITH ORDINALITY AS x(k, t, c, o, n)
        RETURNING id, key""",
        (firm.pk, now, [f"2026-{i:05d}" for i in range(cases)],
         [f"{rng.choice(WORDS)} v. {rng.choice(WORDS)} ({i})" for i in range(cases)], case_clients, owners),
    )  # fmt: skip
    by_key = dict((k, i) for i, k in rows)
    case_ids = [by_key[f"2026-{i:05d}"] for i in range(cases)]
    # Teams: associates work within one practice group's cases; partners on a few cases anywhere.
    associates = [u.pk for u in made.get("associate", [])]
    team: set[tuple[int, int]] = set()
    if associates:
        pools = [[a for j, a in enumerate(associates) if j % groups == g] or associates for g in range(groups)]
        slots = round(len(associates) * associate_cases)
        for n in range(slots):
            i = n % cases if n < cases else rng.randrange(cases)
            team.add((case_ids[i], rng.choice(pools[i % groups])))
    for p in made.get("partner", []):
        team |= {(case_ids[i], p.pk) for i in rng.sample(range(cases), min(partner_own_cases, cases))}
    CaseTeamMember.objects.bulk_create(
        (CaseTeamMember(firm=firm, case_id=c, user_id=u) for c, u in sorted(team)), batch_size=10_000
    )
    links = {(case_ids[i], rng.choice(party_ids)) for i in range(cases) for _ in range(rng.randint(1, 3))}
    CaseCounterparty.objects.bulk_create(
        (CaseCounterparty(firm=firm, case_id=c, counterparty_id=p) for c, p in sorted(links)), batch_size=10_000
    )
    permission = view_case_permission().pk
    # Guardian's rows as the host writes them (practice.permissions): owner and team, user grants.
    _sql(
        f"""INSERT INTO {CaseUserObjectPermission._meta.db_table} (permission_id, user_id, content_object_id)
        SELECT %s, owner_id, id FROM {Case._meta.db_table} WHERE firm_id = %s
        UNION SELECT %s, user_id, case_id FROM {CaseTeamMember._meta.db_table} WHERE firm_id = %s""",
        (permission, firm.pk, permission, firm.pk),
    )
    if groups:
        _sql(
            f"""INSERT INTO {CaseGroupObjectPermission._meta.db_table} (permission_id, group_id, content_object_id)
            SELECT %s, g, c FROM unnest(%s::bigint[], %s::int[]) AS x(c, g)""",
            (permission, case_ids, [group_rows[i % groups].pk for i in range(cases)]),
        )
    vectors = search_support._normalised(nprng, cases, basis())
    search_support._copy_summaries(firm.pk, np.array(case_ids), vectors, search_support._random_texts(nprng, cases))
    pages, _ = long_agreement(articles=3, pages_per_article=3, seed=seed)
    Document.objects.bulk_create(
        (Document(firm=firm, case_id=case_ids[i], key=DOCUMENT_KEY, title="Share Purchase Agreement",
                  status=Document.Status.PROCESSED, created=now, pages=pages)
         for i in range(0, cases, document_every)),
        batch_size=2000,
    )  # fmt: skip
    assert CaseSummary.objects.filter(firm=firm).count() == cases
    return firm.pk


def _without_search_indexes(load: Callable[[], None]) -> None:
    """Run `load` with the summaries' shared text and vector indexes dropped, and build them after (much
    faster than row by row, as tests/search_support.py loads)."""
    from django.db import connection

    from graph_memory.models import CaseSummary

    indexes = [i for i in CaseSummary._meta.indexes if i.name in {"gm_summary_fts", "gm_summary_embedding_hnsw"}]
    present = {
        r[0] for r in _sql("SELECT indexname FROM pg_indexes WHERE tablename = %s", [CaseSummary._meta.db_table])
    }
    indexes = [i for i in indexes if i.name in present]
    with connection.schema_editor() as editor:
        for index in indexes:
            editor.remove_index(CaseSummary, index)
    load()
    _sql("SET maintenance_work_mem = '1GB'")
    with connection.schema_editor() as editor:
        for index in indexes:
            editor.add_index(CaseSummary, index)


def _build_firm(firm_id: int, progress: Callable[[str], None]) -> dict[str, float]:
    """The app's own derived data of one firm: its map and its cases' last activity, its documents' indexes.
    Returns seconds per step."""
    from graph_memory import services
    from practice.models import Document

    t0 = time.perf_counter()
    services.graph_rebuild_firm(firm_id=firm_id)
    # Each case's last activity (the memory index's order): the rows were loaded past the receivers.
    services.activity_rebuild(firm_id=firm_id)
    t1 = time.perf_counter()
    for case_id in Document.objects.filter(firm_id=firm_id).values_list("case_id", flat=True):
        services.build_document_index(case_id=case_id, key=DOCUMENT_KEY, offline=True)
    t2 = time.perf_counter()
    progress(f"  firm {firm_id}: map {t1 - t0:.1f} s, document indexes {t2 - t1:.1f} s")
    return {"map": t1 - t0, "documents": t2 - t1}


def memory_writes() -> dict[str, int]:
    """Rows inserted, updated and deleted so far in each memory table (`graph_memory_*`; a partition counted
    under its root), from PostgreSQL's statistics, this backend's pending counts flushed first."""
    _sql("SELECT pg_stat_force_next_flush()")  # flushed when the backend goes idle, before the next statement
    rows = _sql(
        "SELECT coalesce(pg_partition_root(relid)::regclass::text, relname::text), "
        "sum(n_tup_ins + n_tup_upd + n_tup_del) FROM pg_stat_user_tables GROUP BY 1"
    )
    return {t: int(n) for t, n in rows if t.startswith("graph_memory_")}


def writes_since(before: dict[str, int]) -> dict[str, int]:
    """Rows written in each memory table since `before` (`memory_writes`), tables with none left out."""
    after = memory_writes()
    return {t: n - before.get(t, 0) for t, n in sorted(after.items()) if n != before.get(t, 0)}


def everyone_reads_once(firm_ids: list[int]) -> tuple[int, float]:
    """Each lawyer of these firms asks one lookup, as on the first morning: whatever the app keeps per
    viewer is built now. Returns (lawyers, seconds)."""
    from accounts.models import User
    from graph_memory import services

    started = time.perf_counter()
    lawyers = list(User.objects.filter(firm_id__in=firm_ids, role=User.Role.LAWYER).order_by("pk"))
    for user in lawyers:
        services.nodes_lookup(viewer=user, q="zq")
    return len(lawyers), time.perf_counter() - started


def generate(scale: Scale, progress: Callable[[str], None]) -> dict[str, Any]:
    """Both templates, from nothing; returns the note written on them (timings of every step)."""
    from django.core.management import call_command

    from graph_memory import services

    names = database_names(scale)
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    create(names["alone_tpl"])
    use_database(names["alone_tpl"])
    call_command("migrate", verbosity=0)
    seconds["migrate"] = time.perf_counter() - started
    progress(f"generating the big firm ({scale.cases:,} cases) ...")
    t0 = time.perf_counter()
    big: list[int] = []
    lawyers = usernames(scale)

    def load_big() -> None:
        big.append(_firm(
            slug=BIG_SLUG, cases=scale.cases, groups=scale.groups, lawyers=lawyers, clients=scale.clients,
            counterparties=scale.counterparties, associate_cases=scale.associate_cases,
            partner_groups=scale.partner_groups, partner_own_cases=scale.partner_own_cases,
            document_every=scale.document_every, seed=SEED,
        ))  # fmt: skip

    _without_search_indexes(load_big)
    seconds["big firm: host rows, summaries, shared indexes"] = time.perf_counter() - t0
    built = _build_firm(big[0], progress)
    seconds["big firm: map"], seconds["big firm: document indexes"] = built["map"], built["documents"]
    t0 = time.perf_counter()
    _sql("SET maintenance_work_mem = '1GB'")
    services.ensure_search_indexes()
    _sql("ANALYZE")
    seconds["big firm: its own HNSW index, ANALYZE"] = time.perf_counter() - t0
    progress("every lawyer of the big firm reads once ...")
    before = memory_writes()
    readers, seconds["big firm: every lawyer's first read"] = everyone_reads_once(big)
    written = {"big": sum(writes_since(before).values())}
    _sql("VACUUM ANALYZE")
    release()
    create(names["beside_tpl"], template=names["alone_tpl"])
    use_database(names["beside_tpl"])
    progress(f"adding {scale.small_firms} firms of {scale.small_cases:,} cases ...")
    t0 = time.perf_counter()
    small: list[int] = []

    def load_small() -> None:
        for n in range(scale.small_firms):
            slug = f"small-{n:02d}"
            small.append(_firm(
                slug=slug, cases=scale.small_cases, groups=2,
                lawyers={"associate": [f"{slug}-lawyer-{i:02d}" for i in range(scale.small_lawyers)],
                         "firm admin": [f"{slug}-admin"]},
                clients=max(20, scale.small_cases // 10), counterparties=max(50, scale.small_cases // 3),
                associate_cases=scale.small_cases * 1.3 / scale.small_lawyers, partner_groups=0,
                partner_own_cases=0, document_every=scale.document_every, seed=SEED + 1 + n,
            ))  # fmt: skip

    _without_search_indexes(load_small)
    seconds["small firms: host rows, summaries, shared indexes"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for firm_id in small:
        _build_firm(firm_id, lambda _: None)
    seconds["small firms: maps, document indexes"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    _sql("SET maintenance_work_mem = '1GB'")
    services.ensure_search_indexes()
    _sql("ANALYZE")
    seconds["small firms: their own HNSW indexes, ANALYZE"] = time.perf_counter() - t0
    progress("every lawyer of the small firms reads once ...")
    before = memory_writes()
    small_readers, seconds["small firms: every lawyer's first read"] = everyone_reads_once(small)
    written["small"] = sum(writes_since(before).values())
    _sql("VACUUM ANALYZE")
    release()
    note = {
        "fingerprint": fingerprint(scale), "generated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "seconds": {k: round(v, 1) for k, v in seconds.items()}, "total_seconds": round(time.perf_counter() - started, 1),
        "readers": {"big": readers, "small": small_readers}, "first_reads_wrote": written,
    }  # fmt: skip
    for name in (names["alone_tpl"], names["beside_tpl"]):
        set_template_note(name, note)
    return note
