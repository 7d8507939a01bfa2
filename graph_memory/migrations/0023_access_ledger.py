# Issue 31, item 2: the access ledger (graph_memory/ledger/), one row per change to an input of the wall.
# Its triggers and baseline are installed after every migrate (apps.py), like the sight's; going back, they
# are dropped before the table (their statements name it).

import graph_memory.models.ledger
from django.db import migrations, models


def uninstall(apps, schema_editor):
    from graph_memory.ledger import triggers

    triggers.uninstall(using=schema_editor.connection.alias)


class Migration(migrations.Migration):
    dependencies = [
        ("graph_memory", "0022_note_idempotency"),
    ]

    operations = [
        migrations.AlterField(
            model_name="missedchange",
            name="work",
            field=models.CharField(
                choices=[
                    ("stale", "Flag summaries stale"),
                    ("graph", "Sync the connection map"),
                    ("label", "Refresh a node's label"),
                    ("document", "Flag document indexes stale"),
                    ("retention", "Redact admin's log of a deleted record"),
                    ("access", "Record a user's firm and role in the access ledger"),
                ],
                max_length=16,
            ),
        ),
        migrations.CreateModel(
            name="AccessChange",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "at",
                    models.DateTimeField(
                        db_default=graph_memory.models.ledger.TransactionNow(),
                        help_text="The time of the change's transaction.",
                    ),
                ),
                ("firm_id", models.BigIntegerField(null=True)),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("case", "Case of the firm"),
                            ("owner", "Owner of the case"),
                            ("user_grant", "Grant to the user"),
                            ("group_grant", "Grant to a group"),
                            ("membership", "Member of a group"),
                            ("firm_admin", "Firm admin"),
                            ("user", "Active user of the firm"),
                        ],
                        max_length=16,
                    ),
                ),
                ("granted", models.BooleanField(help_text="True: holds from this time; False: ended at this time.")),
                (
                    "reason",
                    models.CharField(
                        choices=[
                            ("baseline", "Standing when the ledger was installed"),
                            ("granted", "Granted"),
                            ("revoked", "Revoked"),
                            ("joined", "Joined the group"),
                            ("left", "Left the group"),
                            ("created", "Created"),
                            ("deleted", "Deleted"),
                            ("moved", "Moved to another firm"),
                            ("deactivated", "Deactivated"),
                            ("reactivated", "Reactivated"),
                            ("consent", "Memory consent (reserved: issue 31, item 4)"),
                        ],
                        max_length=16,
                    ),
                ),
                (
                    "case_id",
                    models.BigIntegerField(help_text="Empty: not about one case (a user, a membership).", null=True),
                ),
                (
                    "viewer_id",
                    models.BigIntegerField(help_text="The user; empty for a case or a group's grant.", null=True),
                ),
                ("group_id", models.BigIntegerField(help_text="The group of a group grant or membership.", null=True)),
            ],
            options={
                "verbose_name": "access change",
                "ordering": ["-at", "-id"],
                "indexes": [
                    models.Index(fields=["firm_id", "case_id", "at"], name="gm_ledger_case"),
                    models.Index(fields=["firm_id", "viewer_id", "at"], name="gm_ledger_viewer"),
                    models.Index(fields=["firm_id", "group_id", "at"], name="gm_ledger_group"),
                    models.Index(fields=["firm_id", "kind", "at"], name="gm_ledger_kind"),
                    models.Index(fields=["firm_id", "at"], name="gm_ledger_firm_at"),
                    models.Index(fields=["viewer_id", "kind", "id"], name="gm_ledger_viewer_last"),
                ],
            },
        ),
        migrations.RunPython(migrations.RunPython.noop, uninstall),
    ]
