"""The served ledger's writer and reader: one row per answer the memory gives (issue 31, item 3).

`record` appends the row with one INSERT and takes no lock, so readers of one
firm never wait on each other for the chain (`served_chain` seals rows later).
The row names the cases the answer drew on, and only cases the viewer may
open: the API boundary passes the case node ids its *answer* carries (an
answer holds nothing the wall hid) and the INSERT turns them into case ids
within the viewer's firm (a node's id is fixed by its firm and case, so the
process keeps what it has resolved and the next row needs no lookup). A 404
carries no case, so a hidden case and an absent one leave the same row. The
query is kept only as a keyed fingerprint (HMAC), never as text: the same
question gives the same fingerprint, so a firm can match a question it is
shown against the ledger without the ledger holding what anyone asked.

If the INSERT fails, `record` raises `LedgerUnavailable` and the caller gives
no answer (fail closed). `send` is `record` in two steps, for a caller with
work to do before its answer leaves: the row goes to the server at once, and
`Sent.confirm()` waits for it (the API renders its answer in between). A read's
row (autocommit, cases known) goes as one extended-protocol query with its
values as text parameters, straight through psycopg's libpq connection: binding
and quoting the same row in Python cost the request more than the server takes
to insert it (docs/BENCHMARKS.md, "Served ledger").
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import re
import selectors
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from psycopg import Error as DriverError
from psycopg import pq

from graph_memory import conf
from graph_memory.models import Node, ServedRow
from graph_memory.plumbing.lru import Lru
from graph_memory.plumbing.stmt import sql

# HTTP status -> the row's status. 401 never reaches a row: an anonymous caller has no firm.
_STATUSES = {
    304: ServedRow.Status.NOT_MODIFIED,
    400: ServedRow.Status.INVALID,
    403: ServedRow.Status.REFUSED,
    404: ServedRow.Status.NOT_FOUND,
    405: ServedRow.Status.METHOD_NOT_ALLOWED,
    406: ServedRow.Status.INVALID,
    409: ServedRow.Status.REFUSED,
    415: ServedRow.Status.INVALID,
    429: ServedRow.Status.THROTTLED,
    501: ServedRow.Status.NOT_SUPPORTED,
}


# The endpoint a row is written for when an answer goes out through another door than its own URL:
# the MCP server runs each tool through its endpoint's view, and the row names the tool (`mcp:<tool>`).
_endpoint: ContextVar[str | None] = ContextVar("graph_memory_served_endpoint", default=None)


@contextmanager
def answering_as(endpoint: str) -> Iterator[None]:
    """Rows written inside the block name `endpoint` (e.g. "mcp:get_brief") instead of the view's own name."""
    token = _endpoint.set(endpoint)
    try:
        yield
    finally:
        _endpoint.reset(token)


def current_endpoint() -> str | None:
    return _endpoint.get()


class LedgerUnavailable(Exception):
    """The served ledger could not take the answer's row: the answer must not be given."""


def ledger_key(purpose: str) -> bytes:
    """The key of one use of the ledger ("fingerprint", "chain"): SERVED_LEDGER_KEY, else derived from SECRET_KEY."""
    secret = conf.get("SERVED_LEDGER_KEY") or settings.SECRET_KEY
    return hashlib.sha256(f"graph_memory.served_ledger.{purpose}\0{secret}".encode()).digest()


def query_fingerprint(query: Any) -> str:
    """HMAC-SHA256 of the request as canonical JSON (method, path, parameters, body): its text is never kept."""
    # ASCII escapes: a lone surrogate in a bad body still has a fingerprint (UTF-8 would refuse it).
    canonical = json.dumps(query, sort_keys=True, separators=(",", ":"), default=str)
    return hmac.new(ledger_key("fingerprint"), canonical.encode(), hashlib.sha256).hexdigest()


def status_for(http_status: int) -> str:
    if 200 <= http_status < 300:
        return ServedRow.Status.OK
    return _STATUSES.get(http_status, ServedRow.Status.ERROR if http_status >= 500 else ServedRow.Status.INVALID)


_CASE = Node.Kind.CASE.value
_NESTED = (dict, list, tuple)
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def case_node_ids(body: Any, *extra: Any) -> list[str]:
    """The case node ids an answer's body carries (plus `extra`, e.g. the case of its path), as UUID strings.

    Case nodes as every answer shows them ({"id", "kind": "case", ...}), and the memory index's
    reference -> case node id map. Only structured positions: a string the caller sent and the
    answer echoes (a `name`, a `question`) is never taken for a case.
    """
    # A loop over a stack, not nested generators: a conflict check's answer holds a thousand values.
    found: list[Any] = list(extra)
    stack = [body]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("kind") == _CASE and isinstance(item.get("id"), str):
                found.append(item["id"])
            for key, value in item.items():
                if key == "case_ids" and isinstance(value, dict):
                    found.extend(v for v in value.values() if isinstance(v, str))
                elif isinstance(value, _NESTED):
                    stack.append(value)
        elif isinstance(item, (list, tuple)):
            stack.extend(value for value in item if isinstance(value, _NESTED))
    return uuid_strings(found)


def uuid_strings(values: Iterable[Any]) -> list[str]:
    """The values that are UUIDs, in canonical form (lower case, hyphens), sorted and distinct; others dropped."""
    canonical: set[str] = set()
    for value in values:
        text = str(value)
        if _CANONICAL_UUID.fullmatch(text):
            canonical.add(text)
            continue
        try:
            canonical.add(str(uuid.UUID(text)))
        except ValueError:
            continue
    return sorted(canonical)


class _CaseNodes:
    """Case node id -> (firm id, case id), learnt from the rows' own lookups, so a node seen once is not looked
    up again. A node's id is the keyed digest of its firm, kind and record (map/graph.py, `node_uuid`): what an
    id stands for never changes, so nothing here can go stale; a node deleted since still names its case."""

    def __init__(self, size: int) -> None:
        self.known = Lru[str, tuple[int, int]](size)

    def split(self, firm_id: int, nodes: list[str]) -> tuple[list[int], list[str]]:
        """(the case ids of the known nodes that are cases of `firm_id`, the nodes not known yet)."""
        known = self.known.found(nodes)
        unknown = [node_id for node_id in nodes if node_id not in known]
        # Another firm's case is not a case of this row.
        return [case_id for firm, case_id in known.values() if firm == firm_id], unknown

    def forget(self, node_ids: Iterable[str]) -> None:
        """Not known any more: the next row naming them looks them up (what a new process does)."""
        self.known.discard(node_ids)

    def learn(self, firm_id: int, found: Iterable[tuple[Any, int]]) -> None:
        self.known.put((str(node_id), (firm_id, int(case_id))) for node_id, case_id in found)


case_nodes = _CaseNodes(size=100_000)  # about 20 MB when full

_INSERT = f"""
{{found}}INSERT INTO {ServedRow._meta.db_table} (firm_id, viewer_id, endpoint, status, at, query_fingerprint, case_ids)
SELECT %(firm)s, %(viewer)s, %(endpoint)s, %(status)s, %(at)s, %(fingerprint)s, {{cases}}{{commit}}{{returning}}
"""
# The row's cases, in the simplest form the call allows: planning is most of a one-row INSERT's cost.
_GIVEN = "%(case_ids)s::bigint[]"
# Nodes not known yet: the case nodes among them within the row's firm (a node of another kind or firm adds
# none), and the row returns them, to be known next time.
_FOUND = f"""WITH found AS MATERIALIZED (SELECT n.id, n.ref_id FROM {Node._meta.db_table} n
    WHERE n.id = ANY(%(case_node_ids)s::uuid[]) AND n.firm_id = %(firm)s AND n.kind = %(case_kind)s)
"""
_WITH_FOUND = "ARRAY(SELECT c FROM unnest(%(case_ids)s::bigint[]) x(c) UNION SELECT f.ref_id FROM found f ORDER BY 1)"
_RETURNING = "\nRETURNING (SELECT array_agg(f.id) FROM found f), (SELECT array_agg(f.ref_id) FROM found f)"
# The row's transaction (the statement's own, in autocommit) commits without waiting for its WAL flush:
# set from the statement itself, so the setting and the row cost one round trip (SET LOCAL needs a
# transaction of its own: three more). Local: it ends with that transaction.
_UNFLUSHED = " FROM (SELECT set_config('synchronous_commit', 'off', true)) AS gm_commit"


# A read's row as `Sent` sends it: the values are the protocol's text parameters ($1..$7), never SQL text.
_SENT = (
    f"INSERT INTO {ServedRow._meta.db_table} (firm_id, viewer_id, endpoint, status, at, query_fingerprint, case_ids)"
    " SELECT $1::bigint, $2::bigint, $3, $4, $5::timestamptz, $6, $7::bigint[]"
)


class Sent:
    """A row sent to the server, its answer not read yet: `confirm()` reads it.

    Between `send` and `confirm` nothing else may use the connection (the server's answer is still to be
    read), and `confirm` must be called, also when the caller's own work in between failed.
    """

    def __init__(self, pgconn: Any = None, statement: str = "") -> None:
        self.pgconn, self.statement, self.started = pgconn, statement, time.perf_counter()

    def confirm(self) -> None:
        """Wait for the server's answer: raises LedgerUnavailable if it did not take the row. Once; a row
        `record` wrote is confirmed already."""
        pgconn, self.pgconn = self.pgconn, None
        if pgconn is None:
            return
        error = None
        try:
            while pgconn.is_busy():
                _wait(pgconn.socket, selectors.EVENT_READ)
                pgconn.consume_input()
            while (result := pgconn.get_result()) is not None:
                if result.status != pq.ExecStatus.COMMAND_OK:
                    error = (result.error_message or b"the row was not written").decode(errors="replace")
        except DriverError as exc:
            error = str(exc)
            connection.errors_occurred = True  # Django checks the connection before it serves anything else
        if connection.queries_logged:  # as Django's debug cursor logs its statements
            connection.queries_log.append({"sql": self.statement, "time": f"{time.perf_counter() - self.started:.3f}"})
        if error is not None:
            raise LedgerUnavailable(error)


def _wait(socket: int, event: int) -> None:
    """Until the connection's socket is ready (`event`), without holding the GIL."""
    with selectors.DefaultSelector() as selector:
        selector.register(socket, event)
        selector.select()


def _idle_libpq() -> Any:
    """psycopg's libpq connection when a row can be sent on it now (autocommit, nothing in flight), else None."""
    if connection.in_atomic_block:
        return None  # a note's row commits with the note: `record`'s way, in its transaction
    connection.ensure_connection()
    pgconn = getattr(connection.connection, "pgconn", None)  # psycopg 3 (Django's psycopg2 backend: None)
    idle = (
        pgconn is not None
        and pgconn.transaction_status == pq.TransactionStatus.IDLE
        and pgconn.pipeline_status == pq.PipelineStatus.OFF
    )
    return pgconn if idle else None


def send(
    *,
    firm_id: int,
    viewer_id: int | None,
    endpoint: str,
    status: str,
    query: Any,
    case_ids: Iterable[int] = (),
    case_node_ids: Iterable[str] = (),
) -> Sent:
    """`record`'s row sent without waiting for it: the caller confirms it (`Sent.confirm`) before answering.

    A row whose case nodes are all known, outside a transaction, goes at once and is confirmed later;
    any other is written here, as `record` writes it (and raises LedgerUnavailable here).
    """
    known, unknown = case_nodes.split(firm_id, uuid_strings(case_node_ids))
    given = sorted({int(c) for c in (*case_ids, *known)})
    pgconn = None if unknown else _idle_libpq()
    if pgconn is None:
        _insert(firm_id=firm_id, viewer_id=viewer_id, endpoint=endpoint, status=status, query=query,
                given=given, unknown=unknown)  # fmt: skip
        return Sent()
    statement = _SENT + ("" if conf.get("SERVED_LEDGER_SYNCHRONOUS_COMMIT") else _UNFLUSHED)
    values = [
        str(int(firm_id)).encode(),
        None if viewer_id is None else str(int(viewer_id)).encode(),
        endpoint[:100].encode(),
        status.encode(),
        timezone.now().isoformat().encode(),
        query_fingerprint(query).encode(),
        ("{" + ",".join(map(str, given)) + "}").encode(),
    ]
    sent = Sent(pgconn, statement)
    try:
        pgconn.send_query_params(statement.encode(), values)
        while pgconn.flush():  # what did not fit the socket's buffer: wait until it takes more
            _wait(pgconn.socket, selectors.EVENT_WRITE)
    except DriverError as exc:
        connection.errors_occurred = True
        raise LedgerUnavailable(str(exc)) from exc
    return sent


def record(
    *,
    firm_id: int,
    viewer_id: int | None,
    endpoint: str,
    status: str,
    query: Any,
    case_ids: Iterable[int] = (),
    case_node_ids: Iterable[str] = (),
) -> None:
    """Append one unsealed row: one INSERT, no lock, no read of the chain.

    `case_node_ids` must come from what the answer showed the viewer (never
    from what they asked for): they are resolved to case ids within `firm_id`
    (a value that is not a UUID is no node, and is dropped); a case node
    resolved once is known to the process from then on (`_CaseNodes`).
    Raises LedgerUnavailable when the row cannot be written; inside a
    transaction that transaction is then marked for rollback, so nothing the
    request wrote outlives its missing row.
    """
    known, unknown = case_nodes.split(firm_id, uuid_strings(case_node_ids))
    given = sorted({int(c) for c in (*case_ids, *known)})
    _insert(firm_id=firm_id, viewer_id=viewer_id, endpoint=endpoint, status=status, query=query,
            given=given, unknown=unknown)  # fmt: skip


def _insert(
    *, firm_id: int, viewer_id: int | None, endpoint: str, status: str, query: Any, given: list[int], unknown: list[str]
) -> None:
    """`record`'s INSERT, through a Django cursor: the row's case ids `given`, and the case nodes not known yet
    (`unknown`) looked up in the map and learnt from its RETURNING."""
    # Inside a transaction (a note's) the row commits with it, as the transaction's own setting says.
    unflushed = not conf.get("SERVED_LEDGER_SYNCHRONOUS_COMMIT") and not connection.in_atomic_block
    insert = sql(
        _INSERT, firm=firm_id, viewer=viewer_id, endpoint=endpoint[:100], status=status, at=timezone.now(),
        fingerprint=query_fingerprint(query), case_ids=given, case_kind=_CASE,
        # One array literal (canonical UUIDs only, so nothing in it is a comma or a brace): a hundred
        # strings quoted one by one cost the driver more than the row's INSERT costs the server.
        case_node_ids="{" + ",".join(unknown) + "}",
        found=_FOUND if unknown else "", cases=_WITH_FOUND if unknown else _GIVEN,
        commit=_UNFLUSHED if unflushed else "", returning=_RETURNING if unknown else "",
    )  # fmt: skip
    try:
        with connection.cursor() as cursor:
            insert.execute(cursor)
            found = cursor.fetchone() if unknown else None
    except DatabaseError as exc:
        if connection.in_atomic_block:
            transaction.set_rollback(True)
        raise LedgerUnavailable(str(exc)) from exc
    if found is not None and found[0]:
        case_nodes.learn(firm_id, zip(found[0], found[1], strict=True))


def served_rows(
    *,
    firm_id: int,
    viewer_id: int | None = None,
    case_id: int | None = None,
    since: dt.datetime | None = None,
    until: dt.datetime | None = None,
) -> QuerySet[ServedRow]:
    """What the memory showed, in one firm: optionally to one viewer, about one case, in [since, until).

    "What did the memory show user U about case X between T1 and T2" is
    `served_rows(firm_id=F, viewer_id=U, case_id=X, since=T1, until=T2)`: the
    rows whose answers drew on X (only answers that showed X: a 404 names no case).
    """
    rows = ServedRow.objects.filter(firm_id=firm_id)
    return narrowed(rows, viewer_id=viewer_id, case_id=case_id, since=since, until=until).order_by("at", "id")


def narrowed(
    rows: QuerySet[ServedRow],
    *,
    viewer_id: int | None = None,
    case_id: int | None = None,
    since: dt.datetime | None = None,
    until: dt.datetime | None = None,
) -> QuerySet[ServedRow]:
    """`rows` to one viewer, about one case, in [since, until): each only when given."""
    if viewer_id is not None:
        rows = rows.filter(viewer_id=viewer_id)
    if case_id is not None:
        rows = rows.filter(case_ids__contains=[case_id])
    if since is not None:
        rows = rows.filter(at__gte=since)
    if until is not None:
        rows = rows.filter(at__lt=until)
    return rows


def parse_moment(value: str) -> dt.datetime:
    """An ISO date or date-time as an aware datetime: a bare date is its midnight, a naive time is UTC.

    Raises ValueError naming the value when it is neither.
    """
    moment = parse_datetime(value.strip())
    if moment is None:
        day = parse_date(value.strip())
        if day is None:
            raise ValueError(f"{value!r} is not an ISO date or date-time (2026-03-03 or 2026-03-03T14:00Z)")
        moment = dt.datetime.combine(day, dt.time())
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
