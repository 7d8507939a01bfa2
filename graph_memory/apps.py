from __future__ import annotations

from django.apps import AppConfig


class GraphMemoryConfig(AppConfig):
    name = "graph_memory"
    verbose_name = "Graph memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from graph_memory import checks, signals  # noqa: F401  (registers checks and receivers)
