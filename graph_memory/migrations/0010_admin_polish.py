# Issue 16 (admin polish): a refresh run's `embedded` counter is labelled for what it counts.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("graph_memory", "0009_lint")]

    operations = [
        migrations.AlterField(
            model_name="refreshrun",
            name="embedded",
            field=models.PositiveIntegerField(
                default=0,
                help_text="Summaries whose embedding had failed when they were saved, embedded by this run's retry.",
                verbose_name="missing embeddings filled in",
            ),
        ),
    ]
