"""The wall: which cases a viewer may open. Nothing else decides visibility.

A viewer may open a case when they own it or are on its team (stored by the
host as django-guardian's direct foreign-key object permission, kept in sync
by the host, or given by the host's own `member_case_ids`), or when they are
an admin of the case's firm. Nobody sees another firm's cases: not firm
admins, not superusers (platform operators use Django admin, not the
assistant's read paths). The inputs come from the host's adapter; the rule
is here and only here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import BooleanField, F, Func, QuerySet
from django.db.models.expressions import RawSQL

from graph_memory.adapter import GuardianPermissions, NotSupported, Viewer, case_firm_column, case_model, get_adapter
from graph_memory.adapter import firm_cases as firm_cases_of
from graph_memory.plumbing.stmt import Stmt, sql


class NotFound(Exception):
    """Raised for anything the viewer may not see *and* for anything that does not exist.

    The two cases are deliberately one exception with one message, so that no
    caller can tell them apart.
    """

    message = "Not found."

    def __str__(self) -> str:
        return self.message


def viewer_firm_id(viewer: Viewer | None) -> int | None:
    """The firm whose cases an authenticated, active viewer may be shown (None: nothing at all)."""
    if viewer is None or not getattr(viewer, "is_authenticated", False) or not getattr(viewer, "is_active", False):
        return None
    return get_adapter().viewer_firm_id(viewer)


@functools.cache
def _guardian_sql(permissions: GuardianPermissions, case_table: str, firm_column: str, groups_table: str) -> str:
    """The visible-cases statement for a lawyer, from guardian's direct foreign-key tables.

    It starts from the viewer's own grants, never from the firm's cases, so
    listing what a lawyer may open costs what they may open, not what the firm
    holds (issue 15: the time of an answer must not depend on hidden cases):
    a range of guardian's unique (user, permission, object) index, then per
    granted case one probe of its firm (a scalar subquery, which the planner
    cannot turn into a scan of every case). Used as a probe (`WHERE id = x`),
    the planner pushes the id into each branch: one index probe per branch.
    Hand-written rather than compiled from a QuerySet on every read: Django
    spent more time compiling it, and PostgreSQL planning it, than answering
    it. A template (plumbing/stmt.py) of `%(user)s`, `%(permission)s` and `%(firm)s`.
    """
    granted = " UNION ".join(_grant_sources(permissions, groups_table, user="%(user)s", permission="%(permission)s"))
    return _in_firm(f"({granted})", case_table, firm_column)


def _grant_sources(permissions: GuardianPermissions, groups_table: str, *, user: str, permission: str) -> list[str]:
    """The statements of the case ids granted to the user `user` (SQL): their own grants, then their groups'
    (when group grants count), one statement each. Both forms of the wall (`_guardian_sql`, which probes
    well, and `_guardian_listed_sql`, which lists well) are built from these and nothing else."""
    q = connection.ops.quote_name
    sources = [
        f"SELECT up.content_object_id FROM {q(permissions.user_model._meta.db_table)} up "
        f"WHERE up.user_id = {user} AND up.permission_id = {permission}"
    ]
    if permissions.group_model is not None:
        sources.append(
            f"SELECT gp.content_object_id FROM {q(permissions.group_model._meta.db_table)} gp JOIN {q(groups_table)} ug "
            f"ON ug.group_id = gp.group_id WHERE ug.user_id = {user} AND gp.permission_id = {permission}"
        )
    return sources


@functools.cache
def _guardian_listed_sql(permissions: GuardianPermissions, case_table: str, firm_column: str, groups_table: str) -> str:
    """`_guardian_sql`'s cases, in the form that lists them all at once (`{visible_listed}`, for `vis`).

    The same grants (`_grant_sources`, with repeats: UNION ALL) become one array, and the case table is
    read by primary key for them, in the firm: an index scan that sorts the array and drops its repeats
    itself, each case a row of the case table once. For a lawyer who may open thousands of cases it is
    several times cheaper than `_guardian_sql`, whose UNION hashes every grant and which probes each
    case's firm on its own; but it reads every grant before it can test a single case, so a read that
    probes the wall for a few cases uses `_guardian_sql` (`{visible}`). Values: `%(gm_user)s`,
    `%(gm_permission)s`, `%(firm)s`.
    """
    q = connection.ops.quote_name
    granted = " UNION ALL ".join(_grant_sources(permissions, groups_table, user="%(gm_user)s", permission="%(gm_permission)s"))
    return f"SELECT c.id FROM {q(case_table)} c WHERE c.id = ANY(ARRAY({granted})) AND c.{q(firm_column)} = %(firm)s"


# The id of the permission that opens a case, per database and codename. A permission's id does not
# change once it is made, so it is read once per process, as Django's ContentType cache reads
# content type ids, and forgotten after every migrate and flush (`forget_permission_ids`, on
# post_migrate: they are what recreate permissions). Written into the statement as a number, it
# spares PostgreSQL planning two nested lookups (auth_permission, django_content_type) in every
# read of every lawyer (issue 14). Should the permission be missing, no id is kept and the
# statement matches no grant: the viewer sees nothing until it exists.
_permission_ids: dict[tuple[str, str, str], int] = {}


def _permission_id(codename: str) -> int | None:
    model = case_model()
    key = (connection.alias, model._meta.label_lower, codename)
    if key not in _permission_ids:
        found = (
            Permission.objects.filter(content_type=ContentType.objects.get_for_model(model), codename=codename)
            .values_list("pk", flat=True)
            .first()
        )
        if found is None:
            return None
        _permission_ids[key] = found
    return _permission_ids[key]


def forget_permission_ids(**kwargs: Any) -> None:
    """Drop the ids `_permission_id` keeps (a post_migrate receiver: migrate and flush recreate permissions)."""
    _permission_ids.clear()


def _of_firm(case: str, case_table: str, firm_column: str) -> str:
    """Whether the case whose id is `case` (SQL) is in the firm `%(firm)s`: one probe of its firm, a scalar
    subquery the planner cannot turn into a scan of every case."""
    q = connection.ops.quote_name
    return f"(SELECT c.{q(firm_column)} FROM {q(case_table)} c WHERE c.id = {case}) = %(firm)s"


def _in_firm(ids_sql: str, case_table: str, firm_column: str) -> str:
    """Ids from `ids_sql` (a parenthesised one-column statement) whose case is in the firm `%(firm)s`."""
    return f"SELECT g.id FROM {ids_sql} g(id) WHERE {_of_firm('g.id', case_table, firm_column)}"


def _groups_table(permissions: GuardianPermissions) -> str:
    """The user model's group links (PermissionsMixin's `groups`) if group grants count, else "". (From the
    model's field: the `groups` manager would be built anew for every read.)"""
    if permissions.group_model is None:
        return ""
    return str(get_user_model()._meta.get_field("groups").remote_field.through._meta.db_table)


@dataclass(frozen=True)
class Grants:
    """What the wall's statements over guardian's grants are built from, asked of the host once: a read's
    scope (`scope.scope_of`) asks it once for all three of them (`{visible}`, `{visible_listed}` and
    `{grants_past}`), where each asked it on its own before."""

    permissions: GuardianPermissions
    case_table: str
    firm_column: str
    groups_table: str
    permission_id: int | None

    def values(self, viewer: Viewer) -> dict[str, Any]:
        """The values `%(gm_user)s` and `%(gm_permission)s` of `_guardian_listed_sql` and `_grants_past_template`."""
        return {"gm_user": viewer.pk, "gm_permission": self.permission_id}


def guardian_grants() -> Grants | None:
    """The host's guardian grants as the wall's statements use them; None on a host without them."""
    permissions = get_adapter().guardian_permissions()
    if permissions is None:
        return None
    return Grants(
        permissions, case_model()._meta.db_table, case_firm_column(), _groups_table(permissions),
        _permission_id(permissions.codename),
    )  # fmt: skip


def is_firm_admin(viewer: Viewer) -> bool:
    """The host's answer (adapter) whether this viewer, who has a firm, administers it."""
    return bool(get_adapter().viewer_is_firm_admin(viewer))


def sees_whole_firm(viewer: Viewer) -> bool:
    """Whether `viewer` may open every case of their firm (a firm admin): no case of it is hidden from them.

    The reads take a different statement for such a viewer: one that starts
    from what matches, which is as fast as it gets when nothing is hidden.
    Anyone else's reads start from the cases they may open.
    """
    return viewer_firm_id(viewer) is not None and is_firm_admin(viewer)


def visible_case_ids_sql(
    viewer: Viewer, *, firm_id: int | None = None, whole_firm: bool | None = None, grants: Grants | None = None
) -> tuple[str, tuple[Any, ...]] | None:
    """The ids of the cases `viewer` may open, as SQL and parameters to embed in a statement
    (one column); None when the viewer may open nothing. The only definition of the wall:
    `visible_cases` is built on it. For anyone but a firm admin it starts from the viewer's
    grants (or the host's member ids), so its cost follows what they may open.

    `firm_id`, `whole_firm` and `grants` (`guardian_grants()`), when the caller has asked them
    already (`scope.scope_of`), are not asked again."""
    firm_id = viewer_firm_id(viewer) if firm_id is None else firm_id
    if firm_id is None:
        return None
    adapter = get_adapter()
    meta = case_model()._meta
    q = connection.ops.quote_name
    whole_firm = is_firm_admin(viewer) if whole_firm is None else whole_firm
    if whole_firm:
        statement = sql(f"SELECT c.id FROM {q(meta.db_table)} c WHERE c.{q(case_firm_column())} = %(firm)s", firm=firm_id)
        return statement.sql, statement.params
    grants = grants or guardian_grants()
    if grants is not None:
        statement = sql(
            _guardian_sql(grants.permissions, grants.case_table, grants.firm_column, grants.groups_table),
            user=viewer.pk, permission=grants.permission_id, firm=firm_id,
        )  # fmt: skip
        return statement.sql, statement.params
    try:
        # order_by(): the host's default ordering means nothing inside a subquery.
        member_sql, member_params = adapter.member_case_ids(viewer).order_by().query.sql_with_params()
    except EmptyResultSet:
        return None
    statement = sql(_in_firm("({members})", meta.db_table, case_firm_column()), members=Stmt(member_sql, member_params), firm=firm_id)
    return statement.sql, statement.params


# A condition that holds only if the viewer may open more cases of their firm than `{than}` (a statement
# of one number), seen from a single source of their grants: their own grants, or one of their groups'. Each
# source names a case once (guardian's unique (user or group, permission, object)), so one source's cases
# of the firm are no more than all they may open: when the condition holds, so does "more than `{than}`".
# It may fail to hold for a lawyer who opens more all the same, through several sources together; a read
# then counts their cases as before. Why: counting a partner's cases up to a cap deduplicates all their
# grants first (the UNION of `_guardian_sql` hashes every one of 20,000 before the first count), where a
# single group's first cap + 1 rows settle it. Sources are asked in turn and the first one past `{than}`
# ends it. Values: `%(gm_user)s`, `%(gm_permission)s`, `%(firm)s` (`grants_past_sql` gives the first two).
_GRANTS_PAST = """EXISTS (
    SELECT 1 FROM ({sources}) AS src(g)
    WHERE (SELECT count(*) FROM ({granted} LIMIT {{than}} + 1) AS x) > {{than}}
)"""


@functools.cache
def _grants_past_template(permissions: GuardianPermissions, case_table: str, firm_column: str, groups_table: str) -> str:
    q = connection.ops.quote_name
    granted = (
        f"SELECT 1 FROM {q(permissions.user_model._meta.db_table)} up WHERE src.g IS NULL AND up.user_id = %(gm_user)s "
        f"AND up.permission_id = %(gm_permission)s AND {_of_firm('up.content_object_id', case_table, firm_column)}"
    )
    sources = "SELECT NULL::bigint"
    if permissions.group_model is not None:
        granted += (
            f" UNION ALL SELECT 1 FROM {q(permissions.group_model._meta.db_table)} gp WHERE gp.group_id = src.g "
            f"AND gp.permission_id = %(gm_permission)s AND {_of_firm('gp.content_object_id', case_table, firm_column)}"
        )
        sources += f" UNION ALL SELECT ug.group_id FROM {q(groups_table)} ug WHERE ug.user_id = %(gm_user)s"
    return _GRANTS_PAST.format(sources=sources, granted=granted)


def visible_listed_sql(viewer: Viewer, grants: Grants | None) -> dict[str, Any]:
    """The names of `{visible_listed}`: the cases of `visible_case_ids_sql` in the form a read that lists
    them all at once runs fastest (`_guardian_listed_sql`), with its values; {} where that form is
    `{visible}` itself (`grants` None: a firm admin, a host without guardian's grants): the caller then
    gives `{visible}`."""
    if grants is None:
        return {}
    template = _guardian_listed_sql(grants.permissions, grants.case_table, grants.firm_column, grants.groups_table)
    return {"visible_listed": template, **grants.values(viewer)}


def grants_past_sql(viewer: Viewer, grants: Grants | None) -> dict[str, Any]:
    """The names of a condition that holds only if `viewer` may open more than `{than}` cases of their firm
    (a part the read supplies: the statement of a number): `grants_past`, its template, and its values;
    "false" where no single source of grants tells (`grants` None: a firm admin, a host without guardian's
    grants). Sound, not complete: when it does not hold, the read counts their cases itself
    (`visible_case_ids_sql`)."""
    if grants is None:
        return {"grants_past": "false"}
    template = _grants_past_template(grants.permissions, grants.case_table, grants.firm_column, grants.groups_table)
    return {"grants_past": template, **grants.values(viewer)}


class _AnyOf(Func):
    """`pk = ANY(ARRAY(<statement>))`: the statement runs once (an InitPlan) and the case table is read
    by primary key for its ids only. (`pk__in=` lets the planner hash it against a scan of every case.)"""

    template = "%(expressions)s)"
    arg_joiner = " = ANY(ARRAY"
    output_field = BooleanField()


def case_ids_in(sql: str, params: tuple[Any, ...]) -> Func:
    """For `.filter(...)`: the cases whose ids this one-column statement yields, read by primary key."""
    return _AnyOf(F("pk"), RawSQL(sql, params))


def visible_cases(viewer: Viewer) -> QuerySet[Any]:
    """Every case `viewer` may open, as one lazily evaluated QuerySet (one SQL query).

    For a viewer who may not open the whole firm the case table is read by
    primary key for the visible ids only, so the cost never follows hidden cases.
    """
    Case = case_model()
    visible = visible_case_ids_sql(viewer)
    if visible is None:
        return Case.objects.none()
    firm_cases = firm_cases_of(viewer_firm_id(viewer))
    if get_adapter().viewer_is_firm_admin(viewer):
        return firm_cases
    return firm_cases.filter(case_ids_in(*visible))


def visible_case(viewer: Viewer, *, case_id: int) -> QuerySet[Any]:
    """The case `case_id` if `viewer` may open it (else empty), as a QuerySet: one probe of the wall."""
    Case = case_model()
    visible = visible_case_ids_sql(viewer)
    if visible is None:
        return Case.objects.none()
    firm_cases = firm_cases_of(viewer_firm_id(viewer)).filter(pk=case_id)
    if get_adapter().viewer_is_firm_admin(viewer):
        return firm_cases
    return firm_cases.filter(pk__in=RawSQL(*visible))


def visible_case_ids(viewer: Viewer) -> QuerySet[Any]:
    """The ids of `visible_cases(viewer)`, for use as a subquery (`case_id__in=`)."""
    return visible_cases(viewer).values("pk")


def can_open_case(viewer: Viewer, *, case_id: int) -> bool:
    return visible_case(viewer, case_id=case_id).exists()


def get_case_for_viewer(viewer: Viewer, *, case_id: Any = None, reference: str | None = None) -> Any:
    """The case with this id (or reference) if the viewer may open it; `NotFound` otherwise.

    Hidden and non-existent cases raise the same `NotFound`; a malformed id
    does too, so a caller cannot probe for ids either.
    """
    if reference is not None:
        queryset = visible_cases(viewer).annotate(_reference=get_adapter().case_reference()).filter(_reference=reference)
    else:
        try:
            pk = int(case_id)
        except (TypeError, ValueError, OverflowError):
            raise NotFound from None
        if not 0 < pk < 2**63:
            raise NotFound
        queryset = visible_case(viewer, case_id=pk)
    case = queryset.first()
    if case is None:
        raise NotFound
    return case


def case_audiences(*, case_ids: list[int], firm_id: int) -> dict[int, list[Any]] | None:
    """Per case of `case_ids`, the users besides the firm's admins who may open it now: active users of
    its firm granted it directly or through a group (guardian), or listed by the host's `case_member_ids`.

    The reverse of `visible_case_ids_sql`, by the same rule, for the write-back guard: who reads a
    note filed into the case. Firm admins are left out (nothing of their firm is hidden from them),
    and so are users the wall shows nothing (inactive, another firm). None when the host cannot say
    (no guardian and no `case_member_ids`). With guardian, two queries whatever the number of cases.
    """
    adapter = get_adapter()
    permissions = adapter.guardian_permissions()
    User = get_user_model()
    pairs: set[tuple[int, int]] = set()
    if permissions is not None:
        codename_id = _permission_id(permissions.codename)
        direct = permissions.user_model.objects.filter(content_object_id__in=case_ids, permission_id=codename_id)
        pairs |= set(direct.values_list("content_object_id", "user_id"))
        if permissions.group_model is not None:
            through = User._meta.get_field("groups").remote_field.through
            groups = permissions.group_model.objects.filter(content_object_id__in=case_ids, permission_id=codename_id)
            members = through.objects.filter(group_id__in=groups.values("group_id")).values_list("group_id", "user_id")
            by_group: dict[int, set[int]] = {}
            for group_id, user_id in members:
                by_group.setdefault(group_id, set()).add(user_id)
            for case_id, group_id in groups.values_list("content_object_id", "group_id"):
                pairs |= {(case_id, user_id) for user_id in by_group.get(group_id, ())}
    else:
        try:
            for case_id in case_ids:
                members = User.objects.filter(pk__in=adapter.case_member_ids(case_id=case_id).order_by())
                pairs |= {(case_id, u) for u in members.values_list("pk", flat=True)}
        except NotSupported:
            return None
    users = {
        user.pk: user
        for user in User.objects.filter(pk__in={u for _, u in pairs})
        if viewer_firm_id(user) == firm_id and not adapter.viewer_is_firm_admin(user)
    }
    audiences: dict[int, list[Any]] = {case_id: [] for case_id in case_ids}
    for case_id, user_id in sorted(pairs):
        if user_id in users:
            audiences[case_id].append(users[user_id])
    return audiences


def case_audience(*, case_id: int, firm_id: int) -> list[Any] | None:
    """`case_audiences` of one case."""
    audiences = case_audiences(case_ids=[case_id], firm_id=firm_id)
    return None if audiences is None else audiences[case_id]
