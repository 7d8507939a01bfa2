# Issue 28, item 2: the sight kept per holder of a grant (a user, or a group), row by row, instead of
# per viewer and rebuilt whole on the next read after any change (graph_memory/models/sight.py).
# The rows are derived data: the tables are made anew, empty and marked unbuilt, and the post_migrate
# receiver (graph_memory.apps) installs the new triggers and builds every row. The vector copies go:
# a lawyer's exact search reads each visible summary's own row (graph_memory/viewer/search.py).
# The old triggers are dropped first: they write tables this migration drops.

import django.contrib.postgres.fields
import django.db.models.deletion
from django.db import migrations, models

from graph_memory import conf

DROP_OLD_TRIGGERS = r"""
DO $$
DECLARE t record;
BEGIN
    FOR t IN SELECT tgname, tgrelid::regclass::text AS tbl FROM pg_trigger
             WHERE tgname LIKE 'gm\_sight\_%' AND NOT tgisinternal LOOP
        EXECUTE format('DROP TRIGGER %I ON %s', t.tgname, t.tbl);
    END LOOP;
END
$$;
DROP FUNCTION IF EXISTS gm_sight_bump();
DROP FUNCTION IF EXISTS gm_sight_bump_all();
"""

# A holder's lookup words (the function of migration 0016, keyed by holder rather than firm) and its
# parties' strings: each GIN index hands over one holder's rows and nobody else's. A short pending list
# (256 kB): a firm's first map writes a million rows at once, which GIN takes in batches from the list
# (entry by entry, without one, it took over ten minutes at 50,000 cases), and a read scans the whole
# list on every probe (at the default 4 MB, 0.45 ms a probe; a conflict check makes about ninety).
INDEXES = """
CREATE INDEX gm_sight_lookup_words ON graph_memory_sight
    USING gin (graph_memory_lookup_words(holder, name_key)) WITH (fastupdate = on, gin_pending_list_limit = 256);
CREATE INDEX gm_sight_variants ON graph_memory_sight USING gin (variants)
    WITH (fastupdate = on, gin_pending_list_limit = 256) WHERE variants IS NOT NULL;
INSERT INTO graph_memory_sightstate (id, built) VALUES (1, false);
"""


class Migration(migrations.Migration):
    dependencies = [
        ("graph_memory", "0016_firm_filtered_lookups"),
        migrations.swappable_dependency(conf.case_model_label()),
    ]

    operations = [
        migrations.RunSQL(DROP_OLD_TRIGGERS, reverse_sql=migrations.RunSQL.noop),
        migrations.DeleteModel(name="SightVector"),
        migrations.DeleteModel(name="SightViewer"),
        migrations.DeleteModel(name="Sight"),
        migrations.CreateModel(
            name="SightState",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("built", models.BooleanField(default=False, help_text="False after a TRUNCATE until sight.build runs.")),
                ("built_at", models.DateTimeField(null=True)),
            ],
            options={"verbose_name": "sight state"},
        ),
        migrations.CreateModel(
            name="SightCase",
            fields=[
                (
                    "case",
                    models.OneToOneField(
                        db_constraint=False, on_delete=django.db.models.deletion.DO_NOTHING, primary_key=True,
                        related_name="+", serialize=False, to=conf.case_model_label(),
                    ),
                ),  # fmt: skip
                (
                    "version",
                    models.BigIntegerField(default=0, help_text="Bumped by every statement that rewrites the case's rows."),
                ),
            ],
            options={"verbose_name": "sight case"},
        ),
        migrations.CreateModel(
            name="Sight",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "holder", "node_id", "case_id", blank=True, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("holder", models.BigIntegerField(help_text="A user's id, or a group's id negated.")),
                ("node_id", models.UUIDField()),
                ("firm_id", models.BigIntegerField(help_text="The case's firm.")),
                ("kind", models.CharField(max_length=16)),
                ("label", models.CharField(max_length=300)),
                ("name_key", models.CharField(max_length=300)),
                (
                    "variants",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.IntegerField(), help_text="A party's index strings, hashed with the holder.",
                        null=True, size=None,
                    ),
                ),  # fmt: skip
                (
                    "case",
                    models.ForeignKey(
                        db_constraint=False, db_index=False, on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+", to=conf.case_model_label(),
                    ),
                ),  # fmt: skip
            ],
            options={
                "indexes": [
                    models.Index(fields=["case", "holder"], name="gm_sight_case_holder"),
                    models.Index(fields=["node_id", "holder"], name="gm_sight_node_holder"),
                ]
            },
        ),
        migrations.RunSQL(
            INDEXES,
            reverse_sql="DROP INDEX gm_sight_lookup_words; DROP INDEX gm_sight_variants; DELETE FROM graph_memory_sightstate",
        ),
    ]
