# Placeholder reserved for issue 19 (one migration chain for work done in parallel); its owner fills it in.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("graph_memory", "0008_document_index")]

    operations: list = []
