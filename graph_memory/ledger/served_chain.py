"""The served ledger's hash chain, per firm: sealing, verifying, pruning (issue 31, item 3).

Readers append rows unsealed (`served_ledger.record`); `seal_firm` gives them,
in insertion order, the firm's next sequence numbers and each a hash that
covers the row and the previous row's hash (HMAC-SHA256 under the ledger's
chain key). It runs under the firm's advisory lock in a short transaction, from
a periodic task (`graph_memory.seal_served_ledger`) and from `memory_ledger
verify --seal`; a reader never takes that lock. `ServedChain` keeps each
firm's head and where pruning left off, so `verify_firm` finds a row edited,
deleted (from the middle or either end) or inserted: the head it prints is
what a firm keeps elsewhere to prove later that nothing before it changed.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from graph_memory import conf
from graph_memory.ledger.served_ledger import ledger_key
from graph_memory.models import ServedChain, ServedRow
from graph_memory.plumbing import locks
from graph_memory.plumbing.stmt import Stmt, sql

_T = ServedRow._meta.db_table
_COLUMNS = "id, firm_id, viewer_id, endpoint, case_ids, status, at, query_fingerprint"


def row_hash(row: dict[str, Any], *, seq: int, prev_hash: str) -> str:
    """The chain hash of one row at place `seq` after `prev_hash`: every column a reader wrote, and both."""
    at = row["at"].astimezone(dt.UTC).isoformat()
    fields = [
        seq, row["id"], row["firm_id"], row["viewer_id"], row["endpoint"], sorted(row["case_ids"]),
        row["status"], at, row["query_fingerprint"],
    ]  # fmt: skip
    message = prev_hash + "\n" + json.dumps(fields, separators=(",", ":"), ensure_ascii=False)
    return hmac.new(ledger_key("chain"), message.encode(), hashlib.sha256).hexdigest()


def _fetch(statement: Stmt) -> list[dict[str, Any]]:
    with connection.cursor() as cursor:
        statement.execute(cursor)
        names = [c.name for c in cursor.description]
        return [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]


def _seal_batch(firm_id: int, batch: int) -> int | None:
    """Seal up to `batch` of the firm's unsealed rows; None when another sealer holds the firm."""
    with transaction.atomic():
        if not locks.try_lock(locks.LockKind.SERVED_LEDGER, firm_id, transactional=True):
            return None
        chain, _ = ServedChain.objects.get_or_create(firm_id=firm_id)
        rows = _fetch(sql(
            f"SELECT {_COLUMNS} FROM {_T} WHERE firm_id = %(firm)s AND seq IS NULL ORDER BY id LIMIT %(batch)s",
            firm=firm_id, batch=batch,
        ))  # fmt: skip
        if not rows:
            return 0
        seq, prev = chain.head_seq, chain.head_hash
        ids, seqs, prevs, hashes = [], [], [], []
        for row in rows:
            seq += 1
            digest = row_hash(row, seq=seq, prev_hash=prev)
            ids.append(row["id"])
            seqs.append(seq)
            prevs.append(prev)
            hashes.append(digest)
            prev = digest
        with connection.cursor() as cursor:
            sql(
                f"UPDATE {_T} r SET seq = v.seq, prev_hash = v.prev, row_hash = v.hash "
                "FROM unnest(%(ids)s::bigint[], %(seqs)s::bigint[], %(prevs)s::text[], %(hashes)s::text[]) "
                "v(id, seq, prev, hash) WHERE r.id = v.id AND r.firm_id = %(firm)s AND r.seq IS NULL",
                ids=ids, seqs=seqs, prevs=prevs, hashes=hashes, firm=firm_id,
            ).execute(cursor)
        chain.head_seq, chain.head_hash, chain.sealed_at = seq, prev, timezone.now()
        chain.save(update_fields=["head_seq", "head_hash", "sealed_at"])
        return len(rows)


def seal_firm(*, firm_id: int) -> int:
    """Seal every row of the firm not yet in its chain, in insertion order; returns how many.

    Returns at once (0) if another sealer is at work on the firm: it seals the same rows.
    """
    batch, total = int(conf.get("SERVED_LEDGER_SEAL_BATCH")), 0
    while True:
        sealed = _seal_batch(firm_id, batch)
        if not sealed:
            return total
        total += sealed
        if sealed < batch:
            return total


def firms_with_unsealed_rows() -> list[int]:
    return list(ServedRow.objects.filter(seq__isnull=True).values_list("firm_id", flat=True).distinct().order_by())


def seal_all() -> dict[int, int]:
    """Seal every firm's new rows (the periodic task); per firm, how many were sealed."""
    return {firm_id: seal_firm(firm_id=firm_id) for firm_id in firms_with_unsealed_rows()}


@dataclass
class Verification:
    firm_id: int
    rows: int = 0
    unsealed: int = 0
    head_seq: int = 0
    head_hash: str = ""
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_firm(*, firm_id: int, seal: bool = False) -> Verification:
    """Recompute the firm's chain from its first kept row to its head; every break is a problem.

    Finds an edited row (its hash), a deleted one (a gap in the numbers, a
    first row not where pruning left off, a last row that is not the recorded
    head) and an inserted one (a number twice, or a hash that does not follow).
    With `seal`, new rows are sealed first. Rows not yet sealed are counted
    and not checked: nothing vouches for them until they are sealed.
    """
    if seal:
        seal_firm(firm_id=firm_id)
    chain = ServedChain.objects.filter(firm_id=firm_id).first() or ServedChain(firm_id=firm_id)
    result = Verification(firm_id=firm_id, head_seq=chain.head_seq, head_hash=chain.head_hash)
    result.unsealed = ServedRow.objects.filter(firm_id=firm_id, seq__isnull=True).count()
    expected_seq, prev = chain.pruned_seq, chain.pruned_hash
    with connection.cursor() as cursor:
        # A server-side cursor would hold a transaction open; the rows are read in pages by seq instead.
        while True:
            sql(
                f"SELECT {_COLUMNS}, seq, prev_hash, row_hash FROM {_T} "
                "WHERE firm_id = %(firm)s AND seq > %(after)s ORDER BY seq LIMIT 5000",
                firm=firm_id, after=expected_seq,
            ).execute(cursor)
            names = [c.name for c in cursor.description]
            page = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
            if not page:
                break
            for row in page:
                expected_seq += 1
                if row["seq"] != expected_seq:
                    result.problems.append(f"rows {expected_seq} to {row['seq'] - 1} are missing")
                    expected_seq = row["seq"]
                if row["prev_hash"] != prev:
                    result.problems.append(f"row {row['seq']} does not follow the row before it")
                if row_hash(row, seq=row["seq"], prev_hash=row["prev_hash"] or "") != row["row_hash"]:
                    result.problems.append(f"row {row['seq']} (id {row['id']}) was changed after it was sealed")
                prev = row["row_hash"]
                result.rows += 1
    duplicates = _fetch(sql(
        f"SELECT seq FROM {_T} WHERE firm_id = %(firm)s AND seq IS NOT NULL GROUP BY seq HAVING count(*) > 1",
        firm=firm_id,
    ))  # fmt: skip
    result.problems += [f"row {d['seq']} appears more than once" for d in duplicates]
    if expected_seq < chain.head_seq:
        result.problems.append(
            f"rows {expected_seq + 1} to {chain.head_seq} are missing (the head is {chain.head_seq})"
        )
    elif expected_seq > chain.head_seq:
        result.problems.append(f"rows past the recorded head ({chain.head_seq}) were inserted")
    elif prev != chain.head_hash:
        result.problems.append("the last row's hash is not the recorded head's")
    return result


def prune(*, now: dt.datetime | None = None) -> dict[int, int]:
    """Remove sealed rows older than SERVED_LEDGER_RETENTION_DAYS, oldest first; per firm, how many.

    Nothing while SERVED_LEDGER_LEGAL_HOLD is on. Only a firm's oldest sealed
    rows go, and the chain records the last one removed, so `verify_firm`
    tells a pruned start from a deleted one.
    """
    if conf.get("SERVED_LEDGER_LEGAL_HOLD"):
        return {}
    cutoff = (now or timezone.now()) - dt.timedelta(days=int(conf.get("SERVED_LEDGER_RETENTION_DAYS")))
    removed: dict[int, int] = {}
    for chain in ServedChain.objects.order_by("firm_id"):
        with transaction.atomic():
            if not locks.try_lock(locks.LockKind.SERVED_LEDGER, chain.firm_id, transactional=True):
                continue
            # The rows to go: from the start of the chain up to the first row young enough to keep.
            last = (
                ServedRow.objects.filter(firm_id=chain.firm_id, seq__isnull=False, at__lt=cutoff)
                .exclude(seq__gt=_first_kept_seq(chain.firm_id, cutoff))
                .order_by("-seq")
                .values("seq", "row_hash")
                .first()
            )
            if last is None:
                continue
            count, _ = ServedRow.objects.filter(firm_id=chain.firm_id, seq__lte=last["seq"]).delete()
            ServedChain.objects.filter(firm_id=chain.firm_id).update(
                pruned_seq=last["seq"], pruned_hash=last["row_hash"]
            )
            removed[chain.firm_id] = count
    return removed


def _first_kept_seq(firm_id: int, cutoff: dt.datetime) -> int:
    kept = ServedRow.objects.filter(firm_id=firm_id, seq__isnull=False, at__gte=cutoff).order_by("seq").first()
    return kept.seq - 1 if kept is not None else 2**62
