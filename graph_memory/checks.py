"""System checks for the GRAPH_MEMORY settings, run by `manage.py check`."""

from __future__ import annotations

from typing import Any

from django.core import checks

from graph_memory import conf


@checks.register()
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    errors: list[checks.CheckMessage] = []
    try:
        values = {key: conf.get(key) for key in conf.DEFAULTS}
    except ValueError as exc:
        return [checks.Error(f"GRAPH_MEMORY environment override is not a number: {exc}", id="graph_memory.E001")]
    positive = [key for key in conf.DEFAULTS if key.startswith("CONTEXT_MAX_")]
    positive += ["PAGE_DEFAULT", "PAGE_MAX", "QUERY_MAX_CHARS", "CONTEXT_ITEM_MAX_CHARS", "NIGHTLY_BATCH_SIZE"]
    positive += ["SEARCH_EXACT_MAX", "SEARCH_EF_SEARCH"]
    for key in positive:
        if not isinstance(values[key], int) or values[key] < 1:
            errors.append(checks.Error(f"GRAPH_MEMORY['{key}'] must be a positive integer", id="graph_memory.E002"))
    if isinstance(values["PAGE_DEFAULT"], int) and isinstance(values["PAGE_MAX"], int):
        if values["PAGE_DEFAULT"] > values["PAGE_MAX"]:
            errors.append(checks.Error("GRAPH_MEMORY['PAGE_DEFAULT'] exceeds PAGE_MAX", id="graph_memory.E003"))
    if values["WRITER"] not in {"auto", "openai", "extractive"}:
        errors.append(checks.Error("GRAPH_MEMORY['WRITER'] must be auto, openai or extractive", id="graph_memory.E004"))
    if values["EMBEDDER"] not in {"auto", "local", "openai", "none"}:
        errors.append(checks.Error("GRAPH_MEMORY['EMBEDDER'] must be auto, local, openai or none", id="graph_memory.E005"))
    # The vector column's width is fixed by the migration; vectors of another width cannot be stored.
    if values["EMBEDDING_DIMENSIONS"] != conf.DEFAULTS["EMBEDDING_DIMENSIONS"]:
        errors.append(checks.Error(
            f"GRAPH_MEMORY['EMBEDDING_DIMENSIONS'] must be {conf.DEFAULTS['EMBEDDING_DIMENSIONS']} (the migrated vector column)",
            id="graph_memory.E030",
        ))
    budget = values["NIGHTLY_TOKEN_BUDGET"]
    if budget is not None and (not isinstance(budget, int) or budget < 0):
        errors.append(checks.Error("GRAPH_MEMORY['NIGHTLY_TOKEN_BUDGET'] must be None or a non-negative integer", id="graph_memory.E006"))
    # Nightly refresh schedule: caught here, not first at `setup_memory_schedule`.
    from graph_memory.refresh.schedule import InvalidCrontab, parse_crontab

    try:
        parse_crontab(values["NIGHTLY_CRONTAB"])
    except InvalidCrontab as exc:
        errors.append(checks.Error(str(exc), id="graph_memory.E020"))
    timeout = values["ON_DEMAND_TIMEOUT"]
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout < 0:
        errors.append(checks.Error("GRAPH_MEMORY['ON_DEMAND_TIMEOUT'] must be a non-negative number of seconds", id="graph_memory.E021"))
    return errors
