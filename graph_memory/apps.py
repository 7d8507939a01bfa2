from __future__ import annotations

import logging
from typing import Any

from django.apps import AppConfig
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.db import BaseDatabaseCache
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.db import connections, router
from django.db.models.signals import post_migrate

logger = logging.getLogger(__name__)


class GraphMemoryConfig(AppConfig):
    name = "graph_memory"
    verbose_name = "Graph memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from graph_memory import checks, receivers  # noqa: F401  (registers checks and receivers)
        from graph_memory.adapter import get_adapter
        from graph_memory.wall import access

        # Every app's post_migrate (auth's recreates permissions after a flush): the wall's kept ids go.
        post_migrate.connect(access.forget_permission_ids, dispatch_uid="graph_memory.forget_permission_ids")
        post_migrate.connect(_create_cache_table, sender=self, dispatch_uid="graph_memory.create_cache_table")
        try:
            adapter = get_adapter()
        except ImproperlyConfigured:
            return  # E033 names the problem; nothing can be watched without an adapter
        # The sight's triggers are the wall's index: installed (or, with the sight off, removed) after every
        # migrate, whatever the host's receivers do.
        post_migrate.connect(_sync_sight_triggers, sender=self)
        # The access ledger records on every host, LAWYER_SIGHT or not: its triggers, and users' firms and roles.
        post_migrate.connect(_install_ledger, sender=self, dispatch_uid="graph_memory.install_ledger")
        receivers.connect_ledger()
        try:
            changes = adapter.changes()
        except Exception:
            # The host's own code, at startup: its error must not stop every command (E042 names it).
            logger.exception("graph_memory: the adapter's changes() failed; no host change is watched")
            return
        receivers.connect(changes)


def _sync_sight_triggers(using: str, **_: Any) -> None:
    """After every migrate (and flush): the triggers that keep the sight current (graph_memory.wall.sight), and
    its rows, when a TRUNCATE or the migration that made the tables left them unbuilt; with the sight off,
    none (graph_memory.wall.triggers). Migrated back to before the sight, the last migration's reverse took them."""
    from graph_memory.models import SightState
    from graph_memory.wall import sight, triggers

    if SightState._meta.db_table not in connections[using].introspection.table_names():
        return
    if triggers.sync(sight.TRIGGERS, using=using):
        with connections[using].cursor() as cursor:
            cursor.execute(sight.FRESH)
            if not cursor.fetchone()[0]:
                sight.build(using=using)


def _install_ledger(using: str, **_: Any) -> None:
    """After every migrate (and flush): the access ledger's triggers, and its baseline when it is empty."""
    from graph_memory import ledger
    from graph_memory.models import AccessChange

    if AccessChange._meta.db_table in connections[using].introspection.table_names():
        ledger.install(using=using)


def _create_cache_table(using: str, verbosity: int = 1, **_: Any) -> None:
    """After every migrate: the default cache's table, when it is a database cache kept in this database.

    The API's throttle counts live there; `migrate` alone leaves a host working, and E035 (checks.py) is
    left for a table lost after it. Idempotent (`createcachetable` skips a table that exists).
    """
    cache = caches[DEFAULT_CACHE_ALIAS]
    if isinstance(cache, BaseDatabaseCache) and router.allow_migrate_model(using, cache.cache_model_class):
        call_command("createcachetable", cache.cache_model_class._meta.db_table, database=using, verbosity=verbosity)
