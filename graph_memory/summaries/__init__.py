"""Case summaries: the context slice, its numbered sentences, the rulebook, writers, the selection made
into statements (verify, shorten, meaning), field facts, the regression guard and the service.

App code calls `graph_memory.services.summarize_case`; see `service.py`.
"""
