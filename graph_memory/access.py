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
from typing import Any

from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL

from graph_memory.adapter import GuardianPermissions, case_model, get_adapter


class NotFound(Exception):
    """Raised for anything the viewer may not see *and* for anything that does not exist.

    The two cases are deliberately one exception with one message, so that no
    caller can tell them apart.
    """

    message = "Not found."

    def __str__(self) -> str:
        return self.message


def viewer_firm_id(viewer: Any) -> int | None:
    """The firm whose cases an authenticated, active viewer may be shown (None: nothing at all)."""
    if viewer is None or not getattr(viewer, "is_authenticated", False) or not getattr(viewer, "is_active", False):
        return None
    return get_adapter().viewer_firm_id(viewer)


def _firm_column() -> str:
    return case_model()._meta.get_field(get_adapter().case_firm_field).column


@functools.cache
def _guardian_sql(permissions: GuardianPermissions, case_table: str, firm_column: str, groups_table: str) -> str:
    """The visible-cases statement for a lawyer, from guardian's direct foreign-key tables.

    Hand-written rather than compiled from a QuerySet on every read: Django
    spent more time compiling it, and PostgreSQL planning it, than answering
    it. One index probe per case (guardian's unique (user, permission,
    object) index); the permission id is an uncorrelated subquery, computed
    once per statement; a group grant goes straight from the user's group
    links to the group permission rows. Parameters: the firm id, then per
    branch the user id, permission codename, case app label and model name
    (`_guardian_params`).
    """
    q = connection.ops.quote_name
    perm, ctype = q(Permission._meta.db_table), q(ContentType._meta.db_table)
    permission_id = (
        f"(SELECT p.id FROM {perm} p JOIN {ctype} ct ON ct.id = p.content_type_id "
        "WHERE p.codename = %s AND ct.app_label = %s AND ct.model = %s)"
    )
    user_table = q(permissions.user_model._meta.db_table)
    granted = (
        f"EXISTS (SELECT 1 FROM {user_table} up WHERE up.content_object_id = c.id AND up.user_id = %s "
        f"AND up.permission_id = {permission_id})"
    )
    if permissions.group_model is not None:
        group_table = q(permissions.group_model._meta.db_table)
        granted += (
            f" OR EXISTS (SELECT 1 FROM {group_table} gp JOIN {q(groups_table)} ug ON ug.group_id = gp.group_id "
            f"WHERE gp.content_object_id = c.id AND ug.user_id = %s AND gp.permission_id = {permission_id})"
        )
    return f"SELECT c.id FROM {q(case_table)} c WHERE c.{q(firm_column)} = %s AND ({granted})"


def _guardian_params(permissions: GuardianPermissions, viewer: Any, firm_id: int) -> tuple[Any, ...]:
    meta = case_model()._meta
    per_branch = (viewer.pk, permissions.codename, meta.app_label, meta.model_name)
    return (firm_id, *per_branch, *(per_branch if permissions.group_model is not None else ()))


def visible_case_ids_sql(viewer: Any) -> tuple[str, tuple[Any, ...]] | None:
    """The ids of the cases `viewer` may open, as SQL and parameters to embed in a statement
    (one column); None when the viewer may open nothing. The only definition of the wall:
    `visible_cases` is built on it."""
    firm_id = viewer_firm_id(viewer)
    if firm_id is None:
        return None
    adapter = get_adapter()
    meta = case_model()._meta
    q = connection.ops.quote_name
    if adapter.viewer_is_firm_admin(viewer):
        return f"SELECT c.id FROM {q(meta.db_table)} c WHERE c.{q(_firm_column())} = %s", (firm_id,)
    permissions = adapter.guardian_permissions()
    if permissions is not None:
        # The user model's group links (PermissionsMixin's `groups`), if group grants count.
        groups_table = viewer.groups.through._meta.db_table if permissions.group_model is not None else ""
        sql = _guardian_sql(permissions, meta.db_table, _firm_column(), groups_table)
        return sql, _guardian_params(permissions, viewer, firm_id)
    try:
        # order_by(): the host's default ordering means nothing inside a subquery.
        member_sql, member_params = adapter.member_case_ids(viewer).order_by().query.sql_with_params()
    except EmptyResultSet:
        return None
    sql = f"SELECT c.id FROM {q(meta.db_table)} c WHERE c.{q(_firm_column())} = %s AND c.id IN ({member_sql})"
    return sql, (firm_id, *member_params)


def visible_cases(viewer: Any) -> QuerySet[Any]:
    """Every case `viewer` may open, as one lazily evaluated QuerySet (one SQL query)."""
    Case = case_model()
    visible = visible_case_ids_sql(viewer)
    if visible is None:
        return Case.objects.none()
    firm_cases = Case.objects.filter(**{f"{get_adapter().case_firm_field}_id": viewer_firm_id(viewer)})
    if get_adapter().viewer_is_firm_admin(viewer):
        return firm_cases
    return firm_cases.filter(pk__in=RawSQL(*visible))


def visible_case_ids(viewer: Any) -> QuerySet[Any]:
    """The ids of `visible_cases(viewer)`, for use as a subquery (`case_id__in=`)."""
    return visible_cases(viewer).values("pk")


def can_open_case(viewer: Any, *, case_id: int) -> bool:
    return visible_cases(viewer).filter(pk=case_id).exists()


def get_case_for_viewer(viewer: Any, *, case_id: Any = None, reference: str | None = None) -> Any:
    """The case with this id (or reference) if the viewer may open it; `NotFound` otherwise.

    Hidden and non-existent cases raise the same `NotFound`; a malformed id
    does too, so a caller cannot probe for ids either.
    """
    queryset = visible_cases(viewer)
    if reference is not None:
        queryset = queryset.annotate(_reference=get_adapter().case_reference()).filter(_reference=reference)
    else:
        try:
            pk = int(case_id)
        except (TypeError, ValueError, OverflowError):
            raise NotFound from None
        if not 0 < pk < 2**63:
            raise NotFound
        queryset = queryset.filter(pk=pk)
    case = queryset.first()
    if case is None:
        raise NotFound
    return case
