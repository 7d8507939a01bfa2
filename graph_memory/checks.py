"""System checks for the memory's settings and wiring, run by `manage.py check` (registered from AppConfig.ready()).

Checks that need a database connection (the `vector` extension, the cache
table, the sight triggers) are tagged `database`: `manage.py check --database
default` runs them. Django runs them before `migrate` too, but `migrate` is what
creates what they look for, so there they say nothing: no check of the memory
ever stops the command that fixes it. Before the memory is migrated they say
nothing either (its first `migrate` is the fix); after it, only true problems,
each with a hint that works as written.
"""

from __future__ import annotations

import json
import re
import sys
from types import FrameType
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core import checks
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.db import BaseDatabaseCache
from django.core.exceptions import ImproperlyConfigured
from django.core.management.commands.migrate import Command as MigrateCommand
from django.db import connections, router
from django.db.migrations.recorder import MigrationRecorder
from django.db.utils import load_backend
from django.utils.module_loading import import_string

from graph_memory import conf
from graph_memory.adapter import get_adapter
from graph_memory.models import AccessChange, Node, SightState
from graph_memory.refresh.schedule import InvalidCrontab, parse_crontab
from graph_memory.vectors import embeddings
from graph_memory.wall import sight

GUARDIAN_BACKEND = "guardian.backends.ObjectPermissionBackend"
# What DRF's throttles parse: requests, a slash, a period DRF knows by its first letter.
_RATE = re.compile(r"[1-9][0-9]*/(s|sec|second|m|min|minute|h|hour|d|day)")


@checks.register()
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    errors: list[checks.CheckMessage] = []
    try:
        values = {key: conf.get(key) for key in conf.DEFAULTS}
    except ValueError as exc:
        return [checks.Error(f"GRAPH_MEMORY environment override is not a number: {exc}", id="graph_memory.E001")]
    positive = [key for key in conf.DEFAULTS if key.startswith("CONTEXT_MAX_")]
    positive += ["PAGE_DEFAULT", "PAGE_MAX", "QUERY_MAX_CHARS", "CONTEXT_ITEM_MAX_CHARS", "NIGHTLY_BATCH_SIZE"]
    positive += ["VISIBLE_FIRST_MAX", "SEARCH_EXACT_MAX", "SEARCH_EF_SEARCH", "SEARCH_FIRM_INDEX_MIN", "SEARCH_FIRM_EF_SEARCH"]
    for key in positive:
        if not isinstance(values[key], int) or values[key] < 1:
            errors.append(checks.Error(f"GRAPH_MEMORY['{key}'] must be a positive integer", id="graph_memory.E002"))
    if isinstance(values["PAGE_DEFAULT"], int) and isinstance(values["PAGE_MAX"], int):
        if values["PAGE_DEFAULT"] > values["PAGE_MAX"]:
            errors.append(checks.Error("GRAPH_MEMORY['PAGE_DEFAULT'] exceeds PAGE_MAX", id="graph_memory.E003"))
    if values["WRITER"] not in {"auto", "openai", "extractive"}:
        errors.append(checks.Error("GRAPH_MEMORY['WRITER'] must be auto, openai or extractive", id="graph_memory.E004"))
    if values["EMBEDDER"] not in {"auto", "local", "openai", "none"}:
        errors.append(checks.Error("GRAPH_MEMORY['EMBEDDER'] must be auto, local, openai or none", id="graph_memory.E005"))
    # The vector column's width is fixed by the migration; vectors of another width cannot be stored.
    if values["EMBEDDING_DIMENSIONS"] != conf.DEFAULTS["EMBEDDING_DIMENSIONS"]:
        errors.append(checks.Error(
            f"GRAPH_MEMORY['EMBEDDING_DIMENSIONS'] must be {conf.DEFAULTS['EMBEDDING_DIMENSIONS']} (the migrated vector column)",
            id="graph_memory.E030",
        ))
    budget = values["NIGHTLY_TOKEN_BUDGET"]
    if budget is not None and (not isinstance(budget, int) or budget < 0):
        errors.append(checks.Error("GRAPH_MEMORY['NIGHTLY_TOKEN_BUDGET'] must be None or a non-negative integer", id="graph_memory.E006"))
    # Nightly refresh schedule: caught here, not first at `setup_memory_schedule`.
    try:
        parse_crontab(values["NIGHTLY_CRONTAB"])
    except InvalidCrontab as exc:
        errors.append(checks.Error(str(exc), id="graph_memory.E020"))
    timeout = values["ON_DEMAND_TIMEOUT"]
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout < 0:
        errors.append(checks.Error("GRAPH_MEMORY['ON_DEMAND_TIMEOUT'] must be a non-negative number of seconds", id="graph_memory.E021"))
    rate = values["THROTTLE_RATE"]
    if rate is not None and not (isinstance(rate, str) and _RATE.fullmatch(rate)):
        errors.append(checks.Error(
            f"GRAPH_MEMORY['THROTTLE_RATE'] = {rate!r} is not a request rate",
            hint='Give requests per period, e.g. "120/min" (periods: s, min, hour, day), or None for no throttling.',
            id="graph_memory.E038",
        ))
    return errors


def _memory_database() -> str:
    """The database alias the memory's tables are written to."""
    return router.db_for_write(Node)


@checks.register()
def check_database_is_postgresql(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    # From the settings, not a connection: the check must not need the server to be up.
    alias = _memory_database()
    engine = settings.DATABASES.get(alias, {}).get("ENGINE", "")
    try:
        vendor = load_backend(engine).DatabaseWrapper.vendor
    except ImproperlyConfigured:
        return []  # Django reports an unknown ENGINE itself
    if vendor == "postgresql":
        return []
    return [checks.Error(
        f"graph_memory needs PostgreSQL (with pgvector), but database {alias!r} is {vendor} ({engine})",
        hint=f"Point DATABASES[{alias!r}] at PostgreSQL with pgvector 0.8+ (ENGINE 'django.db.backends.postgresql').",
        id="graph_memory.E031",
    )]


def _inside_migrate() -> bool:
    """Whether these checks are `migrate`'s own, run before it migrates (Django runs every database check there).

    Told from the call stack, because the check framework does not say which command runs it.
    """
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if isinstance(frame.f_locals.get("self"), MigrateCommand):
            return True
        frame = frame.f_back
    return False


def _memory_migrated(alias: str) -> bool:
    """Whether `migrate` has run the memory's first migration on this database (it records it even where a
    router keeps the memory's tables elsewhere)."""
    return ("graph_memory", "0001_pgvector") in MigrationRecorder(connections[alias]).applied_migrations()


def _asked(alias: str, databases: Any) -> bool:
    """Whether a database check should look at `alias`: asked for it, and not as `migrate`'s own run of the checks."""
    return bool(databases) and alias in databases and not _inside_migrate()


@checks.register(checks.Tags.database)
def check_vector_extension(app_configs: Any = None, databases: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    alias = _memory_database()
    if not _asked(alias, databases) or connections[alias].vendor != "postgresql":
        return []  # E031 covers another vendor
    with connections[alias].cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector'), "
            "EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')"
        )
        installed, available = cursor.fetchone()
    if installed:
        return []
    if not available:
        # No command of this project can fix that: said before the first migrate too, which would fail on it.
        return [checks.Error(
            f"pgvector is not installed on the PostgreSQL server of database {alias!r}: the memory's first "
            "migration cannot create the 'vector' extension",
            hint=(
                "Install pgvector 0.8+ on the database server (e.g. the postgresql-<major>-pgvector package, "
                "or the pgvector/pgvector Docker image), then run python manage.py migrate."
            ),
            id="graph_memory.E032",
        )]
    if not _memory_migrated(alias):
        return []  # `migrate` creates it: the memory's first migration runs CREATE EXTENSION vector
    return [checks.Error(
        f"The PostgreSQL extension 'vector' (pgvector) is not installed in database {alias!r}, though the "
        "memory's migrations have run",
        hint=(
            f"Have a role allowed to create extensions (e.g. a superuser) run CREATE EXTENSION vector; in "
            f"database {connections[alias].settings_dict['NAME']!r} (migrate will not: the migration that "
            "creates it has run)."
        ),
        id="graph_memory.E032",
    )]


def _has_guardian_backend() -> bool:
    for path in settings.AUTHENTICATION_BACKENDS:
        try:
            backend = import_string(path)
        except ImportError:
            continue  # Django's own checks and login report a backend that cannot be imported
        # Guardian's backend itself or a subclass of it.
        if any(f"{c.__module__}.{c.__qualname__}" == GUARDIAN_BACKEND for c in getattr(backend, "__mro__", ())):
            return True
    return False


@checks.register()
def check_adapter(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    try:
        adapter = get_adapter()
    except ImproperlyConfigured as exc:
        # Not set, cannot be imported, or not a MemoryAdapter subclass: the message says which.
        return [checks.Error(
            str(exc),
            hint=(
                'Set GRAPH_MEMORY["ADAPTER"] to the dotted path of your subclass of '
                'graph_memory.adapter.MemoryAdapter, e.g. "myproduct.memory_adapter.MemoryAdapter"; '
                "docs/host-developers.md walks through writing one."
            ),
            id="graph_memory.E033",
        )]
    try:
        adapter.changes()
    except Exception as exc:
        raised = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return [checks.Error(
            f"The adapter's changes() raised {raised}; the memory watches none of the host's records, so no "
            "change flags a summary stale or updates the map",
            hint=(
                f"Fix changes() of {conf.get('ADAPTER')}: it runs once at startup (AppConfig.ready) to connect "
                "the memory's receivers to the models it names."
            ),
            id="graph_memory.E042",
        )]
    if adapter.guardian_permissions() is not None and not _has_guardian_backend():
        return [checks.Error(
            f"The adapter opens cases by django-guardian object permissions, but {GUARDIAN_BACKEND} "
            "is not in AUTHENTICATION_BACKENDS",
            hint=f"Add '{GUARDIAN_BACKEND}' to AUTHENTICATION_BACKENDS, after Django's ModelBackend.",
            id="graph_memory.E034",
        )]
    return []


@checks.register(checks.Tags.database)
def check_sight_triggers(app_configs: Any = None, databases: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Lawyers' reads trust their sight only while triggers keep it current (graph_memory.wall.sight)."""
    alias = _memory_database()
    if not _asked(alias, databases) or connections[alias].vendor != "postgresql":
        return []
    try:
        if SightState._meta.db_table not in connections[alias].introspection.table_names():
            return []  # not migrated yet (migrate installs them)
        on = sight.enabled()
    except ImproperlyConfigured:
        return []  # E033 names the adapter problem
    if not on:
        # Left from when it was on: every grant and summary write still pays them, for rows no read trusts.
        unwanted = sight.unwanted_triggers()
        return [checks.Error(
            f"{len(unwanted)} trigger(s) of lawyers' sight are installed in database {alias!r} while the sight "
            f"is off: {', '.join(unwanted[:3])}{' ...' if len(unwanted) > 3 else ''}",
            hint="Run python manage.py migrate (it removes them while the sight is off), or "
                 "python manage.py memory_sight triggers uninstall.",
            id="graph_memory.E039",
        )] if unwanted else []  # fmt: skip
    missing = sight.missing_triggers()
    if not missing:
        return []
    return [checks.Error(
        f"{len(missing)} trigger(s) that keep lawyers' sight current are missing from database {alias!r}: "
        f"{', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}",
        hint="Run python manage.py migrate (it installs them after every run), or set GRAPH_MEMORY['LAWYER_SIGHT'] = False.",
        id="graph_memory.E039",
    )]


@checks.register(checks.Tags.database)
def check_ledger_triggers(app_configs: Any = None, databases: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """The access ledger records a change only through its triggers (graph_memory/ledger/triggers.py)."""
    alias = _memory_database()
    if not _asked(alias, databases) or connections[alias].vendor != "postgresql":
        return []
    if AccessChange._meta.db_table not in connections[alias].introspection.table_names():
        return []  # not migrated yet (migrate installs them)
    from graph_memory.ledger import triggers

    try:
        missing = triggers.missing_triggers(using=alias)
    except ImproperlyConfigured:
        return []  # E033 names the adapter problem
    if not missing:
        return []
    return [checks.Error(
        f"{len(missing)} trigger(s) of the access ledger are missing from database {alias!r}: "
        f"{', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}; changes to who may open a case go unrecorded",
        hint="Run python manage.py migrate (it installs them after every run).",
        id="graph_memory.E043",
    )]  # fmt: skip


@checks.register(checks.Tags.database, checks.Tags.caches)
def check_cache_table(app_configs: Any = None, databases: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    # The API's throttle counts live in the default cache; with a database
    # cache and no table, every API request would be a 500. `migrate` creates
    # the table (apps.py), so before the first one this is no problem yet.
    if conf.get("THROTTLE_RATE") is None:
        return []
    cache = caches[DEFAULT_CACHE_ALIAS]
    if not isinstance(cache, BaseDatabaseCache):
        return []
    alias = router.db_for_read(cache.cache_model_class)
    table = cache.cache_model_class._meta.db_table
    if not _asked(alias, databases) or table in connections[alias].introspection.table_names():
        return []
    if not _memory_migrated(alias):
        return []
    return [checks.Error(
        f"The default cache is a database cache whose table {table!r} does not exist in database {alias!r}; "
        "the API's throttle keeps its counts there",
        hint="Run python manage.py createcachetable (or python manage.py migrate, which creates it too).",
        id="graph_memory.E035",
    )]


@checks.register()
def check_host_models(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    errors: list[checks.CheckMessage] = []
    for setting, label, check_id in (
        ("GRAPH_MEMORY_CASE_MODEL", conf.case_model_label(), "graph_memory.E036"),
        ("GRAPH_MEMORY_FIRM_MODEL", conf.firm_model_label(), "graph_memory.E037"),
    ):
        try:
            apps.get_model(label)
        except ValueError:
            problem = f"{setting} = {label!r} is not of the form 'app_label.ModelName'"
        except LookupError:
            problem = f"{setting} = {label!r} names a model that is not installed"
        else:
            continue
        errors.append(checks.Error(
            problem,
            hint=f"Set {setting} to your model as 'app_label.ModelName', with its app in INSTALLED_APPS.",
            id=check_id,
        ))
    return errors


@checks.register()
def check_search_relevance(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """SEARCH_EXACT_SHARE and SEARCH_MIN_SIMILARITY (issue 14), and a floor for the configured embedder."""
    messages: list[checks.CheckMessage] = []
    share = conf.get("SEARCH_EXACT_SHARE")
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1:
        messages.append(checks.Error("GRAPH_MEMORY['SEARCH_EXACT_SHARE'] must be a number from 0 to 1", id="graph_memory.E040"))
    floors = conf.get("SEARCH_MIN_SIMILARITY")
    try:
        floors = json.loads(floors) if isinstance(floors, str) else floors
    except ValueError:
        floors = None
    valid = isinstance(floors, dict) and all(
        isinstance(model, str)
        and (value is None or (isinstance(value, int | float) and not isinstance(value, bool) and -1 <= value < 1))
        for model, value in floors.items()
    )
    if not valid:
        messages.append(checks.Error(
            "GRAPH_MEMORY['SEARCH_MIN_SIMILARITY'] must map embedding models (or \"*\") to a cosine similarity "
            "from -1 to below 1, or None",
            hint='e.g. {"local:all-MiniLM-L6-v2": 0.33, "*": None}',
            id="graph_memory.E041",
        ))
        return messages
    model = embeddings.configured_model()
    if model is not None and floors.get(model, floors.get("*")) is None:
        messages.append(checks.Warning(
            f"Search has no similarity floor for the embedding model {model!r}: meaning alone will qualify no hit "
            "(word matches are still found and ranked by meaning)",
            hint=(
                f"Measure one on your own case texts (tests/relevance_corpus.py and bench/bench_search.py show how "
                f"the local model's was chosen) and set GRAPH_MEMORY['SEARCH_MIN_SIMILARITY'][{model!r}]."
            ),
            id="graph_memory.W040",
        ))
    return messages


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@checks.register()
def check_writer_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """The summary writer's bounds and the regression guard's rates."""
    messages: list[checks.CheckMessage] = []
    try:
        max_tokens, ttl = conf.get("OPENAI_MAX_TOKENS"), conf.get("OPENAI_FORMAT_MEMORY_TTL")
        rates = {key: conf.get(key) for key in ("GUARD_MIN_KEPT_RATE", "GUARD_MIN_SHARE")}
    except ValueError:
        return []  # E001 already names the unreadable environment override
    if max_tokens is not None and (not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1):
        messages.append(checks.Error(
            "GRAPH_MEMORY['OPENAI_MAX_TOKENS'] must be None (sized from the output schema) or a positive integer",
            id="graph_memory.E050",
        ))
    if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 1:
        messages.append(checks.Error(
            "GRAPH_MEMORY['OPENAI_FORMAT_MEMORY_TTL'] must be a positive number of seconds", id="graph_memory.E051"
        ))
    for key, value in rates.items():
        if not _is_number(value) or not 0 <= value <= 1:
            messages.append(checks.Error(f"GRAPH_MEMORY['{key}'] must be a number from 0 to 1", id="graph_memory.E052"))
    return messages


@checks.register()
def check_compounding_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Notes, sources and the memory index (issue 17): caps are positive, the note rate parses."""
    errors: list[checks.CheckMessage] = []
    keys = (
        "NOTE_MAX_CHARS", "NOTE_TITLE_MAX_CHARS", "SOURCE_CHARS_DEFAULT", "SOURCE_CHARS_MAX", "INDEX_GIST_CHARS",
        "NOTE_GUARD_MAX_CASES",
    )  # fmt: skip
    for key in keys:
        value = conf.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            errors.append(checks.Error(f"GRAPH_MEMORY['{key}'] must be a positive integer", id="graph_memory.E080"))
    default, most = conf.get("SOURCE_CHARS_DEFAULT"), conf.get("SOURCE_CHARS_MAX")
    if isinstance(default, int) and isinstance(most, int) and default > most:
        errors.append(checks.Error("GRAPH_MEMORY['SOURCE_CHARS_DEFAULT'] exceeds SOURCE_CHARS_MAX", id="graph_memory.E080"))
    index = conf.get("INDEX_MAX_BYTES")
    if isinstance(index, bool) or not isinstance(index, int) or index < 512:
        errors.append(checks.Error("GRAPH_MEMORY['INDEX_MAX_BYTES'] must be an integer of at least 512", id="graph_memory.E080"))
    rate = conf.get("NOTE_RATE")
    if rate is not None and not (isinstance(rate, str) and _RATE.fullmatch(rate)):
        errors.append(checks.Error(
            f"GRAPH_MEMORY['NOTE_RATE'] = {rate!r} is not a rate",
            hint='Give notes per period, e.g. "30/hour" (periods: s, min, hour, day), or None for no limit.',
            id="graph_memory.E081",
        ))
    return errors


@checks.register()
def check_lint_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """The lint pass (issue 19): its weekly crontab parses, its thresholds are in range."""
    errors: list[checks.CheckMessage] = []
    try:
        parse_crontab(conf.get("LINT_CRONTAB"), setting="LINT_CRONTAB")
    except InvalidCrontab as exc:
        errors.append(checks.Error(str(exc), id="graph_memory.E100"))
    for key in ("LINT_STALE_NIGHTS", "LINT_WEAK_MIN_STATEMENTS", "LINT_WEAK_MANY_RECORDS"):
        value = conf.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            errors.append(checks.Error(f"GRAPH_MEMORY['{key}'] must be a non-negative integer", id="graph_memory.E101"))
    for key in ("LINT_WEAK_DROPPED_SHARE", "LINT_NEAR_DUPLICATE_MIN_SIMILARITY"):
        if not _is_number(conf.get(key)) or not 0 <= conf.get(key) <= 1:
            errors.append(checks.Error(f"GRAPH_MEMORY['{key}'] must be a number from 0 to 1", id="graph_memory.E102"))
    return errors


@checks.register()
def check_document_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Long documents (issue 18): every size is a positive integer; the router's catalogue can hold a section."""
    errors: list[checks.CheckMessage] = []
    keys = ("DOCUMENT_INDEX_BATCH_PAGES", "DOCUMENT_MODEL_MIN_PAGES", "DOCUMENT_PAGE_MAX_CHARS", "DOCUMENT_SECTION_MAX_PAGES",
            "DOCUMENT_TERMS_PER_SECTION", "DOCUMENT_ANSWER_MAX_PAGES", "DOCUMENT_ANSWER_MAX_QUOTES",
            "NIGHTLY_DOCUMENT_BATCH_SIZE", "DOCUMENT_ON_DEMAND_MAX")  # fmt: skip
    for key in keys:
        value = conf.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            errors.append(checks.Error(f"GRAPH_MEMORY['{key}'] must be a positive integer", id="graph_memory.E090"))
    router = conf.get("DOCUMENT_ROUTER_MAX_CHARS")
    if isinstance(router, bool) or not isinstance(router, int) or router < 1000:
        errors.append(checks.Error(
            "GRAPH_MEMORY['DOCUMENT_ROUTER_MAX_CHARS'] must be an integer of at least 1000",
            hint="The router reads the case's document indexes up to this size; below it not one section fits.",
            id="graph_memory.E091",
        ))
    return errors


@checks.register()
def check_served_ledger_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """The served ledger (issue 31): positive counts, a key that is a non-empty string or None, a boolean hold."""
    errors: list[checks.CheckMessage] = []
    for key in ("SERVED_LEDGER_RETENTION_DAYS", "SERVED_LEDGER_SEAL_SECONDS", "SERVED_LEDGER_SEAL_BATCH"):
        value = conf.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            errors.append(checks.Error(f"GRAPH_MEMORY['{key}'] must be a positive integer", id="graph_memory.E110"))
    key = conf.get("SERVED_LEDGER_KEY")
    if key is not None and not (isinstance(key, str) and key):
        errors.append(
            checks.Error("GRAPH_MEMORY['SERVED_LEDGER_KEY'] must be a non-empty string or None", id="graph_memory.E110")
        )
    if not isinstance(conf.get("SERVED_LEDGER_SYNCHRONOUS_COMMIT"), bool):
        errors.append(checks.Error("GRAPH_MEMORY['SERVED_LEDGER_SYNCHRONOUS_COMMIT'] must be True or False", id="graph_memory.E110"))
    if not isinstance(conf.get("SERVED_LEDGER_LEGAL_HOLD"), bool):
        errors.append(
            checks.Error("GRAPH_MEMORY['SERVED_LEDGER_LEGAL_HOLD'] must be True or False", id="graph_memory.E110")
        )
    return errors
