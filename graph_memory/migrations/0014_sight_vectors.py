# Issue 14, item 4: each lawyer's summary vectors side by side (graph_memory/models/sight.py), so an
# exact search by meaning reads a few contiguous pages instead of one page per visible case. The
# vector is kept in the row (storage MAIN, as the summary's since 0011). Sights built before this
# have no vectors, so every one is made stale here and rebuilt on its viewer's next read.

import django.db.models.deletion
import pgvector.django.vector
from django.conf import settings
from django.db import migrations, models

from graph_memory import conf


class Migration(migrations.Migration):
    dependencies = [
        ("graph_memory", "0013_sight_party_variants"),
        migrations.swappable_dependency(conf.case_model_label()),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="SightVector",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "viewer_id", "case_id", blank=True, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("embedding_model", models.CharField(max_length=200)),
                ("embedding", pgvector.django.vector.VectorField(dimensions=384)),
                (
                    "case",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to=conf.case_model_label(),
                    ),
                ),
                (
                    "viewer",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["case"], name="gm_sight_vector_case")],
            },
        ),
        migrations.RunSQL(
            "ALTER TABLE graph_memory_sightvector ALTER COLUMN embedding SET STORAGE MAIN",
            reverse_sql=migrations.RunSQL.noop,
        ),
        migrations.RunSQL(
            "UPDATE graph_memory_sightviewer SET version = version + 1", reverse_sql=migrations.RunSQL.noop
        ),
    ]
