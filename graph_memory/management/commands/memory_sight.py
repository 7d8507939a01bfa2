"""`python manage.py memory_sight triggers ls|install|uninstall` and `memory_sight build`: lawyers' sight by hand.

`migrate` does both after every run (graph_memory.apps): it installs the
triggers and builds the rows when the sight is on (GRAPH_MEMORY['LAWYER_SIGHT']
on a host that grants through django-guardian), and removes the triggers, their
functions and the rows when it is off. These are for an operator who wants to
see or change that without migrating: `ls` lists each trigger the sight wants
or has, with its table and whether it is installed; `uninstall` removes them
(reads then answer from the cases each lawyer may open, as with the sight off,
until `install` and `build`).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from graph_memory.wall import sight, triggers


class Command(BaseCommand):
    help = "List, install or remove the triggers that keep lawyers' sight current, or build its rows."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("what", choices=["triggers", "build"])
        parser.add_argument("action", nargs="?", choices=["ls", "install", "uninstall"], default="ls")

    def handle(self, *args: Any, what: str, action: str, **options: Any) -> None:
        if what == "build":
            if not sight.enabled():
                raise CommandError("the sight is off (GRAPH_MEMORY['LAWYER_SIGHT'], or a host without django-guardian)")
            if sight.missing_triggers():
                raise CommandError("its triggers are not installed: run `memory_sight triggers install` first")
            self.stdout.write(f"sight built: {sight.build()} rows")
        elif action == "ls":
            have = dict(triggers.installed(sight.TRIGGERS))
            wanted = {t.name: t.table for t in sight.TRIGGERS.wanted()}
            state = "on" if sight.enabled() else "off"
            self.stdout.write(f"lawyers' sight is {state}: {len(wanted)} trigger(s) wanted, {len(have)} installed")
            for name in sorted(set(have) | set(wanted)):
                status = "installed" if name in have and name in wanted else "missing" if name in wanted else "unwanted"
                self.stdout.write(f"{status:<9}  {name}  on {wanted.get(name) or have[name]}")
        elif action == "install":
            if not sight.enabled():
                raise CommandError("the sight is off: its triggers would keep rows no read uses (turn LAWYER_SIGHT on)")
            self.stdout.write(
                f"installed {sight.install()} trigger(s); run `memory_sight build` if reads do not use it yet"
            )
        else:
            self.stdout.write(f"removed {triggers.uninstall(sight.TRIGGERS)} trigger(s); the sight is not built")
