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

from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db.models import Exists, OuterRef, Q, QuerySet

from graph_memory.adapter import case_model, get_adapter


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


def visible_cases(viewer: Any) -> QuerySet[Any]:
    """Every case `viewer` may open, as one lazily evaluated QuerySet (one SQL query)."""
    Case = case_model()
    firm_id = viewer_firm_id(viewer)
    if firm_id is None:
        return Case.objects.none()
    adapter = get_adapter()
    firm_cases = Case.objects.filter(**{f"{adapter.case_firm_field}_id": firm_id})
    if adapter.viewer_is_firm_admin(viewer):
        return firm_cases
    permissions = adapter.guardian_permissions()
    if permissions is None:
        return firm_cases.filter(pk__in=adapter.member_case_ids(viewer))
    by_user = permissions.user_model.objects.filter(
        content_object_id=OuterRef("pk"),
        user_id=viewer.pk,
        permission__codename=permissions.codename,
        permission__content_type__app_label=Case._meta.app_label,
    )
    granted = Q(Exists(by_user))
    if permissions.group_model is not None:
        by_group = permissions.group_model.objects.filter(
            content_object_id=OuterRef("pk"),
            group__user=viewer.pk,
            permission__codename=permissions.codename,
            permission__content_type__app_label=Case._meta.app_label,
        )
        granted |= Q(Exists(by_group))
    return firm_cases.filter(granted)


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
