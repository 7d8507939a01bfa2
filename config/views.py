"""The reference project's own pages: the landing page at `/`."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from graph_memory.admin.scoping import admin_firm_id


def home(request: HttpRequest) -> HttpResponse:
    """What this site is and where to go from here; links only to what this visitor may open."""
    user = request.user
    context = {
        "may_admin": bool(user.is_active and user.is_staff),
        "may_see_health": bool(user.is_active and (user.is_superuser or admin_firm_id(user) is not None)),
    }
    return TemplateResponse(request, "home.html", context)
