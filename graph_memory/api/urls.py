from __future__ import annotations

from django.urls import path

from graph_memory.api import views

app_name = "graph_memory_api"

urlpatterns: list = [
    # Connection map. Node ids are matched as any string: a malformed id must
    # answer the same 404 body as an unknown one, not the resolver's own 404.
    path("nodes/", views.NodeLookupApi.as_view(), name="nodes"),
    path("nodes/<str:node_id>/neighbors/", views.NodeNeighborsApi.as_view(), name="node-neighbors"),
    path("conflicts/", views.ConflictsCheckApi.as_view(), name="conflicts"),
    # Briefs and search.
    path("nodes/<str:node_id>/brief/", views.NodeBriefApi.as_view(), name="node-brief"),
    path("search/", views.SearchApi.as_view(), name="search"),
    # The abilities above as function-calling tool definitions.
    path("tools/", views.ToolsApi.as_view(), name="tools"),
]
