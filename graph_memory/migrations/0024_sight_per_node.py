# The sight keeps one row per holder and node, with the holder's cases of that node as an array (issue 28:
# one row per holder, node and case made a lawyer's node on a holder's nineteen cases nineteen rows, and the
# sight outweighed the summaries it serves). The rows are derived: they are emptied here and the sight is
# marked not built, so `migrate` builds it anew (graph_memory.apps) before any read trusts it. The
# triggers write the rows' columns, so they are made anew in the same transaction.
#
# Indexes: the primary key (holder, node_id, firm_id); (node_id, holder) as before; a GIN index of `cases`,
# through which a trigger finds the rows of the cases it rewrites.
from __future__ import annotations

from typing import Any

import django.contrib.postgres.fields
from django.db import migrations, models

FORWARD = """
TRUNCATE graph_memory_sight, graph_memory_sightcase;
UPDATE graph_memory_sightstate SET built = false;
DO $gm$
DECLARE key text;
BEGIN
    SELECT conname INTO key FROM pg_constraint WHERE conrelid = 'graph_memory_sight'::regclass AND contype = 'p';
    EXECUTE format('ALTER TABLE graph_memory_sight DROP CONSTRAINT %I', key);
END
$gm$;
DROP INDEX gm_sight_case_holder;
ALTER TABLE graph_memory_sight DROP COLUMN case_id;
ALTER TABLE graph_memory_sight ADD COLUMN cases bigint[] NOT NULL;
ALTER TABLE graph_memory_sight ADD PRIMARY KEY (holder, node_id, firm_id);
CREATE INDEX gm_sight_cases ON graph_memory_sight USING gin (cases) WITH (fastupdate = on, gin_pending_list_limit = 256);
"""
BACKWARD = """
TRUNCATE graph_memory_sight, graph_memory_sightcase;
UPDATE graph_memory_sightstate SET built = false;
DROP INDEX gm_sight_cases;
DO $gm$
DECLARE key text;
BEGIN
    SELECT conname INTO key FROM pg_constraint WHERE conrelid = 'graph_memory_sight'::regclass AND contype = 'p';
    EXECUTE format('ALTER TABLE graph_memory_sight DROP CONSTRAINT %I', key);
END
$gm$;
ALTER TABLE graph_memory_sight DROP COLUMN cases;
ALTER TABLE graph_memory_sight ADD COLUMN case_id bigint NOT NULL;
ALTER TABLE graph_memory_sight ADD PRIMARY KEY (holder, node_id, case_id, firm_id);
CREATE INDEX gm_sight_case_holder ON graph_memory_sight (case_id, holder);
"""


def reinstall(apps: Any, schema_editor: Any) -> None:
    from graph_memory.wall import sight, triggers

    if triggers.installed(sight.TRIGGERS, using=schema_editor.connection.alias):
        sight.install(using=schema_editor.connection.alias)


class Migration(migrations.Migration):
    dependencies = [("graph_memory", "0023_access_ledger")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(FORWARD, reverse_sql=BACKWARD)],
            state_operations=[
                migrations.RemoveIndex(model_name="sight", name="gm_sight_case_holder"),
                migrations.RemoveField(model_name="sight", name="case"),
                migrations.AddField(
                    model_name="sight",
                    name="cases",
                    field=django.contrib.postgres.fields.ArrayField(
                        base_field=models.BigIntegerField(),
                        default=None,
                        help_text="The holder's cases with an edge at the node.",
                        size=None,
                    ),
                    preserve_default=False,
                ),
                migrations.AlterField(
                    model_name="sight", name="firm_id", field=models.BigIntegerField(help_text="The node's firm.")
                ),
                migrations.AlterField(
                    model_name="sight",
                    name="pk",
                    field=models.CompositePrimaryKey(
                        "holder", "node_id", "firm_id", blank=True, editable=False, primary_key=True, serialize=False
                    ),
                ),
            ],
        ),
        migrations.RunPython(reinstall, reverse_code=migrations.RunPython.noop, elidable=False),
    ]
