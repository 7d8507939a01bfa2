"""Firm-scoped Django admin: a firm admin is staff limited to their own firm.

Superusers (platform operators) see every firm. A firm admin (`is_staff`,
`is_firm_admin`) sees only rows of their firm in every list, detail page,
filter, autocomplete, FK choice and action, without needing per-model
permission rows: what they may do is decided here from their role. Anyone else
sees nothing. An object of another firm answers 404, exactly like an object
that does not exist.

This is admin visibility by firm only. It is deliberately not a second
case-visibility rule: a firm admin may open every case of their firm
(`graph_memory.wall.access` says the same).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.contrib import admin
from django.contrib.admin.utils import NotRelationField, get_fields_from_path
from django.core.exceptions import FieldDoesNotExist
from django.db.models import DateTimeField, QuerySet
from django.http import Http404, HttpRequest
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.decorators import sync_and_async_middleware

from graph_memory import conf
from graph_memory.adapter import Viewer, firm_model, get_adapter
from graph_memory.ledger import served_ledger
from graph_memory.plumbing.display import firm_timezone


def admin_firm_id(user: Viewer) -> int | None:
    """The firm a non-superuser may administer, or None if they may administer none."""
    adapter = get_adapter()
    if getattr(user, "is_active", False) and getattr(user, "is_staff", False) and adapter.viewer_is_firm_admin(user):
        return adapter.viewer_firm_id(user)
    return None


def admin_firms(user: Viewer) -> QuerySet[Any]:
    """The firms `user` may administer: all for superusers, their own for a firm admin."""
    Firm = firm_model()
    if getattr(user, "is_active", False) and getattr(user, "is_superuser", False):
        return Firm.objects.all()
    firm_id = admin_firm_id(user)
    return Firm.objects.filter(pk=firm_id) if firm_id is not None else Firm.objects.none()


def _in_admin(request: HttpRequest) -> bool:
    try:
        return request.path.startswith(reverse("admin:index"))
    except NoReverseMatch:  # no admin site in this project
        return False


def admin_time_zone(request: HttpRequest) -> dt.tzinfo | None:
    """The zone of every time on this admin request's pages: a firm admin's firm's; None for operators (UTC,
    the site's zone; the health and access pages then show the firm they chose in its own) and outside admin."""
    firm_id = admin_firm_id(request.user) if _in_admin(request) and not _is_superuser(request) else None
    return firm_timezone(firm_model().objects.filter(pk=firm_id).first()) if firm_id is not None else None


@sync_and_async_middleware
def firm_time_zone_middleware(get_response: Callable[..., Any]) -> Callable[..., Any]:
    """Admin requests of a firm admin run in their firm's time zone: every page (the index too) shows its
    times in it under the header's "Times in …", and a time typed into a form is read in it. The API and
    every other path are untouched (the API answers in UTC with an offset)."""
    if iscoroutinefunction(get_response):

        async def middleware_async(request: HttpRequest) -> Any:
            zone = await sync_to_async(admin_time_zone)(request) if _in_admin(request) else None
            if zone is None:
                return await get_response(request)
            with timezone.override(zone):
                return await get_response(request)

        return middleware_async

    def middleware(request: HttpRequest) -> Any:
        zone = admin_time_zone(request)
        if zone is None:
            return get_response(request)
        with timezone.override(zone):
            return get_response(request)

    return middleware


def _is_superuser(request: HttpRequest) -> bool:
    return bool(request.user.is_active and request.user.is_superuser)


class FirmScopedMixin:
    """Shared by `FirmScopedAdmin` and `FirmScopedInline` (both are BaseModelAdmin).

    `firm_field` names this model's foreign key to the firm ("id" for the firm
    model itself). The `firm_admin_can_*` flags say what a firm admin may do
    with their own firm's rows; viewing is always allowed.
    """

    firm_field = "firm"
    firm_admin_can_add = False
    firm_admin_can_change = False
    firm_admin_can_delete = False

    def scope(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if _is_superuser(request):
            return queryset
        firm_id = admin_firm_id(request.user)
        if firm_id is None:
            return queryset.none()
        return queryset.filter(**{self.firm_field: firm_id})

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return self.scope(request, super().get_queryset(request))  # type: ignore[misc]

    def _obj_firm_id(self, obj: Any) -> Any:
        if self.firm_field in ("id", "pk"):
            return obj.pk
        # For inlines `obj` is the parent (a case, a summary): it carries firm_id too.
        return getattr(obj, f"{self.firm_field}_id", getattr(obj, "firm_id", None))

    def _firm_admin_may(self, request: HttpRequest, allowed: bool, obj: Any = None) -> bool:
        firm_id = admin_firm_id(request.user)
        if not allowed or firm_id is None:
            return False
        return obj is None or self._obj_firm_id(obj) == firm_id

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if _is_superuser(request):
            return super().has_view_permission(request, obj)  # type: ignore[misc]
        return self._firm_admin_may(request, True, obj)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        # ModelAdmin passes (request), inlines pass (request, parent_obj).
        if _is_superuser(request):
            return super().has_add_permission(request, *args)  # type: ignore[misc]
        return self._firm_admin_may(request, self.firm_admin_can_add, *args)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if _is_superuser(request):
            return super().has_change_permission(request, obj)  # type: ignore[misc]
        return self._firm_admin_may(request, self.firm_admin_can_change, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if _is_superuser(request):
            return super().has_delete_permission(request, obj)  # type: ignore[misc]
        return self._firm_admin_may(request, self.firm_admin_can_delete, obj)

    def _scoped_related(
        self, request: HttpRequest, db_field: Any, queryset: QuerySet[Any] | None
    ) -> QuerySet[Any] | None:
        """Limit a relation's choices to the admin's firm (firm admins only)."""
        firm_id = admin_firm_id(request.user)
        if _is_superuser(request) or firm_id is None:
            return queryset
        related = db_field.remote_field.model
        if queryset is None:
            queryset = related._default_manager.all()
        if related._meta.label_lower == conf.firm_model_label().lower():
            return queryset.filter(pk=firm_id)
        firm_field = get_adapter().firm_field_of(related)
        if firm_field is None:
            return queryset
        return queryset.filter(**{f"{firm_field}_id": firm_id})

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        queryset = self._scoped_related(request, db_field, kwargs.get("queryset"))
        if queryset is not None:
            kwargs["queryset"] = queryset
        return super().formfield_for_foreignkey(db_field, request, **kwargs)  # type: ignore[misc]

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        queryset = self._scoped_related(request, db_field, kwargs.get("queryset"))
        if queryset is not None:
            kwargs["queryset"] = queryset
        return super().formfield_for_manytomany(db_field, request, **kwargs)  # type: ignore[misc]


class FirmScopedAdmin(FirmScopedMixin, admin.ModelAdmin):
    """A ModelAdmin whose every page, filter, autocomplete and action stays inside one firm.

    `derived_data = True` marks rows the memory layer derives from the host's
    records: they never block deleting the record they were derived from.
    """

    derived_data = False
    operator_fields: tuple[str, ...] = ()  # shown to operators only (raw JSON behind a "details" disclosure)

    def has_module_permission(self, request: HttpRequest) -> bool:
        if _is_superuser(request):
            return super().has_module_permission(request)
        return admin_firm_id(request.user) is not None

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        # Raw stored values (a JSON field as it is) are for operators: a firm admin reads the table beside it.
        fieldsets = super().get_fieldsets(request, obj)
        if _is_superuser(request) or not self.operator_fields:
            return fieldsets
        return [
            (name, {**options, "fields": [f for f in options["fields"] if f not in self.operator_fields]})
            for name, options in fieldsets
        ]

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if field is not None and isinstance(db_field, DateTimeField):
            # A time typed here is read in the page's zone (the firm's): the field says which.
            zone = f"In {timezone.get_current_timezone_name()}."
            field.help_text = f"{field.help_text} {zone}" if field.help_text else zone
        return field

    def get_object(self, request: HttpRequest, object_id: str, from_field: str | None = None) -> Any:
        # Django admin redirects to the index with "does not exist" for a
        # missing object; another firm's object must be a plain 404 instead,
        # the same answer as for an id that never existed.
        obj = super().get_object(request, object_id, from_field)
        if obj is None:
            raise Http404("No such object.")
        return obj

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        initial = super().get_changeform_initial_data(request)
        firm_id = admin_firm_id(request.user)
        if firm_id is not None and self.firm_field not in ("id", "pk"):
            initial.setdefault(self.firm_field, firm_id)
        return initial

    def get_list_display(self, request: HttpRequest) -> Any:
        # Every row a firm admin sees is of their firm: the column would repeat it on each row.
        columns = super().get_list_display(request)
        if _is_superuser(request):
            return columns
        return [column for column in columns if column != self.firm_field]

    def get_list_filter(self, request: HttpRequest) -> Any:
        # A plain relation filter lists every row of the related table (all
        # firms); the "related only" filter lists values found in this
        # admin's (scoped) queryset.
        filters = []
        for item in super().get_list_filter(request):
            if isinstance(item, str) and self._is_relation(item):
                if item == self.firm_field and not _is_superuser(request):
                    continue
                item = (item, admin.RelatedOnlyFieldListFilter)
            filters.append(item)
        return filters

    def _is_relation(self, path: str) -> bool:
        try:
            return bool(get_fields_from_path(self.model, path)[-1].is_relation)
        except (FieldDoesNotExist, NotRelationField):
            return False

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        # Inline rows leave `firm` out of their form; they take their parent's.
        parent_firm_id = getattr(form.instance, "firm_id", None)
        instances = formset.save(commit=False)
        for deleted in formset.deleted_objects:
            deleted.delete()
        for instance in instances:
            if hasattr(instance, "firm_id") and instance.firm_id is None:
                instance.firm_id = parent_firm_id
            instance.save()
        formset.save_m2m()

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        deleted, model_count, perms_needed, protected = super().get_deleted_objects(objs, request)
        derived = {
            str(model._meta.verbose_name)
            for model, model_admin in self.admin_site._registry.items()
            if getattr(model_admin, "derived_data", False)
        }
        return deleted, model_count, {p for p in perms_needed if str(p) not in derived}, protected


class FirmScopedInline(FirmScopedMixin, admin.TabularInline):
    """An inline of firm-owned rows; `firm` is filled from the parent on save."""

    exclude = ("firm",)
    extra = 0


class DerivedAdmin(FirmScopedAdmin):
    """Derived rows: viewable by the firm's admins and operators, never edited by hand.

    Each list or detail page a firm admin opens is an answer of the memory: one served-ledger row
    (`admin:<model>`) naming the cases of the rows it shows, written before the page is returned.
    Superusers are the platform's operators, outside every firm's chain.
    """

    derived_data = True
    ledger_name: str | None = ""  # None: the page shows no memory content

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        response = super().changelist_view(request, extra_context)
        changelist = (getattr(response, "context_data", None) or {}).get("cl")
        self._ledger_row(request, response, getattr(changelist, "result_list", None) or [])
        return response

    def changeform_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        response = super().changeform_view(request, *args, **kwargs)
        shown = (getattr(response, "context_data", None) or {}).get("original")
        self._ledger_row(request, response, [shown] if shown is not None else [])
        return response

    def _ledger_row(self, request: HttpRequest, response: Any, shown: Any) -> None:
        firm_id = admin_firm_id(request.user)
        if self.ledger_name is None or firm_id is None or _is_superuser(request):
            return
        case_ids = {getattr(obj, "case_id", None) for obj in shown}
        case_ids |= {obj.ref_id for obj in shown if getattr(obj, "kind", None) == "case" and hasattr(obj, "ref_id")}
        served_ledger.record(
            firm_id=firm_id,
            viewer_id=request.user.pk,
            endpoint=f"admin:{self.ledger_name or self.model._meta.model_name}",
            status=served_ledger.status_for(response.status_code),
            query={"method": request.method, "path": request.path, "query": sorted(request.GET.lists())},
            case_ids=[c for c in case_ids if c is not None],
        )

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
