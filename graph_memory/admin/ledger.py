"""The access ledger in Django admin: its rows, and the two point-in-time questions, with CSV.

Firm-scoped like every page here (`admin/scoping.py`): a firm admin sees their
firm's rows only, asks about their firm's cases and users only, and a CSV
holds exactly what the page would show. Rows are never added, changed or
deleted by hand (the table refuses it too).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone

from graph_memory.adapter import get_adapter
from graph_memory.admin.display import time_column
from graph_memory.admin.scoping import DerivedAdmin, admin_firms
from graph_memory.ledger import history, report
from graph_memory.models import AccessChange
from graph_memory.plumbing.display import firm_timezone, page_time


def _csv(name: str, text: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
    return response


@admin.register(AccessChange)
class AccessChangeAdmin(DerivedAdmin):
    """Every change to who may open a case's memory, newest first; ids and reasons, never case text."""

    firm_field = "firm_id"
    at_local = time_column("at", "at")
    list_display = ["at_local", "kind", "granted", "reason", "case_label", "viewer_label", "group_label"]
    list_filter = ["kind", "granted", "reason"]
    date_hierarchy = "at"
    actions = ["export_csv"]
    fields = ["at_local", "kind", "granted_words", "reason", "case_label", "viewer_label", "group_label"]
    readonly_fields = fields

    def get_object(self, request: HttpRequest, object_id: str, from_field: str | None = None) -> Any:
        # Its case, user and group by name on its page (a few queries), as on the list.
        change = super().get_object(request, object_id, from_field)
        change._gm_labels = report.change_labels([change]).get(change.firm_id or 0, report.Labels())
        return change

    def get_changelist_instance(self, request: HttpRequest) -> Any:
        # Labels for the page's rows in a few queries, not a few per row.
        changelist = super().get_changelist_instance(request)
        rows = list(changelist.result_list)
        names = report.change_labels(rows)
        for row in rows:
            row._gm_labels = names.get(row.firm_id or 0, report.Labels())
        return changelist

    @admin.display(description="granted or ended")
    def granted_words(self, obj: AccessChange) -> str:
        return "granted: holds from this time" if obj.granted else "ended at this time"

    @admin.display(description="case")
    def case_label(self, obj: AccessChange) -> str:
        if obj.kind == AccessChange.Kind.FIRM_ADMIN:
            return "every case of the firm"
        return getattr(obj, "_gm_labels", report.Labels()).case(obj.case_id)

    @admin.display(description="user")
    def viewer_label(self, obj: AccessChange) -> str:
        return getattr(obj, "_gm_labels", report.Labels()).user(obj.viewer_id)

    @admin.display(description="group")
    def group_label(self, obj: AccessChange) -> str:
        return getattr(obj, "_gm_labels", report.Labels()).group(obj.group_id)

    @admin.action(description="Export the selected changes as CSV")
    def export_csv(self, request: HttpRequest, queryset: QuerySet[Any]) -> HttpResponse:
        # The queryset is this admin's: a firm admin's holds their firm's rows only.
        rows = list(queryset.order_by("at", "id"))
        return _csv(
            "access-changes",
            report.to_csv(report.CHANGE_HEADER, report.change_rows(rows, names=report.change_labels(rows))),
        )

    def get_urls(self) -> list[Any]:
        question = self.admin_site.admin_view(lambda request: question_view(request, self))
        return [path("question/", question, name="graph_memory_access_question"), *super().get_urls()]

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        extra = {**(extra_context or {}), "question_url": reverse("admin:graph_memory_access_question")}
        return super().changelist_view(request, extra)


def question_view(request: HttpRequest, model_admin: Any) -> HttpResponse:
    """/admin/graph_memory/accesschange/question/: `case` (reference or id) or `user` (username or id),
    `at`, or `start` and `end`; `csv=1` for the answer as CSV; `firm` (a slug: operators only)."""
    firms = list(admin_firms(request.user))
    if not firms:
        raise PermissionDenied
    adapter = get_adapter()
    firm = firms[0]
    if request.user.is_superuser and request.GET.get("firm"):
        firm = next((f for f in firms if adapter.firm_slug(f) == request.GET["firm"]), None)
        if firm is None:
            raise Http404("No such firm.")
    tz = firm_timezone(firm)
    asked = {key: request.GET.get(key, "") for key in ("case", "user", "at", "start", "end")}
    answer, error, by, names, rows = None, "", "", None, []
    if asked["case"] or asked["user"]:
        try:
            start = report.moment(asked["at"] or asked["start"], tz=tz) or timezone.now()
            end = report.moment(asked["end"], tz=tz, end_of_day=True) if not asked["at"] else None
            if asked["case"]:
                case_id, by = report.case_id_of(asked["case"], firm_id=firm.pk), "viewer"
                if case_id is None:
                    raise ValueError("the ledger of this firm has no case with that reference or id")
                answer = history.who_could_open(firm_id=firm.pk, case_id=case_id, start=start, end=end)
            else:
                viewer_id, by = report.user_id_of(asked["user"], firm_id=firm.pk), "case"
                if viewer_id is None:
                    raise ValueError("the ledger of this firm has no user with that name or id")
                answer = history.cases_open_to(firm_id=firm.pk, viewer_id=viewer_id, start=start, end=end)
        except ValueError as exc:
            error = str(exc)
    if answer is not None:
        with timezone.override(tz):
            names = report.answer_labels(answer, firm_id=firm.pk, by=by)
            if request.GET.get("csv"):
                return _csv("memory-access", report.to_csv(report.ANSWER_HEADER, report.answer_rows(answer, names=names, by=by)))
            rows = report.answer_rows(answer, names=names, by=by, time=page_time)
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "title": f"Who could open what — {firm}",
        "firm": firm,
        "firm_tz": tz,
        "firms": [(adapter.firm_slug(f), f) for f in firms] if request.user.is_superuser else [],
        "firm_slug": adapter.firm_slug(firm),
        "asked": asked,
        "error": error,
        "answer": answer,
        "by": by,
        "rows": rows,
        "csv_query": request.GET.urlencode() + "&csv=1",
    }
    with timezone.override(tz):
        return TemplateResponse(request, "admin/graph_memory/access_question.html", context).render()
