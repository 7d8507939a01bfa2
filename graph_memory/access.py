"""The wall: which cases a viewer may open. Nothing else decides visibility.

A viewer may open a case when they own it or are on its team (both stored as
django-guardian's `view_case` object permission, kept in sync by the host), or
when they are an admin of the case's firm. Nobody sees another firm's cases:
not firm admins, not superusers (platform operators use Django admin, not the
assistant's read paths).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db.models import Exists, OuterRef, Q, QuerySet

from graph_memory import source


class NotFound(Exception):
    """Raised for anything the viewer may not see *and* for anything that does not exist.

    The two cases are deliberately one exception with one message, so that no
    caller can tell them apart.
    """

    message = "Not found."

    def __str__(self) -> str:
        return self.message


def _is_usable_viewer(viewer: Any) -> bool:
    return bool(
        viewer is not None
        and getattr(viewer, "is_authenticated", False)
        and getattr(viewer, "is_active", False)
        and getattr(viewer, "firm_id", None) is not None
    )


def visible_cases(viewer: Any) -> QuerySet[source.Case]:
    """Every case `viewer` may open, as one lazily evaluated QuerySet (one SQL query)."""
    Case = source.Case
    if not _is_usable_viewer(viewer):
        return Case.objects.none()
    firm_cases = Case.objects.filter(firm_id=viewer.firm_id)
    if viewer.is_firm_admin:
        return firm_cases
    by_user = source.CaseUserObjectPermission.objects.filter(
        content_object_id=OuterRef("pk"),
        user_id=viewer.pk,
        permission__codename=source.VIEW_CASE_CODENAME,
        permission__content_type__app_label=Case._meta.app_label,
    )
    by_group = source.CaseGroupObjectPermission.objects.filter(
        content_object_id=OuterRef("pk"),
        group__user=viewer.pk,
        permission__codename=source.VIEW_CASE_CODENAME,
        permission__content_type__app_label=Case._meta.app_label,
    )
    return firm_cases.filter(Q(Exists(by_user)) | Q(Exists(by_group)))


def visible_case_ids(viewer: Any) -> QuerySet[Any]:
    """The ids of `visible_cases(viewer)`, for use as a subquery (`case_id__in=`)."""
    return visible_cases(viewer).values("pk")


def visible_case_ids_sql(viewer: Any) -> tuple[str, tuple[Any, ...]] | None:
    """`visible_case_ids(viewer)` as SQL and parameters to embed in a raw statement;
    None when the viewer may open nothing (Django then has no SQL to give)."""
    try:
        # order_by(): the host's default ordering means nothing inside a subquery,
        # and a subquery probed once per row must not sort each time.
        sql, params = visible_case_ids(viewer).order_by().query.sql_with_params()
    except EmptyResultSet:
        return None
    return sql, tuple(params)


def can_open_case(viewer: Any, *, case_id: int) -> bool:
    return visible_cases(viewer).filter(pk=case_id).exists()


def get_case_for_viewer(viewer: Any, *, case_id: Any = None, key: str | None = None) -> source.Case:
    """The case with this id (or number) if the viewer may open it; `NotFound` otherwise.

    Hidden and non-existent cases raise the same `NotFound`; a malformed id
    does too, so a caller cannot probe for ids either.
    """
    queryset = visible_cases(viewer)
    if key is not None:
        queryset = queryset.filter(key=key)
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
