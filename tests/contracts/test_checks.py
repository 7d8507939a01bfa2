"""System checks: the GRAPH_MEMORY settings name the bad key; the wiring checks say how to fix what is missing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from django.conf import settings
from django.core.checks import CheckMessage, Tags
from django.core.checks.registry import registry
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.core.management.commands.check import Command as CheckCommand
from django.core.management.commands.migrate import Command as MigrateCommand
from django.db import connection, transaction
from django.db.models import QuerySet
from django.test import override_settings
from guardian.backends import ObjectPermissionBackend

from graph_memory.adapter import Changes, MemoryAdapter
from graph_memory.checks import (
    check_adapter,
    check_cache_table,
    check_database_is_postgresql,
    check_host_models,
    check_settings,
    check_sight_triggers,
    check_vector_extension,
)
from practice.models import Case

ROOT = Path(__file__).resolve().parents[2]


def error_ids(**graph_memory: object) -> list[tuple[str, str]]:
    with override_settings(GRAPH_MEMORY=graph_memory):
        return [(e.id, e.msg) for e in check_settings()]


def test_defaults_pass() -> None:
    assert error_ids() == []


@pytest.mark.parametrize(
    ("key", "value", "check_id"),
    [
        ("PAGE_MAX", 0, "graph_memory.E002"),
        ("CONTEXT_MAX_COUNTERPARTIES", -1, "graph_memory.E002"),
        ("QUERY_MAX_CHARS", "long", "graph_memory.E002"),
        ("WRITER", "gpt", "graph_memory.E004"),
        ("EMBEDDER", "cloud", "graph_memory.E005"),
    ],
)
def test_a_bad_value_is_reported_with_its_key(key: str, value: object, check_id: str) -> None:
    errors = error_ids(**{key: value})
    assert any(i == check_id and key in msg for i, msg in errors)


def test_page_default_above_max_is_reported() -> None:
    assert [e[0] for e in error_ids(PAGE_DEFAULT=50, PAGE_MAX=40)] == ["graph_memory.E003"]


def test_throttle_rate_must_be_a_rate() -> None:
    assert [e[0] for e in error_ids(THROTTLE_RATE="fast")] == ["graph_memory.E038"]
    assert [e[0] for e in error_ids(THROTTLE_RATE="0/min")] == ["graph_memory.E038"]
    assert error_ids(THROTTLE_RATE="5/hour") == error_ids(THROTTLE_RATE=None) == []


# --- wiring: database, adapter, cache, host models ----------------------------------------------

REFERENCE_ADAPTER = "practice.memory_adapter.PracticeMemoryAdapter"
MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


class NotAnAdapter:
    pass


class OwnCasesAdapter(MemoryAdapter):
    """A host that says which cases a viewer is on itself, without guardian."""

    def member_case_ids(self, viewer: object) -> QuerySet:
        return Case.objects.filter(owner=viewer).values("pk")

    def changes(self) -> Changes:
        return Changes()


class FirmGuardianBackend(ObjectPermissionBackend):
    pass


def messages(check: Callable[..., list[CheckMessage]], **kwargs: object) -> list[tuple[str, str, str]]:
    found = check(**kwargs)
    # Every message says how to fix it.
    assert all(m.hint for m in found), found
    return [(m.id, m.msg, m.hint) for m in found]


def test_the_new_checks_run_from_ready_and_the_database_ones_only_when_asked() -> None:
    registered = registry.get_checks()
    for check in (check_database_is_postgresql, check_adapter, check_host_models, check_vector_extension, check_cache_table):
        assert check in registered
    assert Tags.database in check_vector_extension.tags and Tags.database in check_cache_table.tags
    # Without --database, nothing touches a database.
    assert check_vector_extension(databases=None) == check_cache_table(databases=None) == []


@pytest.mark.django_db
def test_the_reference_project_passes_every_check() -> None:
    call_command("check", databases=["default"])  # raises SystemCheckError on any error


def test_a_database_that_is_not_postgresql_is_an_error() -> None:
    assert messages(check_database_is_postgresql) == []
    other = {"default": {"ENGINE": "tests.other_vendor_backend", "NAME": "unused"}}
    with pytest.warns(UserWarning, match="DATABASES"), override_settings(DATABASES=other):
        [(check_id, msg, hint)] = messages(check_database_is_postgresql)
    assert check_id == "graph_memory.E031" and "needs PostgreSQL" in msg and "othervendor" in msg
    assert "django.db.backends.postgresql" in hint


@pytest.mark.django_db
def test_the_vector_extension_missing_is_an_error() -> None:
    assert messages(check_vector_extension, databases=["default"]) == []
    with transaction.atomic():
        # Real DDL, undone with the savepoint: PostgreSQL's DDL is transactional.
        with connection.cursor() as cursor:
            cursor.execute("DROP EXTENSION vector CASCADE")
        [(check_id, msg, hint)] = messages(check_vector_extension, databases=["default"])
        with connection.cursor() as cursor:
            cursor.execute(re.search(r"CREATE EXTENSION vector;", hint)[0])  # the hint, as written
        assert messages(check_vector_extension, databases=["default"]) == []
        transaction.set_rollback(True)
    assert check_id == "graph_memory.E032" and "'vector'" in msg and "migrations have run" in msg
    assert "CREATE EXTENSION vector;" in hint and "migrate will not" in hint
    assert messages(check_vector_extension, databases=["default"]) == []


@pytest.mark.django_db
def test_before_the_first_migrate_the_database_checks_wait_for_it() -> None:
    no_table = {"default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "gm_no_such_table"}}
    with transaction.atomic(), override_settings(CACHES=no_table):
        with connection.cursor() as cursor:
            cursor.execute("DROP EXTENSION vector CASCADE")
            cursor.execute("DELETE FROM django_migrations WHERE app = 'graph_memory'")
        # `migrate` creates both: nothing to say yet.
        assert messages(check_vector_extension, databases=["default"]) == []
        assert messages(check_cache_table, databases=["default"]) == []
        transaction.set_rollback(True)


@pytest.mark.django_db
def test_no_database_check_ever_stops_migrate() -> None:
    no_table = {"default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "gm_no_such_table"}}
    with transaction.atomic(), override_settings(CACHES=no_table):
        with connection.cursor() as cursor:
            cursor.execute("DROP EXTENSION vector CASCADE")
            cursor.execute("DROP TRIGGER gm_sight_graph_memory_edge_insert ON graph_memory_edge")
        with pytest.raises(SystemCheckError) as refused:
            CheckCommand().check(databases=["default"])
        found = set(re.findall(r"graph_memory\.E\d+", str(refused.value)))
        assert {"graph_memory.E032", "graph_memory.E035", "graph_memory.E039"} <= found
        MigrateCommand().check(databases=["default"])  # the very checks `migrate` runs first: none stops it
        transaction.set_rollback(True)


@pytest.mark.django_db
def test_a_missing_sight_trigger_is_an_error_and_migrate_puts_it_back() -> None:
    from graph_memory.wall import sight

    assert messages(check_sight_triggers, databases=["default"]) == []
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER gm_sight_graph_memory_edge_insert ON graph_memory_edge")
        [(check_id, msg, hint)] = messages(check_sight_triggers, databases=["default"])
        assert sight.install() > 0 and messages(check_sight_triggers, databases=["default"]) == []
        transaction.set_rollback(True)
    assert check_id == "graph_memory.E039" and "gm_sight_graph_memory_edge_insert" in msg and "migrate" in hint


@pytest.mark.parametrize(
    ("adapter", "said"),
    [
        (None, "is not set"),
        ("tests.no_such_module.Adapter", "cannot be imported"),
        ("tests.contracts.test_checks.NotAnAdapter", "is not a MemoryAdapter subclass"),
    ],
)
def test_an_adapter_that_cannot_be_loaded_is_its_own_error(adapter: str | None, said: str) -> None:
    with override_settings(GRAPH_MEMORY={"ADAPTER": adapter}):
        [(check_id, msg, hint)] = messages(check_adapter)
    assert check_id == "graph_memory.E033" and said in msg
    assert 'GRAPH_MEMORY["ADAPTER"]' in hint and "MemoryAdapter" in hint


def test_guardian_backend_missing_is_an_error_only_when_the_adapter_uses_guardian() -> None:
    with override_settings(GRAPH_MEMORY={"ADAPTER": REFERENCE_ADAPTER}):
        assert messages(check_adapter) == []
        with override_settings(AUTHENTICATION_BACKENDS=[MODEL_BACKEND]):
            [(check_id, msg, hint)] = messages(check_adapter)
        with override_settings(AUTHENTICATION_BACKENDS=[MODEL_BACKEND, "tests.contracts.test_checks.FirmGuardianBackend"]):
            assert messages(check_adapter) == []  # a subclass of guardian's backend is guardian's backend
    assert check_id == "graph_memory.E034" and "AUTHENTICATION_BACKENDS" in msg
    assert "'guardian.backends.ObjectPermissionBackend'" in hint
    own = {"ADAPTER": "tests.contracts.test_checks.OwnCasesAdapter"}
    with override_settings(GRAPH_MEMORY=own, AUTHENTICATION_BACKENDS=[MODEL_BACKEND]):
        assert messages(check_adapter) == []


@pytest.mark.django_db
def test_a_missing_cache_table_is_an_error_when_throttling_needs_it() -> None:
    assert messages(check_cache_table, databases=["default"]) == []  # the reference project's table exists
    no_table = {"default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "gm_no_such_table"}}
    with override_settings(CACHES=no_table):
        [(check_id, msg, hint)] = messages(check_cache_table, databases=["default"])
        with override_settings(GRAPH_MEMORY={"THROTTLE_RATE": None}):
            assert messages(check_cache_table, databases=["default"]) == []  # no throttling, no counts
        with transaction.atomic():
            call_command("createcachetable")  # the hint, as written
            assert messages(check_cache_table, databases=["default"]) == []
            transaction.set_rollback(True)
    assert check_id == "graph_memory.E035" and "'gm_no_such_table'" in msg
    assert hint.startswith("Run python manage.py createcachetable")
    local = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    with override_settings(CACHES=local):
        assert messages(check_cache_table, databases=["default"]) == []


@pytest.mark.parametrize(
    ("setting", "label", "check_id", "said"),
    [
        ("GRAPH_MEMORY_CASE_MODEL", "practice.Matter", "graph_memory.E036", "not installed"),
        ("GRAPH_MEMORY_CASE_MODEL", "Case", "graph_memory.E036", "not of the form"),
        ("GRAPH_MEMORY_FIRM_MODEL", "nowhere.Firm", "graph_memory.E037", "not installed"),
    ],
)
def test_a_host_model_that_does_not_exist_is_an_error(setting: str, label: str, check_id: str, said: str) -> None:
    assert messages(check_host_models) == []
    with override_settings(**{setting: label}):
        [(found_id, msg, hint)] = messages(check_host_models)
    assert found_id == check_id and setting in msg and label in msg and said in msg
    assert "'app_label.ModelName'" in hint and "INSTALLED_APPS" in hint


@pytest.mark.parametrize(
    ("key", "value", "check_id"),
    [
        ("OPENAI_MAX_TOKENS", 0, "graph_memory.E050"),
        ("OPENAI_MAX_TOKENS", "lots", "graph_memory.E050"),
        ("OPENAI_FORMAT_MEMORY_TTL", 0, "graph_memory.E051"),
        ("GUARD_MIN_KEPT_RATE", 1.5, "graph_memory.E052"),
        ("GUARD_MIN_SHARE", "half", "graph_memory.E052"),
    ],
)
def test_writer_guard_and_verifier_settings_are_checked(key: str, value: object, check_id: str) -> None:
    from graph_memory.checks import check_writer_settings

    with override_settings(GRAPH_MEMORY={"ADAPTER": settings.GRAPH_MEMORY["ADAPTER"], key: value}):
        found = [(e.id, e.msg) for e in check_writer_settings()]
    assert [check_id] == [i for i, _ in found] and key in found[0][1]
    with override_settings(GRAPH_MEMORY={"ADAPTER": settings.GRAPH_MEMORY["ADAPTER"]}):
        assert check_writer_settings() == []


# --- a broken adapter setting: every module imports, and `check` names it (E033) --------------------

IMPORT_EVERYTHING_THEN_CHECK = """
import importlib, pkgutil, django
django.setup()
import graph_memory
from django.core.management import call_command
from django.core.management.base import SystemCheckError
names = [m.name for m in pkgutil.walk_packages(graph_memory.__path__, "graph_memory.")]
for name in names:
    importlib.import_module(name)
print(f"imported {len(names)} modules")
try:
    call_command("check")
except SystemCheckError as error:
    print(error)
"""


@pytest.mark.parametrize(
    ("adapter", "said"),
    [
        # (Unset and not a subclass: test_an_adapter_that_cannot_be_loaded_is_its_own_error, in-process.)
        ("tests.no_such_module.Adapter", "cannot be imported: ModuleNotFoundError: No module named 'tests.no_such_module'"),
        # A module that raises something else on import: a model of an app this project does not install.
        ("tests.second_host.matters.memory_adapter.MattersMemoryAdapter", "cannot be imported: RuntimeError: Model class"),
    ],
)
def test_with_a_broken_adapter_every_module_imports_and_check_names_it(adapter: str, said: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_EVERYTHING_THEN_CHECK], cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "GRAPH_MEMORY_ADAPTER": adapter},
    )  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert re.search(r"imported \d{3} modules", done.stdout)
    assert "(graph_memory.E033)" in done.stdout and said in done.stdout, done.stdout


def test_an_adapter_whose_changes_raise_is_its_own_error() -> None:
    with override_settings(GRAPH_MEMORY={"ADAPTER": "tests.contracts.test_checks.ChangesRaiseAdapter"}):
        [(check_id, msg, hint)] = messages(check_adapter)
    assert check_id == "graph_memory.E042" and "changes() raised KeyError: 'lawyer'" in msg
    assert "tests.contracts.test_checks.ChangesRaiseAdapter" in hint and "AppConfig.ready" in hint


class ChangesRaiseAdapter(OwnCasesAdapter):
    def changes(self) -> Changes:
        return {}["lawyer"]
