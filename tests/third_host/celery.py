from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.third_host.settings")

app = Celery("third_host")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
