"""The ledger as people read it: labels for its ids, and CSV, for admin and `manage.py memory_access`.

The rows keep ids only. A label is looked up when the rows are shown, in a
fixed number of queries: a case of the firm by the adapter's `case_label`, a
user by `str()`, a group by its name. A case that no longer exists is shown as
"[deleted case] #<id>" (nothing of it was ever kept), one now in another firm
as "[case #<id>, moved to another firm]" (its title is that firm's now), a
deleted user or group likewise.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from graph_memory.adapter import case_firm_attname, case_model, get_adapter
from graph_memory.ledger.history import Answer
from graph_memory.models import AccessChange

DELETED_CASE = "[deleted case]"


@dataclass
class Labels:
    cases: dict[int, str] = field(default_factory=dict)
    users: dict[int, str] = field(default_factory=dict)
    groups: dict[int, str] = field(default_factory=dict)

    def case(self, case_id: int | None) -> str:
        return "" if case_id is None else self.cases.get(case_id, f"{DELETED_CASE} #{case_id}")

    def user(self, user_id: int | None) -> str:
        return "" if user_id is None else self.users.get(user_id, f"[deleted user] #{user_id}")

    def group(self, group_id: int | None) -> str:
        return "" if group_id is None else self.groups.get(group_id, f"[deleted group] #{group_id}")

    def why(self, reasons: Iterable[str]) -> str:
        shown = []
        for reason in reasons:
            if reason.startswith("group:"):
                shown.append(f"group {self.group(int(reason[6:]))}")
            else:
                shown.append({"owner": "owner", "team": "team grant", "firm_admin": "firm admin"}.get(reason, reason))
        return ", ".join(shown)


def labels(*, firm_id: int, case_ids: Iterable[int], user_ids: Iterable[int], group_ids: Iterable[int]) -> Labels:
    """Labels of these ids as seen from firm `firm_id` (at most four queries)."""
    found = Labels()
    case_ids, user_ids, group_ids = set(case_ids) - {None}, set(user_ids) - {None}, set(group_ids) - {None}
    adapter = get_adapter()
    if case_ids:
        cases = case_model()._default_manager.filter(pk__in=case_ids)
        ours = {c.pk: c for c in cases.filter(**{case_firm_attname(): firm_id})}
        found.cases = {pk: adapter.case_label(case) for pk, case in ours.items()}
        for pk in cases.exclude(pk__in=list(ours)).values_list("pk", flat=True):
            found.cases[pk] = f"[case #{pk}, moved to another firm]"
    if user_ids:
        found.users = {u.pk: str(u) for u in get_user_model()._default_manager.filter(pk__in=user_ids)}
    if group_ids:
        found.groups = dict(Group.objects.filter(pk__in=group_ids).values_list("pk", "name"))
    return found


def answer_labels(answer: Answer, *, firm_id: int, by: str) -> Labels:
    """Labels for an answer keyed by viewer (`by="viewer"`) or by case (`by="case"`)."""
    groups = {int(w[6:]) for a in answer.rows for p in a.periods for w in p.why if w.startswith("group:")}
    ids = [a.id for a in answer.rows]
    return labels(
        firm_id=firm_id, case_ids=ids if by == "case" else [], user_ids=ids if by == "viewer" else [], group_ids=groups
    )


def _time(value: Any) -> str:
    return "" if value is None else timezone.localtime(value).isoformat()


ANSWER_HEADER = ["id", "name", "from", "until", "why"]


def answer_rows(
    answer: Answer, *, names: Labels, by: str, time: Callable[[Any], str] = _time
) -> list[list[str]]:
    """One row per period: the viewer's (or case's) id and label, when it began and ended, and why. Times are
    ISO 8601 with their offset (CSV) unless `time` says otherwise (admin's page: labelled, in the firm's zone)."""
    name = names.user if by == "viewer" else names.case
    return [
        [str(a.id), name(a.id), time(p.start) if p.start else "", time(p.end) if p.end else "", names.why(p.why)]
        for a in answer.rows
        for p in a.periods
    ]


CHANGE_HEADER = [
    "at",
    "firm_id",
    "kind",
    "granted",
    "reason",
    "case_id",
    "case",
    "viewer_id",
    "viewer",
    "group_id",
    "group",
]


def change_rows(changes: list[AccessChange], *, names: dict[int, Labels]) -> list[list[str]]:
    """The ledger's own rows, with labels (`names`: per firm)."""
    rows = []
    for c in changes:
        n = names.get(c.firm_id or 0, Labels())
        rows.append([
            _time(c.at), str(c.firm_id or ""), c.kind, "granted" if c.granted else "ended", c.reason,
            str(c.case_id or ""), n.case(c.case_id), str(c.viewer_id or ""), n.user(c.viewer_id),
            str(c.group_id or ""), n.group(c.group_id),
        ])  # fmt: skip
    return rows


def change_labels(changes: list[AccessChange]) -> dict[int, Labels]:
    """Labels of rows, per firm (four queries per firm among them)."""
    by_firm: dict[int, list[AccessChange]] = {}
    for c in changes:
        by_firm.setdefault(c.firm_id or 0, []).append(c)
    found = {}
    for firm_id, rows in by_firm.items():
        ids = {"case_ids": [c.case_id for c in rows], "user_ids": [c.viewer_id for c in rows]}
        found[firm_id] = labels(firm_id=firm_id, group_ids=[c.group_id for c in rows], **ids)
    return found


def to_csv(header: list[str], rows: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    # A cell a spreadsheet would run as a formula is written as text.
    writer.writerows([[f"'{v}" if v[:1] in ("=", "+", "-", "@") else v for v in row] for row in rows])
    return out.getvalue()


# --- what people type: a case, a user, a time ---------------------------------------------------


def moment(value: str, *, tz: Any, end_of_day: bool = False) -> dt.datetime | None:
    """A time typed in admin ("2026-03-03 14:00" or "2026-03-03"), in the firm's time zone; None if blank."""
    value = value.strip()
    if not value:
        return None
    try:
        # A date alone first: parse_datetime would read it as its midnight.
        day = parse_date(value)
        parsed = parse_datetime(value.replace("T", " ")) if day is None else None
    except ValueError:
        day = parsed = None
    if day is not None:
        parsed = dt.datetime.combine(day, dt.time.max if end_of_day else dt.time.min)
    if parsed is None:
        raise ValueError(f"not a date or time: {value!r}")
    return timezone.make_aware(parsed, tz) if timezone.is_naive(parsed) else parsed


def _in_ledger(firm_id: int, **ids: int | None) -> int | None:
    """The id if the firm's ledger has a row naming it (else None): nothing of another firm is told apart
    from what does not exist."""
    [(field, value)] = ids.items()
    if value is None or not AccessChange.objects.filter(firm_id=firm_id, **{field: value}).exists():
        return None
    return value


def case_id_of(value: str, *, firm_id: int) -> int | None:
    """A case of the firm by its reference, or by its id (a deleted case has only its id)."""
    value = value.strip()
    found = get_adapter().case_id_by_reference(firm_id=firm_id, reference=value) if value else None
    if found is None and value.isdigit():
        found = int(value)
    return _in_ledger(firm_id, case_id=found)


def user_id_of(value: str, *, firm_id: int) -> int | None:
    """A user the firm's ledger names, by their username or id."""
    value = value.strip()
    User = get_user_model()
    found = User._default_manager.filter(**{User.USERNAME_FIELD: value}).values_list("pk", flat=True).first()
    if found is None and value.isdigit():
        found = int(value)
    return _in_ledger(firm_id, viewer_id=found)
