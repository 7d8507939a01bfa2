"""Memory consent in admin: a firm admin excludes a client or a case from the map's list, with a reason, and
includes it again from the exclusions' list. Both scoped to the admin's firm, both calling the consent services."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import HttpRequest
from django.template.response import TemplateResponse

from graph_memory.adapter import NotSupported
from graph_memory.admin.display import counted, log_admin_action, time_column
from graph_memory.admin.scoping import DerivedAdmin
from graph_memory.consent.service import memory_exclude, memory_include
from graph_memory.models import MemoryExclusion, Node
from graph_memory.wall.access import NotFound

_KINDS = {Node.Kind.CASE: "case_id", Node.Kind.CLIENT: "client_id"}


@admin.action(description="Exclude from the memory (the client's consent; asks for a reason)")
def exclude_from_memory(modeladmin: Any, request: HttpRequest, queryset: QuerySet[Any]) -> Any:
    """On the map's nodes (already scoped to the admin's firm): the selected cases and clients."""
    nodes = list(queryset.filter(kind__in=list(_KINDS)).order_by("kind", "label"))
    if not nodes:
        modeladmin.message_user(request, "Select cases or clients to exclude.", messages.WARNING)
        return None
    reason = request.POST.get("reason", "").strip()
    if "apply" not in request.POST or not reason:
        context = {
            **modeladmin.admin_site.each_context(request),
            "opts": modeladmin.model._meta,
            "nodes": nodes,
            "reason": reason,
            "error": "Give the reason." if "apply" in request.POST else "",
            "title": "Exclude from the memory",
        }
        return TemplateResponse(request, "admin/graph_memory/consent_reason.html", context)
    for node in nodes:
        try:
            change = memory_exclude(
                firm_id=node.firm_id, reason=reason, by=request.user, **{_KINDS[node.kind]: node.ref_id}
            )
        except (NotFound, NotSupported):
            modeladmin.message_user(request, f"{node.label}: cannot be excluded here.", messages.ERROR)
            continue
        if change.exclusion is None:
            modeladmin.message_user(request, f"{node.label} was already excluded.", messages.INFO)
            continue
        log_admin_action(request, [node], f"Excluded from the memory: {reason}")
        modeladmin.message_user(
            request,
            f"{node.label}: excluded from the memory ({counted(len(change.case_ids), 'case', 'cases')}, "
            f"{counted(sum(change.deleted.values()), 'derived row', 'derived rows')} deleted).",
            messages.SUCCESS,
        )
    return None


@admin.register(MemoryExclusion)
class MemoryExclusionAdmin(DerivedAdmin):
    """The firm's exclusions; re-including is an action. Adding one starts from the map (Nodes)."""

    ledger_name = None  # ids, labels and the admin's own reason: no memory content
    excluded_at_local = time_column("excluded_at", "excluded")
    list_display = ["kind", "label", "reason", "excluded_by", "excluded_at_local", "firm"]
    list_filter = ["kind", "firm"]
    list_select_related = ["excluded_by", "firm"]
    actions = ["include_in_memory"]
    fields = ["kind", "label", "reason", "excluded_by", "excluded_at_local"]
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        # The map's label of the case or client, from the same firm: one query for the page.
        label = Node.objects.filter(firm_id=OuterRef("firm_id"), kind=OuterRef("kind"), ref_id=OuterRef("ref_id"))
        return super().get_queryset(request).annotate(node_label=Subquery(label.values("label")[:1]))

    @admin.display(description="case or client")
    def label(self, obj: MemoryExclusion) -> str:
        return getattr(obj, "node_label", None) or f"[{obj.kind} #{obj.ref_id}]"

    @admin.action(description="Include again in the memory (restarts from the records)")
    def include_in_memory(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for exclusion in list(queryset):  # scoped: a firm admin's own firm's rows only
            try:
                change = memory_include(firm_id=exclusion.firm_id, **{f"{exclusion.kind}_id": exclusion.ref_id})
            except NotFound:
                continue  # included meanwhile
            log_admin_action(request, [exclusion], "Included again in the memory.")
            self.message_user(
                request,
                f"{self.label(exclusion)}: included again; "
                f"{counted(len(change.case_ids), 'case', 'cases')} will be rewritten by the next refresh.",
                messages.SUCCESS,
            )
