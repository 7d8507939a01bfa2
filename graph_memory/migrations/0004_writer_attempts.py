# The summary writer against real model servers (issue 13): one AICall row per
# HTTP attempt with its response format, the server's explanation and whether
# its tokens are estimated; the last rewrite attempt kept on the summary row.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("graph_memory", "0003_node_party_key_and_lean_edges"),
    ]

    operations = [
        migrations.AddField(
            model_name="casesummary",
            name="last_attempt",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="The last rewrite attempt: outcome, reason, its verification report and the regression guard's figures.",
            ),
        ),
        migrations.AddField(
            model_name="aicall",
            name="request_mode",
            field=models.CharField(blank=True, max_length=24),
        ),
        migrations.AddField(
            model_name="aicall",
            name="server_error",
            field=models.CharField(blank=True, max_length=300),
        ),
        migrations.AddField(
            model_name="aicall",
            name="tokens_estimated",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="aicall",
            name="report",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AlterField(
            model_name="aicall",
            name="outcome",
            field=models.CharField(
                choices=[
                    ("ok", "OK"),
                    ("rejected", "Rejected by verification or the regression guard"),
                    ("error", "Error"),
                ],
                max_length=16,
            ),
        ),
    ]
