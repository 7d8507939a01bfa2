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


def test_the_nodes_are_partitioned_in_place_and_back() -> None:
    """Migration 0030 turns the node table into one hash-partitioned by firm (issue 28), rows and all: each
    node keeps its values, its stored generated columns are computed again, every index is there, and the
    table takes new rows; migrating back makes it a plain table again with the same rows."""
    nodes = "graph_memory_node"
    columns = "id, firm_id, kind, ref_id, label, name_key, party_key, party_variants, party_hashes"

    def state(db: psycopg.Connection) -> tuple[list[tuple], int, list[str]]:
        rows = db.execute(f"SELECT {columns} FROM {nodes} ORDER BY id").fetchall()
        partitions = db.execute(
            "SELECT count(*) FROM pg_inherits WHERE inhparent = %s::regclass", [nodes]
        ).fetchone()[0]
        indexes = [r[0] for r in db.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s ORDER BY 1", [nodes])]
        return rows, partitions, indexes

    with scratch_database("scratch_nodes") as url:
        manage(SETTINGS, url, "migrate", "--no-input", "graph_memory", "0029_trigger_lifecycle")
        with psycopg.connect(url, autocommit=True) as db:
            firms = [db.execute("INSERT INTO accounts_firm (slug, name, timezone) VALUES (%s, %s, 'UTC') RETURNING id",
                                [f"firm-{i}", f"Firm {i}"]).fetchone()[0] for i in range(5)]  # fmt: skip
            for n, firm in enumerate(firms * 4):
                db.execute(
                    f"INSERT INTO {nodes} (id, firm_id, kind, ref_id, label, name_key, party_key) "
                    "VALUES (gen_random_uuid(), %s, 'client', %s, %s, %s, %s)",
                    [firm, n, f"Northwind Holdings {n}", f"northwind holdings {n}", f"northwind holdings {n}"],
                )
            before, partitions, plain_indexes = state(db)
        assert len(before) == 20 and partitions == 0 and all(row[7] for row in before)  # variants computed

        manage(SETTINGS, url, "migrate", "--no-input")
        with psycopg.connect(url, autocommit=True) as db:
            after, partitions, indexes = state(db)
            assert after == before and partitions == 16
            assert set(indexes) == set(plain_indexes)  # the parent's own, each made again under its name
            # Each firm's nodes in one partition; a new node gets its generated columns from the partition.
            assert db.execute(f"SELECT count(DISTINCT tableoid) FROM {nodes} GROUP BY firm_id").fetchall() == [(1,)] * 5
            db.execute(
                f"INSERT INTO {nodes} (id, firm_id, kind, ref_id, label, name_key, party_key) "
                "VALUES (gen_random_uuid(), %s, 'client', 99, 'Juniper Media', 'juniper media', 'juniper media')",
                [firms[0]],
            )
            assert db.execute(f"SELECT party_variants IS NOT NULL FROM {nodes} WHERE ref_id = 99").fetchone() == (True,)
            db.execute(f"DELETE FROM {nodes} WHERE ref_id = 99")

        manage(SETTINGS, url, "migrate", "--no-input", "graph_memory", "0029_trigger_lifecycle")
        with psycopg.connect(url, autocommit=True) as db:
            back, partitions, indexes = state(db)
        assert back == before and partitions == 0 and set(indexes) == set(plain_indexes)
