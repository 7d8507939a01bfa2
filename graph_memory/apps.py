from __future__ import annotations

from django.apps import AppConfig


class GraphMemoryConfig(AppConfig):
    name = "graph_memory"
    verbose_name = "Graph memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core.exceptions import ImproperlyConfigured

        from graph_memory import checks, signals  # noqa: F401  (registers checks)
        from graph_memory.adapter import get_adapter

        try:
            adapter = get_adapter()
        except ImproperlyConfigured:
            return  # a system check names the problem; nothing can be watched without an adapter
        signals.connect(adapter.changes())
