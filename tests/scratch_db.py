"""A scratch database on the tests' PostgreSQL server, and `manage.py` commands run against it in a subprocess.

For what only a fresh process on an empty database shows: `migrate` with its
system checks on, `check --database default`, a command as a host runs it.
The server is the one DATABASE_URL names, else the repository's embedded one;
the name carries TEST_DB_SUFFIX and the xdist worker's name, so parallel runs keep apart.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

# The directory holding the `tests` package: the hosts' settings are importable from there.
HOSTS_ROOT = Path(__file__).resolve().parents[1]


def server_url() -> str:
    """The URL of the tests' PostgreSQL server (its maintenance database)."""
    if os.environ.get("DATABASE_URL"):
        return os.environ["DATABASE_URL"]
    from config.embedded_db import embedded_database_url  # the repository's own: absent from an installed run

    return embedded_database_url(HOSTS_ROOT)


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@contextmanager
def scratch_database(prefix: str) -> Iterator[str]:
    """An empty database named `<prefix><TEST_DB_SUFFIX><worker>` (dropped first if a crashed run left it); yields its URL."""
    # The worker's name too under pytest-xdist (`make test` runs the main suite in two processes).
    name = prefix + os.environ.get("TEST_DB_SUFFIX", "") + os.environ.get("PYTEST_XDIST_WORKER", "")
    url = server_url()
    with psycopg.connect(_with_database(url, "postgres"), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_database(url, name)
    finally:
        with psycopg.connect(_with_database(url, "postgres"), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def manage(settings: str, database_url: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """`django-admin <args>` in a fresh interpreter (the one running the tests) under `settings`, on that database.

    `check`: a non-zero exit fails with the command's output.
    """
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": settings, "DATABASE_URL": database_url, "PYTHONPATH": str(HOSTS_ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "django", *args], cwd=HOSTS_ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    if check and done.returncode != 0:
        raise AssertionError(f"django-admin {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done
