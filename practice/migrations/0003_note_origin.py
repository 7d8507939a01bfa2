"""Assistant-filed notes (graph_memory issue 17): a note's title, and where an assistant-filed note came from."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("practice", "0002_same_firm_constraints"),
    ]

    operations = [
        migrations.AddField(
            model_name="note",
            name="title",
            field=models.CharField(blank=True, default="", max_length=300),
        ),
        migrations.AddField(
            model_name="note",
            name="origin",
            field=models.JSONField(
                blank=True,
                help_text="Where an assistant-filed note came from; empty for notes people wrote.",
                null=True,
            ),
        ),
    ]
