# Placeholder reserved for issue 14 (one migration chain for work done in parallel); its owner fills it in.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("graph_memory", "0010_admin_polish")]

    operations: list = []
