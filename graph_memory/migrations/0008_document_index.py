# Issue 18: a routing index per long document, the log of questions asked of them, and the AI-call purposes.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from graph_memory import conf


class Migration(migrations.Migration):
    dependencies = [
        ("graph_memory", "0007_run_abandoned"),
        migrations.swappable_dependency(conf.firm_model_label()),
        migrations.swappable_dependency(conf.case_model_label()),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="aicall",
            name="purpose",
            field=models.CharField(
                choices=[
                    ("summary", "Summary"),
                    ("embedding", "Embedding"),
                    ("document_index", "Document index"),
                    ("document_route", "Document question: routing"),
                    ("document_answer", "Document question: answer"),
                ],
                max_length=16,
            ),
        ),
        migrations.CreateModel(
            name="DocumentIndex",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("document_key", models.TextField()),
                ("title", models.CharField(blank=True, max_length=300)),
                ("page_count", models.PositiveIntegerField(default=0)),
                ("sections", models.JSONField(blank=True, default=list)),
                (
                    "report",
                    models.JSONField(blank=True, default=dict, help_text="Terms proposed / kept / dropped, with examples."),
                ),
                (
                    "builder",
                    models.CharField(
                        blank=True,
                        choices=[("extractive", "Offline (headings and tf-idf)"), ("openai", "Model")],
                        max_length=16,
                    ),
                ),
                ("model", models.CharField(blank=True, max_length=200)),
                ("built_at", models.DateTimeField(blank=True, null=True)),
                ("built_generation", models.PositiveBigIntegerField(default=0)),
                ("stale", models.BooleanField(default=True)),
                ("stale_since", models.DateTimeField(blank=True, null=True)),
                ("generation", models.PositiveBigIntegerField(default=0)),
                ("attempts", models.PositiveIntegerField(default=0, help_text="Failed builds since the last success.")),
                ("last_error", models.CharField(blank=True, max_length=500)),
                ("next_attempt_after", models.DateTimeField(blank=True, null=True)),
                (
                    "case",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to=conf.case_model_label()
                    ),
                ),
                (
                    "firm",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to=conf.firm_model_label()
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "document indexes",
                "ordering": ["case", "document_key"],
                "indexes": [models.Index(fields=["firm", "stale", "stale_since"], name="gm_docindex_stale")],
                "constraints": [models.UniqueConstraint(fields=("case", "document_key"), name="gm_docindex_unique")],
            },
        ),
        migrations.CreateModel(
            name="DocumentQuery",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("documents", models.JSONField(blank=True, default=list)),
                ("sections", models.JSONField(blank=True, default=list)),
                (
                    "router",
                    models.CharField(
                        blank=True, help_text="model, offline, or offline after a model error", max_length=32
                    ),
                ),
                (
                    "outcome",
                    models.CharField(
                        choices=[
                            ("success", "Success"),
                            ("unrouted", "Routed to no section"),
                            ("failure", "Failure"),
                            ("aborted", "Aborted (client left)"),
                        ],
                        max_length=16,
                    ),
                ),
                ("error", models.CharField(blank=True, max_length=300)),
                ("streamed", models.BooleanField(default=False)),
                ("quotes_served", models.PositiveIntegerField(default=0)),
                ("quotes_rejected", models.PositiveIntegerField(default=0)),
                ("tokens_in", models.PositiveIntegerField(default=0)),
                ("tokens_out", models.PositiveIntegerField(default=0)),
                ("latency_ms", models.PositiveIntegerField(default=0)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "case",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to=conf.case_model_label()
                    ),
                ),
                (
                    "firm",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to=conf.firm_model_label()
                    ),
                ),
                (
                    "viewer",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "document queries",
                "ordering": ["-created_at", "-id"],
                "indexes": [models.Index(fields=["firm", "-created_at"], name="gm_docquery_firm")],
            },
        ),
    ]
