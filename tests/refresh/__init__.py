"""Noticing changes and rewriting summaries (graph_memory/refresh/)."""
