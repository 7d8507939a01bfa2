"""`manage.py memory_ledger`: the served ledger for an operator (issue 31, item 3).

    memory_ledger verify [--firm ID] [--seal]   recompute each firm's chain; print its head hash
    memory_ledger seal [--firm ID]              seal new rows into the chain now
    memory_ledger shown --firm ID [--user ID] [--case ID] [--since T] [--until T]
                                                what the memory showed (ids, never text)
    memory_ledger prune                         remove rows past SERVED_LEDGER_RETENTION_DAYS (not under a hold)

`verify` exits non-zero when any firm's chain is broken.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from graph_memory.ledger import served_chain, served_ledger
from graph_memory.models import ServedChain, ServedRow


def _moment(value: str) -> dt.datetime:
    try:
        return served_ledger.parse_moment(value)
    except ValueError as exc:
        raise CommandError(str(exc)) from exc


class Command(BaseCommand):
    help = "The served ledger: verify its hash chains, seal new rows, list what was shown, prune old rows."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["verify", "seal", "shown", "prune"])
        parser.add_argument("--firm", type=int, help="One firm's id (required by `shown`).")
        parser.add_argument("--seal", action="store_true", help="verify: seal new rows first.")
        parser.add_argument("--user", type=int, help="shown: the viewer's user id.")
        parser.add_argument("--case", type=int, help="shown: only answers that drew on this case id.")
        parser.add_argument("--since", type=_moment, help="shown: from this moment (ISO; inclusive).")
        parser.add_argument("--until", type=_moment, help="shown: to this moment (ISO; exclusive).")

    def handle(self, *args: Any, **options: Any) -> None:
        getattr(self, f"_{options['action']}")(options)

    def _firms(self, options: dict[str, Any]) -> list[int]:
        if options["firm"] is not None:
            return [options["firm"]]
        chained = set(ServedChain.objects.values_list("firm_id", flat=True))
        return sorted(chained | set(served_chain.firms_with_unsealed_rows()))

    def _verify(self, options: dict[str, Any]) -> None:
        broken = 0
        for firm_id in self._firms(options):
            result = served_chain.verify_firm(firm_id=firm_id, seal=options["seal"])
            state = "OK" if result.ok else "BROKEN"
            self.stdout.write(
                f"firm {firm_id}: {state}, {result.rows} sealed rows checked, {result.unsealed} not sealed yet; "
                f"head {result.head_seq} {result.head_hash or '(empty)'}"
            )
            for problem in result.problems:
                self.stdout.write(f"  {problem}")
            broken += not result.ok
        if broken:
            raise CommandError(f"{broken} firm chain(s) broken")

    def _seal(self, options: dict[str, Any]) -> None:
        firms = self._firms(options)
        sealed = {firm_id: served_chain.seal_firm(firm_id=firm_id) for firm_id in firms}
        for firm_id, count in sealed.items():
            self.stdout.write(f"firm {firm_id}: {count} rows sealed")

    def _shown(self, options: dict[str, Any]) -> None:
        if options["firm"] is None:
            raise CommandError("shown needs --firm")
        rows = served_ledger.served_rows(
            firm_id=options["firm"], viewer_id=options["user"], case_id=options["case"],
            since=options["since"], until=options["until"],
        )  # fmt: skip
        self.stdout.write("at\tviewer\tendpoint\tstatus\tcases\tquery fingerprint\tsealed as")
        row: ServedRow
        for row in rows.iterator():
            cases = ",".join(str(c) for c in row.case_ids) or "-"
            sealed = f"{row.seq}" if row.seq is not None else "not sealed yet"
            self.stdout.write(
                f"{row.at.isoformat()}\t{row.viewer_id}\t{row.endpoint}\t{row.status}\t{cases}\t"
                f"{row.query_fingerprint}\t{sealed}"
            )

    def _prune(self, options: dict[str, Any]) -> None:
        removed = served_chain.prune()
        if not removed:
            self.stdout.write("Nothing pruned (a legal hold is on, or no row is past the retention).")
        for firm_id, count in removed.items():
            self.stdout.write(f"firm {firm_id}: {count} rows pruned")
