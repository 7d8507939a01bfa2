# The lint finding kind for record text addressed to the assistant (issue 32, finding 10).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("graph_memory", "0025_served_ledger"),
    ]

    operations = [
        migrations.AlterField(
            model_name="lintfinding",
            name="kind",
            field=models.CharField(
                choices=[
                    ("contradicted", "Contradicted by newer records"),
                    ("stale", "Stale too long"),
                    ("weak", "Weak summary"),
                    ("map_drift", "Map drift"),
                    ("party_hygiene", "Party hygiene"),
                    ("search_gap", "Search gap"),
                    ("crossing_note", "Note crossing the wall"),
                    ("instruction_like", "Record text addressed to the assistant"),
                ],
                max_length=16,
            ),
        ),
    ]
