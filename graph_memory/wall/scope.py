"""A viewer's scope, decided once per read, and the one place a read forks on it.

- `Scope`: who is asking, in which firm, whether they see the whole firm (a
  firm admin), the statement of the cases they may open (`access`) and whether
  their reads may answer from the sight. Built by `scope_of(viewer)`, once.
- `Read`: one read's statements side by side: a firm admin's (from what
  matches: nothing of the firm is hidden from them), a walled one (from the
  viewer's cases, so hidden rows cost nothing), and a sighted one (from the
  viewer's rows of the sight, while the triggers keep it current) or the
  reason the sight does not serve it.
- `rows(scope, read, **names)`: runs the one that fits the scope. It owns the
  fork, the sight's freshness gate and the rebuild queued after a stale answer,
  and, for a read with a statement for few cases (`few`), which lawyers get it.

Every template may use `{visible}` (the viewer's cases, one column; `{visible_listed}`
names the same cases in the form that lists them all fastest), `%(firm)s`
(their firm's id), `%(whole_firm)s` and, in a sighted statement, `{holders}`
(the viewer and their groups, the sight's keys): `rows()` supplies them. A
read with a cap may also use `{grants_past}`, which it asks for itself
(`Scope.grants_past()`).
`may_open(case)` is the join that probes `{visible}` for one row's case;
`VISIBLE_ONCE` the CTE `vis` that lists them once, from `{visible_listed}`, for a read
that reads them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection

from graph_memory.adapter import Viewer
from graph_memory.plumbing.lru import Lru
from graph_memory.plumbing.stmt import Stmt, sql
from graph_memory.wall import access, sight


@dataclass(frozen=True)
class Scope:
    """What the wall decided about one viewer for one read."""

    viewer: Viewer
    firm_id: int | None  # None: not a viewer of any firm (anonymous, inactive, no firm)
    whole_firm: bool  # a firm admin: no case of the firm is hidden from them
    visible: Stmt | None  # the ids of the cases they may open, one column; None: no case at all
    sighted: bool  # a lawyer on a host whose grants the sight keeps: their reads may answer from it
    grants: access.Grants | None = None  # their guardian grants' tables, asked once (None: a firm admin, no guardian)

    @property
    def empty(self) -> bool:
        return self.visible is None

    def grants_past(self) -> dict[str, Any]:
        """`{grants_past}` and its values, for a read that asks it (access.grants_past_sql): a condition that
        holds only if they may open more cases than the read's own part `{than}` says, settled from one
        source of their grants without listing them all. Only the reads with a cap ask it."""
        return access.grants_past_sql(self.viewer, self.grants)

    def holders(self) -> Stmt:
        """The viewer's keys in the sight: themselves and their groups (no parameters)."""
        return Stmt(sight.holders_sql(self.viewer))


def scope_of(viewer: Viewer) -> Scope:
    """The viewer's scope: each of the wall's inputs asked once."""
    firm_id = access.viewer_firm_id(viewer)
    if firm_id is None:
        return Scope(viewer=viewer, firm_id=None, whole_firm=False, visible=None, sighted=False)
    whole_firm = access.is_firm_admin(viewer)
    grants = None if whole_firm else access.guardian_grants()
    visible = access.visible_case_ids_sql(viewer, firm_id=firm_id, whole_firm=whole_firm, grants=grants)
    return Scope(
        viewer=viewer,
        firm_id=firm_id,
        whole_firm=whole_firm,
        visible=None if visible is None else Stmt(*visible),
        sighted=not whole_firm and sight.enabled(),
        grants=grants,
    )


def may_open(case: str) -> str:
    """A template's join that keeps a row only if the viewer may open its case (`case`: that case's id, as
    SQL over the row): one probe of `{visible}` per candidate row.

    LATERAL with LIMIT 1 makes PostgreSQL probe the access statement once per candidate (an index lookup
    or two) instead of first listing every case the viewer may open: a read that checks its candidates in
    order until its page is full touches far fewer cases than a large firm holds. Every read that probes
    the wall per candidate uses it: a firm admin's reads (wall/reads.py), the word search past the cap
    (viewer/search.py), and the sighted reads, which check each row of the sight once more against the wall.
    """
    return f"CROSS JOIN LATERAL (SELECT 1 FROM ({{visible}}) v(id) WHERE v.id = {case} LIMIT 1) may_open"


# The CTE `vis`: the viewer's cases listed once (MATERIALIZED: computed once however often the read refers
# to it, and never if it does not), in the wall's form for listing them all (`{visible_listed}`: the same
# cases as `{visible}`, access.visible_listed_sql).
VISIBLE_ONCE = "vis AS MATERIALIZED (SELECT v.id FROM ({visible_listed}) AS v(id))"


_DECLARED: dict[str, Read] = {}


@dataclass(frozen=True)
class Read:
    """A read's statements, one per kind of viewer, each a template for `sql()` returning `columns` columns.

    Every Read is declared once, at import, under a name of its own (`declared()` lists them: the wall
    proof checks that each of their statements ran under its probes)."""

    name: str
    columns: int
    whole_firm: str  # a firm admin's: from what matches, the wall probed per row (nothing is hidden)
    walled: str  # anyone else's: from the cases they may open (`{visible}`)
    sighted: str | None = None  # anyone else's from their rows of the sight (`{holders}`), while it is current
    unsighted: str = ""  # with no sighted statement: why the sight would not serve this read
    # Anyone else's while they were last seen to open few enough cases for the read's cap: `walled` without
    # the paths past the cap, so shorter to parse and plan. With it, every row of both walled statements
    # starts with whether the viewer is within the cap; `few` answers nothing past it (`rows` then runs
    # `walled`). Neither is ever wrong for any viewer: the choice only decides what is planned.
    few: str | None = None
    few_by: tuple[str, ...] = ()  # the names whose values set the cap: with other values, a viewer is asked anew

    def __post_init__(self) -> None:
        if self.name in _DECLARED:
            raise ValueError(f"a read named {self.name!r} is declared already")
        if (self.sighted is None) == (not self.unsighted):
            raise ValueError(f"read {self.name!r}: a sighted statement, or the reason it has none (unsighted)")
        if self.few is not None and self.sighted is not None:
            raise ValueError(f"read {self.name!r}: a statement for few cases is for a read the sight does not serve")
        _DECLARED[self.name] = self


def declared() -> tuple[Read, ...]:
    """Every Read of the modules imported so far (all of them once `graph_memory.services` is)."""
    return tuple(_DECLARED.values())


def _given(scope: Scope, names: dict[str, Any]) -> dict[str, Any]:
    """The names every template may use, from the scope, and the read's own. `{visible_listed}` is a
    template, built only by a statement that names it (`VISIBLE_ONCE`)."""
    listed = access.visible_listed_sql(scope.viewer, scope.grants) or {"visible_listed": scope.visible}
    return {"firm": scope.firm_id, "visible": scope.visible, "whole_firm": scope.whole_firm, **listed, **names}


def statement(scope: Scope, read: Read, **names: Any) -> Stmt:
    """The statement of `read` for this scope, for use inside another (a brief's query): a firm admin's, or
    for anyone else the sighted one while the sight is current and the walled one otherwise, chosen by the
    statement itself (a one-time filter: the other is never run)."""
    if scope.visible is None:
        raise ValueError("a scope with no visible case has no statement; ask scope.empty first")
    given = _given(scope, names)
    if scope.whole_firm:
        return sql(read.whole_firm, **given)
    walled = sql(read.walled, **given)
    if read.sighted is None or not scope.sighted:
        return walled
    sighted = sql(read.sighted, holders=scope.holders(), **given)
    return sight.gated(sighted=sighted, walled=walled)


def rows(scope: Scope, read: Read, **names: Any) -> list[tuple[Any, ...]]:
    """The rows of `read` for this scope; none for a viewer who may open nothing.

    One statement for a firm admin, for a walled read, and for a sighted read
    while the sight is current. A sighted read on a sight that is not current
    answers from the walled statement (a second statement) and queues the
    sight's rebuild after the commit.
    """
    return columns_and_rows(scope, read, **names)[1]


def columns_and_rows(scope: Scope, read: Read, **names: Any) -> tuple[list[str], list[tuple[Any, ...]]]:
    """`rows`, with the names of the columns (to build model instances from them)."""
    if scope.visible is None:
        return [], []
    given = _given(scope, names)
    if not scope.whole_firm and read.sighted is not None and scope.sighted:
        sighted = sql(read.sighted, holders=scope.holders(), **given)
        found, columns = sight.answer(sighted=sighted, walled=sql(read.walled, **given), columns=read.columns)
        return columns, found
    if read.few is not None and not scope.whole_firm:
        return _few_or_walled(scope, read, given)
    return _run(sql(read.whole_firm if scope.whole_firm else read.walled, **given))


def _run(statement: Stmt) -> tuple[list[str], list[tuple[Any, ...]]]:
    with connection.cursor() as cursor:
        statement.execute(cursor)
        return [c.name for c in cursor.description], cursor.fetchall()


# Per process: the lawyers whose last walled read with a cap found them within it, keyed by the read, the
# firm, the viewer and the names that set the cap. What a lawyer may open changes seldom, so their next read
# sends the statement for few cases. Only a statement's own first column fills it, never a guess; a lawyer
# not in it (first seen, forgotten, or last found past the cap) gets the walled statement, which says again
# where they stand. It holds ids of viewers who asked, nothing of any case, and decides only which correct
# statement is planned.
few_viewers = Lru[tuple[Any, ...], None](100_000)


def _few_or_walled(scope: Scope, read: Read, given: dict[str, Any]) -> tuple[list[str], list[tuple[Any, ...]]]:
    """A read with a statement for few cases: that one for a lawyer last found within the cap, the walled
    one for anyone else or when `few` finds them past it; what the walled one finds is remembered."""
    assert scope.firm_id is not None and read.few is not None
    key = (read.name, scope.firm_id, scope.viewer.pk, *(given[name] for name in read.few_by))
    if key in few_viewers:
        columns, found = _run(sql(read.few, **given))
        if found[0][0]:
            return columns, found
    columns, found = _run(sql(read.walled, **given))
    if found[0][0]:
        few_viewers.put([(key, None)])
    else:
        few_viewers.discard([key])
    return columns, found
