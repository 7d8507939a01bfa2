"""URLs a host includes: `path("api/memory/", include("graph_memory.urls"))`."""

from __future__ import annotations

from django.urls import include, path, re_path

from graph_memory.api.views import UnknownPathApi

urlpatterns = [
    path("", include("graph_memory.api.urls")),
    # Last: any other path under the API answers the API's own JSON 404 (after
    # authentication), not the host's HTML page, so a client never has to
    # parse two error formats.
    re_path(r"^", UnknownPathApi.as_view(), name="graph-memory-unknown"),
]
