# Issue 28, item 3: the two largest tables of the memory, hash-partitioned by firm (16 partitions), so each
# firm's rows and indexes live in one partition and a statement that names the firm reads one of them (the
# property Citus needs to route it to one shard; docs/SCALE.md). The sight (graph_memory_sight) and the map's
# edges (graph_memory_edge). The summaries are not partitioned: docs/SCALE.md says why.
#
# PostgreSQL wants the partition key in every primary key and unique constraint of a partitioned table, so the
# firm is added to them in the database: the sight's key is (holder, node_id, case_id, firm_id) and the edge's
# (id, firm_id), its unique (case, kind, source, target, firm). Each leads with the columns it led with before,
# so every probe that used them still does. Django's model state keeps the edge's `id` as its primary key (a
# derived UUID, unique in any case); the sight's composite key and the edge's unique constraint say the firm too.
# No foreign key points at either table (the edge's ends and the sight's case are not constraints).
#
# Each table is converted in place, rows and all: a partitioned copy is made, the rows copied, the old table
# dropped and the copy renamed, then the old table's indexes, foreign keys and triggers (the sight's statement
# triggers with transition tables, declared on the partitioned parent) are made again from their definitions
# as the catalogue gave them. Reversible the same way, back to plain tables with the keys of 0018.

from django.db import migrations, models

PARTITIONS = 16


def convert(table: str, *, partitioned: bool, key: tuple[str, ...], uniques: dict[str, tuple[str, ...]]) -> str:
    """One DO block turning `table` into a table hash-partitioned by firm_id (or back into a plain one), with
    `key` as its primary key and `uniques` as its unique constraints, keeping its rows, stored generated
    columns, indexes, foreign keys and triggers (migration 0030 converts the nodes with it too)."""
    new = f"{table}_gm_new"
    if partitioned:
        create = (
            f"EXECUTE 'CREATE TABLE {new} (LIKE {table} INCLUDING DEFAULTS INCLUDING GENERATED INCLUDING STORAGE INCLUDING COMPRESSION "
            f"INCLUDING STATISTICS) PARTITION BY HASH (firm_id)';\n"
            f"    FOR i IN 0..{PARTITIONS - 1} LOOP\n"
            f"        EXECUTE format('CREATE TABLE %I PARTITION OF {new} FOR VALUES WITH (MODULUS {PARTITIONS}, "
            f"REMAINDER %s)', '{table}_p' || i, i);\n"
            f"    END LOOP;"
        )
    else:
        create = (
            f"EXECUTE 'CREATE TABLE {new} (LIKE {table} INCLUDING DEFAULTS INCLUDING GENERATED INCLUDING STORAGE INCLUDING COMPRESSION "
            f"INCLUDING STATISTICS)';"
        )
    constraints = [f"ADD CONSTRAINT {table}_pkey PRIMARY KEY ({', '.join(key)})"]
    constraints += [f"ADD CONSTRAINT {name} UNIQUE ({', '.join(columns)})" for name, columns in uniques.items()]
    return f"""
DO $gm$
DECLARE
    later text[];
    statement text;
    columns text;
BEGIN
    -- What is made again once the rows are in: the indexes that back no constraint, then the foreign keys,
    -- then the triggers (the sight's), each from the catalogue's own definition.
    SELECT coalesce(array_agg(replace(pg_get_indexdef(x.indexrelid), ' ON ONLY ', ' ON ') ORDER BY x.indexrelid), '{{}}')
      INTO later FROM pg_index x
     WHERE x.indrelid = '{table}'::regclass
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.conrelid = x.indrelid);
    SELECT later || coalesce(array_agg(format('ALTER TABLE {table} ADD CONSTRAINT %I %s', c.conname,
                                              pg_get_constraintdef(c.oid)) ORDER BY c.conname), '{{}}')
      INTO later FROM pg_constraint c WHERE c.conrelid = '{table}'::regclass AND c.contype = 'f';
    SELECT later || coalesce(array_agg(pg_get_triggerdef(t.oid) ORDER BY t.tgname), '{{}}')
      INTO later FROM pg_trigger t WHERE t.tgrelid = '{table}'::regclass AND NOT t.tgisinternal;
    {create}
    -- Stored generated columns (the node's party variants) are computed again by the copy, not inserted.
    SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO columns FROM pg_attribute a
     WHERE a.attrelid = '{table}'::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
    EXECUTE format('INSERT INTO {new} (%s) SELECT %s FROM {table}', columns, columns);
    EXECUTE 'DROP TABLE {table}';
    EXECUTE 'ALTER TABLE {new} RENAME TO {table}';
    EXECUTE 'ALTER TABLE {table} {", ".join(constraints)}';
    FOREACH statement IN ARRAY later LOOP
        EXECUTE statement;
    END LOOP;
    EXECUTE 'ANALYZE {table}';
END
$gm$;
"""


SIGHT_KEY = ("holder", "node_id", "case_id")
EDGE_UNIQUE = ("case_id", "kind", "source_id", "target_id")


class Migration(migrations.Migration):
    dependencies = [("graph_memory", "0019_note_refusals")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    convert("graph_memory_sight", partitioned=True, key=(*SIGHT_KEY, "firm_id"), uniques={}),
                    reverse_sql=convert("graph_memory_sight", partitioned=False, key=SIGHT_KEY, uniques={}),
                ),
                migrations.RunSQL(
                    convert(
                        "graph_memory_edge", partitioned=True, key=("id", "firm_id"),
                        uniques={"gm_edge_unique": (*EDGE_UNIQUE, "firm_id")},
                    ),  # fmt: skip
                    reverse_sql=convert(
                        "graph_memory_edge", partitioned=False, key=("id",), uniques={"gm_edge_unique": EDGE_UNIQUE}
                    ),
                ),
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="sight",
                    name="pk",
                    field=models.CompositePrimaryKey(
                        "holder", "node_id", "case_id", "firm_id", blank=True, editable=False, primary_key=True,
                        serialize=False,
                    ),  # fmt: skip
                ),
                migrations.RemoveConstraint(model_name="edge", name="gm_edge_unique"),
                migrations.AddConstraint(
                    model_name="edge",
                    constraint=models.UniqueConstraint(
                        fields=("case", "kind", "source", "target", "firm"), name="gm_edge_unique"
                    ),
                ),
            ],
        ),
    ]
