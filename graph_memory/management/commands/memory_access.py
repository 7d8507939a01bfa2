"""`python manage.py memory_access --firm SLUG (--case REF | --user NAME) [--at T | --from T1 --to T2] [--csv]`.

The access ledger's two questions, for an operator: who could open a case's
memory, or which cases a user could open, at a moment (default: now) or at any
time in a range, and why. Times are ISO dates or date-times; without a zone,
the firm's. `--csv` prints the answer as CSV (one row per period of access).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from graph_memory.adapter import get_adapter
from graph_memory.ledger import history, report
from graph_memory.plumbing.display import firm_timezone


class Command(BaseCommand):
    help = "Who could open a case's memory, or which cases a user could open, at a time or over a range, from the access ledger."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--firm", required=True, metavar="SLUG")
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--case", metavar="REF", help="The case's reference, or its id (a deleted case's).")
        which.add_argument("--user", metavar="NAME", help="The user's username, or their id.")
        parser.add_argument("--at", metavar="TIME", help="A moment (default: now).")
        parser.add_argument("--from", dest="start", metavar="TIME", help="The range's start (with --to).")
        parser.add_argument("--to", dest="end", metavar="TIME", help="The range's end (a date alone: its last moment).")
        parser.add_argument("--csv", action="store_true", dest="as_csv", help="Print CSV instead of the table.")

    def handle(self, *args: Any, **options: Any) -> None:
        adapter = get_adapter()
        firm = adapter.firm_by_slug(options["firm"])
        if firm is None:
            raise CommandError(f"unknown firm: {options['firm']}")
        if options["at"] and (options["start"] or options["end"]):
            raise CommandError("give --at, or --from and --to, not both")
        if bool(options["start"]) != bool(options["end"]):
            raise CommandError("give --from and --to together")
        tz = firm_timezone(firm)
        try:
            start = report.moment(options["at"] or options["start"] or "", tz=tz) or timezone.now()
            end = report.moment(options["end"] or "", tz=tz, end_of_day=True)
            if options["case"]:
                case_id, by = report.case_id_of(options["case"], firm_id=firm.pk), "viewer"
                if case_id is None:
                    raise CommandError(f"the ledger of {options['firm']} has no case {options['case']!r}")
                answer = history.who_could_open(firm_id=firm.pk, case_id=case_id, start=start, end=end)
            else:
                viewer_id, by = report.user_id_of(options["user"], firm_id=firm.pk), "case"
                if viewer_id is None:
                    raise CommandError(f"the ledger of {options['firm']} has no user {options['user']!r}")
                answer = history.cases_open_to(firm_id=firm.pk, viewer_id=viewer_id, start=start, end=end)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        with timezone.override(tz):
            names = report.answer_labels(answer, firm_id=firm.pk, by=by)
            rows = report.answer_rows(answer, names=names, by=by)
            if options["as_csv"]:
                self.stdout.write(report.to_csv(report.ANSWER_HEADER, rows), ending="")
                return
            when = f"at {start.isoformat()}" if end is None else f"from {start.isoformat()} to {end.isoformat()}"
            self.stdout.write(("Who could open it " if by == "viewer" else "Cases they could open ") + when)
            if not answer.grants_recorded:
                self.stdout.write("(this product does not grant through django-guardian: only firm admins are known)")
            if answer.since is None or start < answer.since:
                self.stdout.write(f"(the firm's ledger begins at {answer.since}: nothing before it is known)")
            for row in rows:
                self.stdout.write("  ".join([f"{row[1]} (#{row[0]})", row[2], "->", row[3] or "(still)", row[4]]))
            if not rows:
                self.stdout.write("nobody" if by == "viewer" else "no case")
