# The sight no longer keeps each party's conflict-check strings (issue 28: they and their GIN index were over
# half of the sight's size, copied per holder and per case). A lawyer's conflict check now starts from the
# parties of their cases, or past VISIBLE_FIRST_MAX from the firm's own index of the strings with a wall
# probe each (graph_memory/viewer/selectors.py). The column's index goes with it. The triggers write the rows'
# columns, so they are made anew in the same transaction: no write between this migration and the
# post-migrate install meets a trigger naming the dropped column.
from __future__ import annotations

from typing import Any

from django.db import migrations


def reinstall(apps: Any, schema_editor: Any) -> None:
    from graph_memory.wall import sight, triggers

    if triggers.installed(sight.TRIGGERS, using=schema_editor.connection.alias):
        sight.install(using=schema_editor.connection.alias)


class Migration(migrations.Migration):
    dependencies = [("graph_memory", "0020_partition_by_firm")]

    operations = [
        migrations.RunSQL(
            "DROP INDEX IF EXISTS gm_sight_variants",
            # As migration 0017 made it (its reverse drops it); the rows' strings come back with a build.
            reverse_sql="CREATE INDEX gm_sight_variants ON graph_memory_sight USING gin (variants) "
            "WITH (fastupdate = on, gin_pending_list_limit = 256) WHERE variants IS NOT NULL",
        ),
        migrations.RemoveField(model_name="sight", name="variants"),
        migrations.RunPython(reinstall, reverse_code=migrations.RunPython.noop, elidable=False),
    ]
