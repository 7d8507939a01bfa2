"""A scratch database per benchmark, on the same server as the project's database.

Benchmarks never touch development or test data: each creates its own empty
database, points Django at it before `django.setup()`, and drops it at the end.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent


def scratch_database(name: str) -> tuple[str, str]:
    """(admin URL, scratch URL); the scratch database `name` is created empty."""
    import psycopg

    from config.embedded_db import embedded_database_url

    admin_url = os.environ.get("DATABASE_URL") or embedded_database_url(ROOT)
    scratch_url = urlunsplit(urlsplit(admin_url)._replace(path=f"/{name}"))
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    return admin_url, scratch_url


def drop_database(admin_url: str, name: str) -> None:
    import psycopg
    from django.db import connections

    connections.close_all()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@contextmanager
def django_on_scratch(name: str) -> Iterator[None]:
    """Django set up on a new, empty scratch database `name`, which is dropped on leaving (kept when
    BENCH_KEEP_DB is set, to EXPLAIN queries afterwards). A benchmark sets the environment Django
    should read before entering."""
    admin_url, scratch_url = scratch_database(name)
    os.environ["DATABASE_URL"] = scratch_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    try:
        yield
    finally:
        if os.environ.get("BENCH_KEEP_DB"):
            print(f"kept database {name}", file=sys.stderr)
        else:
            drop_database(admin_url, name)


def progress(message: str) -> None:
    """A progress line on stderr (stdout carries the section a benchmark writes)."""
    print(message, file=sys.stderr, flush=True)


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile (0-100) of `values`, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]
