# Issue 14: what each lawyer reaches in the connection map (graph_memory/models/sight.py).
# The triggers that keep it honest are installed after every migrate (graph_memory.wall.sight.install),
# since they sit on the host's tables as well as on these.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from graph_memory import conf


class Migration(migrations.Migration):
    dependencies = [
        ("graph_memory", "0011_search_speed"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        migrations.swappable_dependency(conf.case_model_label()),
    ]

    operations = [
        migrations.CreateModel(
            name="SightViewer",
            fields=[
                (
                    "viewer",
                    models.OneToOneField(
                        db_constraint=False, on_delete=django.db.models.deletion.DO_NOTHING, primary_key=True,
                        related_name="+", serialize=False, to=settings.AUTH_USER_MODEL,
                    ),
                ),  # fmt: skip
                ("firm_id", models.BigIntegerField(help_text="The firm the rows were built for.", null=True)),
                (
                    "version",
                    models.BigIntegerField(default=0, help_text="Bumped by triggers on every change that could matter."),
                ),
                ("built_version", models.BigIntegerField(help_text="The version the rows were built from.", null=True)),
                ("built_at", models.DateTimeField(null=True)),
            ],
            options={"verbose_name": "viewer's sight"},
        ),
        migrations.CreateModel(
            name="Sight",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "viewer_id", "node_id", "case_id", blank=True, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("node_id", models.UUIDField()),
                ("kind", models.CharField(max_length=16)),
                ("label", models.CharField(max_length=300)),
                ("name_key", models.CharField(max_length=300)),
                (
                    "case",
                    models.ForeignKey(
                        db_constraint=False, db_index=False, on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+", to=conf.case_model_label(),
                    ),
                ),  # fmt: skip
                (
                    "viewer",
                    models.ForeignKey(
                        db_constraint=False, db_index=False, on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+", to=settings.AUTH_USER_MODEL,
                    ),
                ),  # fmt: skip
            ],
            options={"indexes": [models.Index(fields=["node_id"], name="gm_sight_node")]},
        ),
    ]
