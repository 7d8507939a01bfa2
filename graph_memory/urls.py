"""URLs a host includes: `path("api/memory/", include("graph_memory.urls"))`."""

from __future__ import annotations

from django.urls import include, path

urlpatterns = [path("", include("graph_memory.api.urls"))]
