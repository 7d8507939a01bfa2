from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.urls import include, path
from drf_spectacular.views import SpectacularSwaggerView

from config.views import home
from graph_memory.api.views import MemorySchemaApi


def healthz(request: HttpRequest) -> JsonResponse:
    """For load balancers: is the database reachable? Carries no data."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:
        return JsonResponse({"status": "unavailable"}, status=503)
    return JsonResponse({"status": "ok"})


urlpatterns = [
    path("", home, name="home"),
    # Every user signs in here (admin's own login admits staff only); LOGIN_URL points here.
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/memory/", include("graph_memory.urls")),
    path("healthz", healthz, name="healthz"),
    # Both require a signed-in user: the schema through the memory's own wiring
    # (401 in the API's error shape), the docs page by sending a browser to the login form.
    path("api/schema/", MemorySchemaApi.as_view(), name="schema"),
    path("api/docs/", login_required(SpectacularSwaggerView.as_view(url_name="schema")), name="api-docs"),
]
