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
    for key in ("PAGE_DEFAULT", "PAGE_MAX", "CONTEXT_ITEM_MAX_CHARS", "CONTEXT_MAX_CHARS", "NIGHTLY_BATCH_SIZE"):
        if not isinstance(values[key], int) or values[key] < 1:
            errors.append(checks.Error(f"GRAPH_MEMORY['{key}'] must be a positive integer", id="graph_memory.E002"))
    if isinstance(values["PAGE_DEFAULT"], int) and isinstance(values["PAGE_MAX"], int):
        if values["PAGE_DEFAULT"] > values["PAGE_MAX"]:
            errors.append(checks.Error("GRAPH_MEMORY['PAGE_DEFAULT'] exceeds PAGE_MAX", id="graph_memory.E003"))
    if values["WRITER"] not in {"auto", "openai", "extractive"}:
        errors.append(checks.Error("GRAPH_MEMORY['WRITER'] must be auto, openai or extractive", id="graph_memory.E004"))
    if values["EMBEDDER"] not in {"auto", "local", "openai", "none"}:
        errors.append(checks.Error("GRAPH_MEMORY['EMBEDDER'] must be auto, local, openai or none", id="graph_memory.E005"))
    budget = values["NIGHTLY_TOKEN_BUDGET"]
    if budget is not None and (not isinstance(budget, int) or budget < 0):
        errors.append(checks.Error("GRAPH_MEMORY['NIGHTLY_TOKEN_BUDGET'] must be None or a non-negative integer", id="graph_memory.E006"))
    return errors
