"""The two questions a firm answers from the access ledger, at a moment or over a range of time.

"Who could open case X's memory, and why" and "which cases could user U
open". Each reads the firm's rows that bear on the question (a fixed number
of indexed queries, every one filtered on the firm), replays them in order,
and applies the wall's rule (`graph_memory.wall.access`) after each transaction:
a viewer may open a case while they are an active user of its firm and the
case is one of the firm's and not excluded from the memory (consent: nobody
may open the memory of an excluded case, whatever else holds), and they are
its firm's admin, hold a grant to it, or are in a group that holds one. A moment T counts every change made by a
transaction that began at or before T (rows carry their transaction's time).

The answer lists, per viewer (or case), the periods of access that overlap
the range asked, each with when it began and ended (None: it still held at
the end of the range) and why: "owner" or "team" (a grant to the user; owner
when they owned the case then), "group:<id>", "firm_admin". A firm's ledger
knows nothing before its first row (`Answer.since`); on a host without
django-guardian, grants are not recorded (`Answer.grants_recorded` is False)
and only firm admins are found.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from django.db.models import Min

from graph_memory.adapter import get_adapter
from graph_memory.models import AccessChange

K = AccessChange.Kind
_COLUMNS = ("id", "at", "kind", "granted", "case_id", "viewer_id", "group_id", "reason")


@dataclass(frozen=True)
class Period:
    start: dt.datetime
    end: dt.datetime | None  # None: still held at the end of the range asked
    why: tuple[str, ...]


@dataclass(frozen=True)
class Access:
    """One viewer's (or case's) periods of access in the range asked."""

    id: int
    periods: tuple[Period, ...]


@dataclass(frozen=True)
class Answer:
    rows: list[Access]
    start: dt.datetime
    end: dt.datetime
    since: dt.datetime | None  # the firm's first row: before it the ledger knows nothing
    grants_recorded: bool


@dataclass
class _State:
    users: dict[int, bool] = field(default_factory=dict)
    admins: dict[int, bool] = field(default_factory=dict)
    cases: dict[int, bool] = field(default_factory=dict)
    # Memory consent apart from the case's own rows: a case created, or moved back, while its client is
    # excluded stays out, and re-including a case deleted meanwhile does not bring it back.
    excluded: set[int] = field(default_factory=set)
    owners: set[tuple[int, int]] = field(default_factory=set)
    grants: set[tuple[int, int]] = field(default_factory=set)
    group_grants: dict[int, set[int]] = field(default_factory=dict)  # case -> groups
    groups_of: dict[int, set[int]] = field(default_factory=dict)  # viewer -> groups

    def apply(self, row: tuple[Any, ...]) -> None:
        _, _, kind, granted, case_id, viewer_id, group_id, reason = row

        def put(target: set[Any], item: Any) -> None:
            (target.add if granted else target.discard)(item)

        if kind == K.CASE and reason == AccessChange.Reason.CONSENT:
            (self.excluded.discard if granted else self.excluded.add)(case_id)
        elif kind == K.CASE:
            self.cases[case_id] = granted
        elif kind == K.USER:
            self.users[viewer_id] = granted
        elif kind == K.FIRM_ADMIN:
            self.admins[viewer_id] = granted
        elif kind == K.OWNER:
            put(self.owners, (viewer_id, case_id))
        elif kind == K.USER_GRANT:
            put(self.grants, (viewer_id, case_id))
        elif kind == K.GROUP_GRANT:
            put(self.group_grants.setdefault(case_id, set()), group_id)
        elif kind == K.MEMBERSHIP:
            put(self.groups_of.setdefault(viewer_id, set()), group_id)

    def why(self, viewer_id: int, case_id: int) -> tuple[str, ...]:
        """Why the viewer may open the case now (empty: they may not): the wall's rule."""
        if not self.users.get(viewer_id) or not self.cases.get(case_id) or case_id in self.excluded:
            return ()
        reasons = []
        if (viewer_id, case_id) in self.grants:
            reasons.append("owner" if (viewer_id, case_id) in self.owners else "team")
        groups = self.group_grants.get(case_id, set()) & self.groups_of.get(viewer_id, set())
        reasons += [f"group:{g}" for g in sorted(groups)]
        if self.admins.get(viewer_id):
            reasons.append("firm_admin")
        return tuple(reasons)


def _range(start: dt.datetime, end: dt.datetime | None) -> tuple[dt.datetime, dt.datetime]:
    end = start if end is None else end
    if start.tzinfo is None or end.tzinfo is None:
        raise ValueError("give times with their time zone")
    if end < start:
        raise ValueError("the range ends before it starts")
    return start, end


def _replay(
    rows: Iterable[tuple[Any, ...]], *, why: Callable[[_State, int], tuple[str, ...]],
    touched: Callable[[tuple[Any, ...]], int | None], start: dt.datetime, end: dt.datetime,
) -> list[Access]:  # fmt: skip
    """Replay rows (ordered by time, then id) transaction by transaction; the periods of each key that
    overlap [start, end]. `touched(row)` is the one key a row can change, None for any key."""
    state = _State()
    keys: set[int] = set()
    current: dict[int, tuple[dt.datetime, tuple[str, ...]]] = {}
    periods: dict[int, list[Period]] = {}
    for at, batch in groupby(rows, key=lambda row: row[1]):
        changed: set[int] | None = set()
        for row in batch:
            state.apply(row)
            key = touched(row)
            if key is None:
                changed = None
            elif changed is not None:
                changed.add(key)
            keys |= {key} if key is not None else set()
        for key in keys if changed is None else changed:
            now = why(state, key)
            before = current.get(key)
            if before is not None and before[1] == now:
                continue
            if before is not None:
                periods.setdefault(key, []).append(Period(before[0], at, before[1]))
                del current[key]
            if now:
                current[key] = (at, now)
    for key, (since, now) in current.items():
        periods.setdefault(key, []).append(Period(since, None, now))
    answer = []
    for key in sorted(periods):
        kept = tuple(p for p in periods[key] if p.start <= end and (p.end is None or p.end > start))
        if kept:
            answer.append(Access(key, kept))
    return answer


def _ordered(*parts: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The rows of every part once each, by time then id (a row may be in two parts)."""
    rows = {row[0]: row for part in parts for row in part}
    return sorted(rows.values(), key=lambda row: (row[1], row[0]))


def _answer(firm_id: int, rows: list[Access], start: dt.datetime, end: dt.datetime) -> Answer:
    since = AccessChange.objects.filter(firm_id=firm_id).aggregate(first=Min("at"))["first"]
    recorded = get_adapter().guardian_permissions() is not None
    return Answer(rows=rows, start=start, end=end, since=since, grants_recorded=recorded)


def who_could_open(*, firm_id: int, case_id: int, start: dt.datetime, end: dt.datetime | None = None) -> Answer:
    """Who could open case `case_id` of firm `firm_id` at `start` (or at any time from `start` to `end`), and
    why: one `Access` per viewer (its `id`). At most five queries, each on the firm's rows."""
    start, end = _range(start, end)
    firm = AccessChange.objects.filter(firm_id=firm_id, at__lte=end).order_by()
    own = list(firm.filter(case_id=case_id).values_list(*_COLUMNS))
    admins = list(firm.filter(kind=K.FIRM_ADMIN).values_list(*_COLUMNS))
    groups = {row[6] for row in own if row[2] == K.GROUP_GRANT}
    members = list(firm.filter(kind=K.MEMBERSHIP, group_id__in=groups).values_list(*_COLUMNS)) if groups else []
    viewers = {row[5] for row in [*own, *members, *admins] if row[5] is not None}
    users = list(firm.filter(kind=K.USER, viewer_id__in=viewers).values_list(*_COLUMNS)) if viewers else []
    rows = _ordered(own, admins, members, users)
    everyone = (K.CASE, K.GROUP_GRANT)
    answer = _replay(
        rows, why=lambda state, viewer_id: state.why(viewer_id, case_id),
        touched=lambda row: None if row[2] in everyone else row[5], start=start, end=end,
    )  # fmt: skip
    return _answer(firm_id, answer, start, end)


def cases_open_to(*, firm_id: int, viewer_id: int, start: dt.datetime, end: dt.datetime | None = None) -> Answer:
    """Which cases of firm `firm_id` user `viewer_id` could open at `start` (or at any time from `start` to
    `end`), and why: one `Access` per case (its `id`). At most four queries, each on the firm's rows."""
    start, end = _range(start, end)
    firm = AccessChange.objects.filter(firm_id=firm_id, at__lte=end).order_by()
    own = list(firm.filter(viewer_id=viewer_id).values_list(*_COLUMNS))
    groups = {row[6] for row in own if row[2] == K.MEMBERSHIP}
    granted = list(firm.filter(kind=K.GROUP_GRANT, group_id__in=groups).values_list(*_COLUMNS)) if groups else []
    cases = firm.filter(kind=K.CASE)
    if not any(row[2] == K.FIRM_ADMIN and row[3] for row in own):  # an admin's answer is every case of the firm
        cases = cases.filter(case_id__in={row[4] for row in [*own, *granted] if row[4] is not None})
    rows = _ordered(own, granted, list(cases.values_list(*_COLUMNS)))
    everyone = (K.USER, K.FIRM_ADMIN, K.MEMBERSHIP)
    answer = _replay(
        rows, why=lambda state, case_id: state.why(viewer_id, case_id),
        touched=lambda row: None if row[2] in everyone else row[4], start=start, end=end,
    )  # fmt: skip
    return _answer(firm_id, answer, start, end)
