"""Settings of the third host: what the README's plug-in recipe asks, and no more.

No django-guardian, no teams; the memory's views carry their own
authentication, so the REST framework defaults are left as DRF ships them.
With DATABASE_URL unset it uses the repository's embedded PostgreSQL, as the
other hosts do (its own test database beside theirs).
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parents[2]

DEBUG = False
SECRET_KEY = "third-host-tests-only"
ALLOWED_HOSTS = ["testserver", "127.0.0.1", "localhost"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "django_celery_beat",
    "tests.third_host.chambers",
    "graph_memory",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

ROOT_URLCONF = "tests.third_host.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

if os.environ.get("DATABASE_URL"):
    _database_url = os.environ["DATABASE_URL"]
else:
    from config.embedded_db import embedded_database_url

    _database_url = embedded_database_url(BASE_DIR)

DATABASES = {"default": dj_database_url.parse(_database_url, conn_max_age=0)}
DATABASES["default"]["TEST"] = {"NAME": "test_third_host" + os.environ.get("TEST_DB_SUFFIX", "")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_USER_MODEL = "chambers.Counsel"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # tests only: fast

USE_TZ = True
TIME_ZONE = "UTC"
STATIC_URL = "static/"

# A database cache, as a host without Redis keeps one: `migrate` creates its table.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "third_host_cache"}}

CELERY_BROKER_URL = ""
CELERY_TASK_ALWAYS_EAGER = True

GRAPH_MEMORY_CASE_MODEL = "chambers.Matter"
GRAPH_MEMORY_FIRM_MODEL = "chambers.Chambers"
GRAPH_MEMORY: dict[str, object] = {
    "ADAPTER": "tests.third_host.chambers.memory_adapter.ChambersMemoryAdapter",
    "WRITER": "extractive",
    "EMBEDDER": "none",
}
