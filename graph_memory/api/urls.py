from __future__ import annotations

from django.urls import path

from graph_memory.api import views, views_documents, views_memory

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
    # Compounding: file a note into a case, open a source a summary cites, the memory index.
    # A source id may hold any character but "#" (sent as %23); `path` also takes a "/".
    path("cases/<str:case_id>/notes/", views_memory.CaseNoteFileApi.as_view(), name="case-notes"),
    path("cases/<str:case_id>/sources/<path:source_id>/", views_memory.CaseSourceApi.as_view(), name="case-source"),
    path("index/", views_memory.MemoryIndexApi.as_view(), name="memory-index"),
    # Ask a case's long documents: verbatim quotes with pages (JSON, or SSE).
    path("cases/<str:case_id>/ask/", views_documents.CaseAskApi.as_view(), name="case-ask"),
    path("cases/<str:case_id>/ask/stream/", views_documents.CaseAskStreamApi.as_view(), name="case-ask-stream"),
    # The abilities above as function-calling tool definitions.
    path("tools/", views.ToolsApi.as_view(), name="tools"),
]
