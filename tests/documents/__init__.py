"""Asking a case's long documents (graph_memory/documents/)."""
