# Issue 31, item 3: the served ledger (graph_memory/models/served.py): one row per answer, ids and a keyed
# fingerprint only, hash-chained per firm by graph_memory.ledger.served_ledger.seal_firm.

import django.contrib.postgres.fields
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("graph_memory", "0024_sight_per_node"),
    ]

    operations = [
        migrations.CreateModel(
            name="ServedChain",
            fields=[
                ("firm_id", models.BigIntegerField(primary_key=True, serialize=False)),
                ("head_seq", models.BigIntegerField(default=0)),
                ("head_hash", models.CharField(default="", max_length=64)),
                ("pruned_seq", models.BigIntegerField(default=0)),
                ("pruned_hash", models.CharField(default="", max_length=64)),
                ("sealed_at", models.DateTimeField(null=True)),
            ],
        ),
        migrations.CreateModel(
            name="ServedRow",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("firm_id", models.BigIntegerField()),
                ("viewer_id", models.BigIntegerField(null=True)),
                ("endpoint", models.CharField(help_text="api:<view>, mcp:<tool> or admin:<page>.", max_length=100)),
                (
                    "case_ids",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.BigIntegerField(),
                        default=list,
                        help_text="The cases the answer drew on (all of them the viewer's).",
                        size=None,
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("ok", "Ok"),
                            ("not_modified", "Not Modified"),
                            ("not_found", "Not Found"),
                            ("invalid", "Invalid"),
                            ("refused", "Refused"),
                            ("throttled", "Throttled"),
                            ("method_not_allowed", "Method Not Allowed"),
                            ("not_supported", "Not Supported"),
                            ("error", "Error"),
                        ],
                        max_length=20,
                    ),
                ),
                ("at", models.DateTimeField()),
                (
                    "query_fingerprint",
                    models.CharField(help_text="HMAC of the request; never its text.", max_length=64),
                ),
                ("seq", models.BigIntegerField(null=True)),
                ("prev_hash", models.CharField(max_length=64, default="", db_default="")),
                ("row_hash", models.CharField(max_length=64, default="", db_default="")),
            ],
            options={
                "ordering": ["-at", "-id"],
                "indexes": [
                    models.Index(fields=["firm_id", "viewer_id", "at"], name="gm_served_viewer"),
                    models.Index(fields=["firm_id", "at"], name="gm_served_firm_at"),
                    models.Index(
                        condition=models.Q(("seq__isnull", True)), fields=["firm_id", "id"], name="gm_served_unsealed"
                    ),
                ],
                "constraints": [models.UniqueConstraint(fields=("firm_id", "seq"), name="gm_served_firm_seq")],
            },
        ),
    ]
