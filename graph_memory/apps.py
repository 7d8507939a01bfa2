from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class GraphMemoryConfig(AppConfig):
    name = "graph_memory"
    verbose_name = "Graph memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core.exceptions import ImproperlyConfigured

        from graph_memory import access, checks, signals  # noqa: F401  (registers checks)
        from graph_memory.adapter import get_adapter

        # Every app's post_migrate (auth's recreates permissions after a flush): the wall's kept ids go.
        post_migrate.connect(access.forget_permission_ids, dispatch_uid="graph_memory.forget_permission_ids")
        try:
            adapter = get_adapter()
        except ImproperlyConfigured:
            return  # a system check names the problem; nothing can be watched without an adapter
        signals.connect(adapter.changes())
        post_migrate.connect(_install_sight_triggers, sender=self)


def _install_sight_triggers(using: str, **_: Any) -> None:
    """After every migrate (and flush): the triggers that keep the sight current (graph_memory.sight), and
    its rows, when a TRUNCATE or the migration that made the tables left them unbuilt."""
    from django.db import connections

    from graph_memory import sight
    from graph_memory.models import SightState

    if SightState._meta.db_table in connections[using].introspection.table_names() and sight.install(using=using):
        with connections[using].cursor() as cursor:
            cursor.execute(sight.FRESH)
            if not cursor.fetchone()[0]:
                sight.build(using=using)
