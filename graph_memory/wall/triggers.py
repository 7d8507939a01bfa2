"""The database triggers the app puts on tables, its own and the host's, declared as data with a lifecycle.

As django-pgtrigger does for a pluggable app: each feature that needs triggers
declares a `TriggerSet` (the plpgsql functions it calls, and each trigger's
table, name and definition); `sync` installs a set when its feature is on and
removes it, functions included, when it is off; `uninstall` runs in the
reverse of the last migration, so `migrate graph_memory zero` never leaves a
trigger on a host table writing into a dropped one; `manage.py memory_sight
triggers ls|install|uninstall` shows and changes them by hand.

Every name starts with `gm_`, so what is installed can always be found from
the catalogue, even triggers a previous version made and this one no longer
declares (`install` drops those: a prune).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.backends.utils import CursorWrapper

from graph_memory.plumbing.stmt import sql

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Trigger:
    name: str  # at most 63 characters, starting with the set's prefix
    table: str  # quoted as SQL wants it
    definition: str  # what follows `CREATE OR REPLACE TRIGGER <name>`


@dataclass(frozen=True)
class TriggerSet:
    """The triggers of one feature. `triggers` and `enabled` are asked at each call (they read settings
    and the host's adapter, which a test may change); `functions` are `(name(args), CREATE statement)`."""

    prefix: str  # every trigger and function of the set starts with it, e.g. "gm_sight_"
    enabled: Callable[[], bool]
    triggers: Callable[[], list[Trigger]]
    functions: Callable[[], list[tuple[str, str]]] = field(default=lambda: [])
    # Run after the triggers are removed (e.g. mark what they kept current as not current any more).
    on_uninstall: Callable[[str], None] | None = None

    def wanted(self) -> list[Trigger]:
        return self.triggers() if self.enabled() else []


# What a statement trigger of each event may read of the rows it changed (TRUNCATE has none).
_TRANSITIONS = {
    "INSERT": "REFERENCING NEW TABLE AS gm_new ",
    "DELETE": "REFERENCING OLD TABLE AS gm_old ",
    "UPDATE": "REFERENCING OLD TABLE AS gm_old NEW TABLE AS gm_new ",
}


def literal(text: str) -> str:
    """A SQL string literal (a trigger's arguments cannot be bound parameters)."""
    return "'" + text.replace("'", "''") + "'"


def after_statement(
    prefix: str, table: str, event: str, function: str, arguments: tuple[str, ...] = (), *, suffix: str | None = None
) -> Trigger:
    """A trigger `<prefix><table>_<suffix or event>` running `function(arguments...)` once after each `event`
    statement on `table` (quoted), which reads the rows it changed as `gm_new` / `gm_old`."""
    name = f"{prefix}{table.strip(chr(34))}_{(suffix or event).lower()}"[:63]
    call = f"{function}({', '.join(literal(argument) for argument in arguments)})"
    return Trigger(
        name, table, f"AFTER {event} ON {table} {_TRANSITIONS.get(event, '')}FOR EACH STATEMENT EXECUTE FUNCTION {call}"
    )


def installed(triggers: TriggerSet, *, using: str = DEFAULT_DB_ALIAS) -> list[tuple[str, str]]:
    """(trigger, table) of every trigger of the set in the database, by name."""
    with connections[using].cursor() as cursor:
        found = sql(
            "SELECT tgname, tgrelid::regclass::text FROM pg_trigger WHERE NOT tgisinternal "
            "AND starts_with(tgname, %(prefix)s) ORDER BY 2, 1",
            prefix=triggers.prefix,
        ).execute(cursor)
        return [(name, table) for name, table in found.fetchall()]


def _installed_functions(triggers: TriggerSet, cursor: CursorWrapper) -> list[str]:
    found = sql(
        "SELECT p.oid::regprocedure::text FROM pg_proc p WHERE starts_with(p.proname, %(prefix)s) "
        "AND p.pronamespace = current_schema()::regnamespace",
        prefix=triggers.prefix,
    ).execute(cursor)
    return [row[0] for row in found.fetchall()]


def install(triggers: TriggerSet, *, using: str = DEFAULT_DB_ALIAS) -> int:
    """Create or replace every trigger of the set (and its functions), and drop the set's triggers that are
    no longer declared; returns how many it declares. One transaction: all of them or none."""
    declared = triggers.triggers()
    names = {t.name for t in declared}
    with transaction.atomic(using=using), connections[using].cursor() as cursor:
        for _, create in triggers.functions():
            cursor.execute(create)
        for name, table in installed(triggers, using=using):
            if name not in names:
                cursor.execute(f'DROP TRIGGER "{name}" ON {table}')
        for trigger in declared:
            cursor.execute(f'CREATE OR REPLACE TRIGGER "{trigger.name}" {trigger.definition}')
    return len(declared)


def uninstall(triggers: TriggerSet, *, using: str = DEFAULT_DB_ALIAS) -> int:
    """Drop every trigger of the set found in the database, then its functions; returns how many triggers."""
    with transaction.atomic(using=using), connections[using].cursor() as cursor:
        found = installed(triggers, using=using)
        for name, table in found:
            cursor.execute(f'DROP TRIGGER "{name}" ON {table}')
        functions = _installed_functions(triggers, cursor)
        for function in functions:
            cursor.execute(f"DROP FUNCTION {function}")
        if (found or functions) and triggers.on_uninstall is not None:
            triggers.on_uninstall(using)
    if found:
        logger.info("graph_memory: removed %d %s* trigger(s)", len(found), triggers.prefix)
    return len(found)


def sync(triggers: TriggerSet, *, using: str = DEFAULT_DB_ALIAS) -> int:
    """Installed if the feature is on, removed if it is off (after every migrate); returns how many are wanted."""
    if triggers.enabled():
        return install(triggers, using=using)
    uninstall(triggers, using=using)
    return 0


def missing(triggers: TriggerSet, *, using: str = DEFAULT_DB_ALIAS) -> list[str]:
    """The set's wanted triggers the database lacks (for its system check)."""
    have = {name for name, _ in installed(triggers, using=using)}
    return sorted(t.name for t in triggers.wanted() if t.name not in have)


def unwanted(triggers: TriggerSet, *, using: str = DEFAULT_DB_ALIAS) -> list[str]:
    """The set's triggers in the database that it does not want now (its feature off, or no longer declared)."""
    wanted = {t.name for t in triggers.wanted()}
    return sorted(name for name, _ in installed(triggers, using=using) if name not in wanted)
