# Issue 15 (faults): a refresh run whose worker died is marked "abandoned" once its lease has run out.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("graph_memory", "0006_keyed_node_ids")]

    operations = [
        migrations.AddField(
            model_name="refreshrun",
            name="lease_until",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="refreshrun",
            name="status",
            field=models.CharField(
                choices=[
                    ("running", "Running"),
                    ("done", "Done"),
                    ("failed", "Failed"),
                    ("abandoned", "Abandoned (worker died)"),
                ],
                default="running",
                max_length=16,
            ),
        ),
    ]
