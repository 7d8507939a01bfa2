from __future__ import annotations

from django.urls import path

app_name = "graph_memory_api"

urlpatterns: list = []
