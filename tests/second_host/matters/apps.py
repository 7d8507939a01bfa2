from __future__ import annotations

from django.apps import AppConfig


class MattersConfig(AppConfig):
    name = "tests.second_host.matters"
    label = "matters"
    verbose_name = "Matters (second host)"
    default_auto_field = "django.db.models.BigAutoField"
