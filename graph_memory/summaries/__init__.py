"""Case summaries: the context slice, the rulebook, writers, verification and the service.

App code calls `graph_memory.services.summarize_case`; see `service.py`.
"""
