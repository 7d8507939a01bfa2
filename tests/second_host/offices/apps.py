from __future__ import annotations

from django.apps import AppConfig


class OfficesConfig(AppConfig):
    name = "tests.second_host.offices"
    label = "offices"
    verbose_name = "Law offices (second host)"
    default_auto_field = "django.db.models.BigAutoField"
