# The app's triggers are installed after every migrate (graph_memory.apps, graph_memory.wall.triggers), not by a
# migration: they follow settings (the sight on or off) and the host's tables. This migration is their
# lifecycle's other half: unapplied (the first step of `migrate graph_memory zero`, or of going back to
# an earlier state), it removes every one of them with their functions, so no trigger on a host table is
# left writing into a table the next steps drop. Keep it the last migration: a later one depends on it.
from __future__ import annotations

from typing import Any

from django.db import migrations


def uninstall(apps: Any, schema_editor: Any) -> None:
    from graph_memory.wall import sight, triggers
    from graph_memory.ledger import triggers as ledger

    for declared in (sight.TRIGGERS, ledger.TRIGGERS):
        triggers.uninstall(declared, using=schema_editor.connection.alias)


class Migration(migrations.Migration):
    dependencies = [("graph_memory", "0028_case_activity")]

    operations = [migrations.RunPython(migrations.RunPython.noop, reverse_code=uninstall, elidable=False)]
