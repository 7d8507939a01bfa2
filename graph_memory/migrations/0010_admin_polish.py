# Placeholder reserved for issue 16 (one migration chain for work done in parallel); its owner fills it in.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("graph_memory", "0009_lint")]

    operations: list = []
