# Placeholder reserved for issue 15 (one migration chain for work done in parallel); its owner fills it in.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("graph_memory", "0006_keyed_node_ids")]

    operations: list = []
