# Issue 19: the lint pass's runs and findings (graph_memory/models/lint.py).

import django.db.models.deletion
from django.db import migrations, models

from graph_memory import conf


class Migration(migrations.Migration):
    dependencies = [
        ("graph_memory", "0008_document_index"),
        migrations.swappable_dependency(conf.firm_model_label()),
        migrations.swappable_dependency(conf.case_model_label()),
    ]

    operations = [
        migrations.CreateModel(
            name="LintRun",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("trigger", models.CharField(default="weekly", help_text="weekly, command or admin", max_length=16)),
                (
                    "status",
                    models.CharField(
                        choices=[("running", "Running"), ("done", "Done"), ("failed", "Failed")],
                        default="running",
                        max_length=16,
                    ),
                ),
                ("started_at", models.DateTimeField(auto_now_add=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("counts", models.JSONField(blank=True, default=dict, help_text="Findings by kind.")),
                ("error", models.CharField(blank=True, max_length=500)),
                (
                    "firm",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to=conf.firm_model_label()
                    ),
                ),
            ],
            options={"ordering": ["-started_at", "-id"]},
        ),
        migrations.CreateModel(
            name="LintFinding",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("contradicted", "Contradicted by newer records"),
                            ("stale", "Stale too long"),
                            ("weak", "Weak summary"),
                            ("map_drift", "Map drift"),
                            ("party_hygiene", "Party hygiene"),
                            ("search_gap", "Search gap"),
                        ],
                        max_length=16,
                    ),
                ),
                (
                    "code",
                    models.CharField(help_text="Which check of the kind, e.g. deadline_done, orphan_node.", max_length=32),
                ),
                (
                    "severity",
                    models.CharField(choices=[("high", "High"), ("medium", "Medium"), ("low", "Low")], max_length=8),
                ),
                ("message", models.TextField()),
                ("records", models.JSONField(blank=True, default=list, help_text="The records involved.")),
                (
                    "case",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=conf.case_model_label(),
                    ),
                ),
                (
                    "firm",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to=conf.firm_model_label()
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="findings", to="graph_memory.lintrun"
                    ),
                ),
            ],
            options={"ordering": ["kind", "code", "case", "id"]},
        ),
        migrations.AddIndex(
            model_name="lintrun",
            index=models.Index(fields=["firm", "-started_at"], name="gm_lintrun_firm"),
        ),
        migrations.AddIndex(
            model_name="lintfinding",
            index=models.Index(fields=["firm", "kind"], name="gm_lintfinding_firm_kind"),
        ),
    ]
