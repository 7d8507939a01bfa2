"""`manage.py migrate` works the first time on an empty database, with its system checks on (issue 29).

The memory's database checks never stop `migrate` (it creates what they look for: the vector
extension, the default cache's table, the sight triggers); afterwards `check --database default`
passes, and a table lost later is put back by the next `migrate`.
"""

from __future__ import annotations

import psycopg

from tests.scratch_db import manage, scratch_database

SETTINGS = "config.settings"


def test_migrate_on_an_empty_database_with_checks_on_then_check_passes() -> None:
    with scratch_database("scratch_migrate") as url:
        migrated = manage(SETTINGS, url, "migrate", "--no-input")
        assert "Applying graph_memory.0001_pgvector... OK" in migrated.stdout
        assert "System check identified no issues" in manage(SETTINGS, url, "check", "--database", "default").stdout
        with psycopg.connect(url, autocommit=True) as db:
            assert db.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() == (1,)
            db.execute("DROP TABLE graph_memory_cache")
        lost = manage(SETTINGS, url, "check", "--database", "default", check=False)
        assert lost.returncode == 1 and "graph_memory.E035" in lost.stderr
        manage(SETTINGS, url, "migrate", "--no-input")  # not stopped by E035: it puts the table back
        assert "System check identified no issues" in manage(SETTINGS, url, "check", "--database", "default").stdout
