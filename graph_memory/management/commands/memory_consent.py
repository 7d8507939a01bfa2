"""Memory consent for operators: exclude a client or a case from the memory, include it again, list."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from graph_memory.adapter import NotSupported, get_adapter
from graph_memory.consent.service import memory_exclude, memory_include
from graph_memory.models import MemoryExclusion
from graph_memory.wall.access import NotFound


class Command(BaseCommand):
    help = (
        "Exclude a client or a case of a firm from the memory (its derived memory is deleted; the map and "
        "conflict checks keep it), include it again (its memory restarts from the records), or list exclusions."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["exclude", "include", "list"])
        parser.add_argument(
            "--firm", required=True, help="the firm's command-line name (its slug in the reference host)"
        )
        target = parser.add_mutually_exclusive_group()
        target.add_argument("--case", help="the case number, e.g. 2026-014")
        target.add_argument("--client", type=int, help="the host's id of the client")
        parser.add_argument("--reason", default="", help="why (required to exclude): kept with the exclusion")

    def handle(
        self, *args: Any, action: str, firm: str, case: str | None, client: int | None, reason: str, **options: Any
    ) -> None:
        adapter = get_adapter()
        found = adapter.firm_by_slug(firm)
        if found is None:
            raise CommandError(f"no firm named {firm!r}")
        if action == "list":
            for row in MemoryExclusion.objects.filter(firm_id=found.pk).order_by("excluded_at", "pk"):
                self.stdout.write(f"{row.kind} #{row.ref_id}\t{row.excluded_at:%Y-%m-%d %H:%M} UTC\t{row.reason}")
            return
        if case is None and client is None:
            raise CommandError("name a case (--case) or a client (--client)")
        case_id = None
        if case is not None:
            case_id = adapter.case_id_by_reference(firm_id=found.pk, reference=case)
            if case_id is None:
                raise CommandError(f"no case {case!r} in firm {firm!r}")
        what = f"case {case}" if case is not None else f"client #{client}"
        try:
            if action == "exclude":
                change = memory_exclude(firm_id=found.pk, case_id=case_id, client_id=client, reason=reason)
            else:
                change = memory_include(firm_id=found.pk, case_id=case_id, client_id=client)
        except NotFound:
            raise CommandError(
                f"no {what} in firm {firm!r}" + (" that is excluded" if action == "include" else "")
            ) from None
        except NotSupported:
            raise CommandError(
                "this host's adapter names no client of a case (case_client_field): exclude cases"
            ) from None
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if change.exclusion is None:
            self.stdout.write(f"{what} was already excluded; nothing changed.")
        elif action == "exclude":
            deleted = sum(change.deleted.values())
            self.stdout.write(self.style.SUCCESS(
                f"Excluded {what}: {len(change.case_ids)} case(s) out of the memory, {deleted} derived row(s) deleted."
            ))  # fmt: skip
        else:
            self.stdout.write(self.style.SUCCESS(
                f"Included {what} again: {len(change.case_ids)} case(s) marked stale, rewritten by the next refresh."
            ))  # fmt: skip
