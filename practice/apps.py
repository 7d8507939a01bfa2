from __future__ import annotations

from django.apps import AppConfig


class PracticeConfig(AppConfig):
    name = "practice"
    verbose_name = "Practice (reference host product)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from practice import signals  # noqa: F401  (connects receivers)
