"""Settings of the second host: a product whose firm, user and case models look nothing like `practice`.

What it takes to plug the memory in is all here: the apps, the two model
settings, the adapter, a database with pgvector. Its REST framework defaults
are deliberately unlike the reference project's (anyone allowed, no
authentication classes, no throttle rates): the memory's views carry their own.
There is no django-guardian: this host answers the wall's question with its
own `member_case_ids` (lead, assignment or review access).
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url

# The repository root: the embedded PostgreSQL lives there, shared with the reference project.
BASE_DIR = Path(__file__).resolve().parents[2]

DEBUG = False
SECRET_KEY = "second-host-tests-only"
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
    "tests.second_host.offices",
    "tests.second_host.matters",
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

ROOT_URLCONF = "tests.second_host.urls"

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
# Its own test database, next to the main suite's on the same server; the suffix keeps parallel runs apart.
DATABASES["default"]["TEST"] = {"NAME": "test_second_host" + os.environ.get("TEST_DB_SUFFIX", "")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_USER_MODEL = "offices.Attorney"
AUTHENTICATION_BACKENDS = ["django.contrib.auth.backends.ModelBackend"]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # tests only: fast

USE_TZ = True
TIME_ZONE = "Europe/Berlin"  # not UTC: the memory stores UTC whatever the host's zone
LANGUAGE_CODE = "en-gb"
STATIC_URL = "static/"

CACHES = {
    # Throttle counts shared by every process, as the reference project keeps them.
    "default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "second_host_cache"}
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_THROTTLE_RATES": {},
    "UNAUTHENTICATED_USER": None,
}

CELERY_BROKER_URL = ""
CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True

# The memory layer: the host's two models and its adapter, and nothing else of the host.
GRAPH_MEMORY_CASE_MODEL = "matters.Matter"
GRAPH_MEMORY_FIRM_MODEL = "offices.LawOffice"
GRAPH_MEMORY: dict[str, object] = {"ADAPTER": "tests.second_host.matters.memory_adapter.MattersMemoryAdapter"}
