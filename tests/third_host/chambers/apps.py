from __future__ import annotations

from django.apps import AppConfig


class ChambersConfig(AppConfig):
    name = "tests.third_host.chambers"
    label = "chambers"
    verbose_name = "Chambers (third host)"
    default_auto_field = "django.db.models.BigAutoField"
