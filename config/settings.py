"""Settings of the reference project. Every value can come from the environment;
docs/operators.md lists them with their defaults."""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "dev-only-insecure-key-change-me")
ALLOWED_HOSTS = [h for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",") if h]

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
    "drf_spectacular_sidecar",
    "guardian",
    "django_celery_beat",
    "accounts",
    "practice",
    "graph_memory",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # A firm admin's admin pages in their firm's time zone (after authentication: it reads the user).
    "graph_memory.admin.scoping.firm_time_zone_middleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
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
# A suffix lets several test runs share one server without sharing a database.
DATABASES["default"]["TEST"] = {"NAME": "test_graph_memory" + os.environ.get("TEST_DB_SUFFIX", "")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_USER_MODEL = "accounts.User"
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "guardian.backends.ObjectPermissionBackend",
]
# Guardian's anonymous user is not needed: anonymous callers see nothing.
ANONYMOUS_USER_NAME = None

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
# Django's own renderings of a time (admin's read-only fields, history pages) say the zone: config/formats/.
FORMAT_MODULE_PATH = ["config.formats"]

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# Lawyers are not staff: they sign in on the site's own page, not admin's (config/urls.py).
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

CACHES = {
    # A cache every process shares (throttling counts must agree across
    # workers) with no extra service to run: the database.
    "default": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "graph_memory_cache",
    }
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # No EXCEPTION_HANDLER or throttle rate for the memory: its views carry their
    # own (GRAPH_MEMORY["THROTTLE_RATE"], env GRAPH_MEMORY_THROTTLE_RATE).
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Graph Memory Layer — assistant API",
    "DESCRIPTION": (
        "Orientation for a law firm's assistant, computed for the signed-in user. "
        "Everything here is AI-written or derived from the firm's records: verify "
        "anything that matters against the live file."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Celery: Redis when CELERY_BROKER_URL is set; otherwise tasks run eagerly in
# the calling process (the demo says so when it starts).
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND") or None
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"

# The memory layer: the host's two models (they drive the app's foreign keys and
# migrations, like AUTH_USER_MODEL) and its adapter, the only door to them.
GRAPH_MEMORY_CASE_MODEL = "practice.Case"
GRAPH_MEMORY_FIRM_MODEL = "accounts.Firm"
# The memory layer's own settings, read only through graph_memory.conf.
GRAPH_MEMORY: dict[str, object] = {"ADAPTER": "practice.memory_adapter.PracticeMemoryAdapter"}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"graph_memory": {"handlers": ["console"], "level": os.environ.get("GRAPH_MEMORY_LOG_LEVEL", "INFO")}},
}
