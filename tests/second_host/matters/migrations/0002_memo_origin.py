"""Assistant-filed file notes: where one came from (graph_memory issue 17)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("matters", "0001_initial"),
    ]

    operations = [
        migrations.AddField(model_name="memo", name="origin", field=models.JSONField(blank=True, null=True)),
    ]
