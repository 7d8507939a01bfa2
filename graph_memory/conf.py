"""The memory layer's settings: one prefix, read here and nowhere else.

A host sets `GRAPH_MEMORY = {...}` in its settings; any key left out takes
the default below. Environment variables named `GRAPH_MEMORY_<KEY>` override
both (handy for the demo and CI). `checks.py` validates the result.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

NOTICE = (
    "AI-written orientation compiled from this firm's own records for the signed-in user; "
    "not authoritative. Verify anything that matters against the live case file before relying on it."
)

# The host's models are top-level settings, like AUTH_USER_MODEL, because the
# app's migrations follow them (migrations.swappable_dependency). These are the
# reference host's.
DEFAULT_CASE_MODEL = "practice.Case"
DEFAULT_FIRM_MODEL = "accounts.Firm"

DEFAULTS: dict[str, Any] = {
    # The host's adapter: dotted path of a graph_memory.adapter.MemoryAdapter subclass.
    "ADAPTER": None,
    # Notice carried by every summary, brief and API answer.
    "NOTICE": NOTICE,
    # Reads.
    "PAGE_DEFAULT": 25,
    "PAGE_MAX": 100,
    "QUERY_MAX_CHARS": 500,
    # Per-user rate of the assistant's API ("<n>/<s|min|hour|day>"; None: no throttling).
    "THROTTLE_RATE": "120/min",
    # Summary writer: "auto" (openai when OPENAI_API_KEY is set, else extractive), "openai" or "extractive".
    "WRITER": "auto",
    "OPENAI_MODEL": "gpt-4o-mini",
    "OPENAI_TIMEOUT": 30.0,
    "OPENAI_MAX_RETRIES": 1,
    # Output cap of one summary call; None: the most a valid answer to the output schema can need.
    "OPENAI_MAX_TOKENS": None,
    # How long (seconds) a server's refusal of a response format is remembered, in the cache.
    "OPENAI_FORMAT_MEMORY_TTL": 7 * 24 * 3600,
    # Regression guard (summaries/guard.py): a rewrite replaces the current summary only if at
    # least this share of its written statements survive verification, and it keeps at least
    # this share of the current summary's statements (and field records) still backed by the records.
    "GUARD_MIN_KEPT_RATE": 0.5,
    "GUARD_MIN_SHARE": 0.6,
    # Context slice caps.
    "CONTEXT_MAX_DOCUMENTS": 8,
    "CONTEXT_MAX_DRAFTS": 5,
    "CONTEXT_MAX_DEADLINES": 10,
    "CONTEXT_MAX_INVOICES": 10,
    "CONTEXT_MAX_NOTES": 10,
    "CONTEXT_ITEM_MAX_CHARS": 1200,
    "CONTEXT_MAX_CHARS": 16000,
    # Embeddings: "auto" (local when installed, else none), "local", "openai" or "none".
    "EMBEDDER": "auto",
    "EMBEDDING_MODEL": "text-embedding-3-small",
    "EMBEDDING_DIMENSIONS": 384,
    # Nightly refresh.
    "NIGHTLY_CRONTAB": "0 2 * * *",
    "NIGHTLY_BATCH_SIZE": 50,
    "NIGHTLY_TOKEN_BUDGET": None,
    "ON_DEMAND_TIMEOUT": 20.0,
    # Long documents (graph_memory/documents/): routing indexes and answers quoted from the pages.
    # A model builds an index over batches of this many pages, each page cut to this many characters.
    "DOCUMENT_INDEX_BATCH_PAGES": 20,
    # Documents shorter than this are indexed offline even when a model is configured (their headings suffice).
    "DOCUMENT_MODEL_MIN_PAGES": 20,
    "DOCUMENT_PAGE_MAX_CHARS": 6000,
    # A section spans at most this many pages (a longer one is split in parts) and keeps at most
    # this many verified terms.
    "DOCUMENT_SECTION_MAX_PAGES": 25,
    "DOCUMENT_TERMS_PER_SECTION": 24,
    # The router reads at most this many characters of the case's indexes.
    "DOCUMENT_ROUTER_MAX_CHARS": 30000,
    # The answer reads at most this many pages of the sections routed to, and serves at most this many quotes.
    "DOCUMENT_ANSWER_MAX_PAGES": 30,
    "DOCUMENT_ANSWER_MAX_QUOTES": 5,
    # Indexes rebuilt per firm and night (after the summaries, within NIGHTLY_TOKEN_BUDGET), and
    # indexes built on the spot, offline, when a question reaches documents that have none yet.
    "NIGHTLY_DOCUMENT_BATCH_SIZE": 20,
    "DOCUMENT_ON_DEMAND_MAX": 3,
    # Context slice caps not covered above (summaries/context.py).
    "CONTEXT_MAX_COUNTERPARTIES": 10,
    "CONTEXT_MAX_PAGES_PER_DOCUMENT": 3,
    # Lawyers' reads: keep the nodes of the cases each grant opens beside the map, per user or group
    # granted (graph_memory/sight.py, on hosts that grant through django-guardian), so a walk, lookup
    # or conflict check costs what they see, however many cases they may open; False answers from
    # their cases every time.
    "LAWYER_SIGHT": True,
    # Search: an exact scan when the viewer sees at most SEARCH_EXACT_MAX vectors, or at most
    # SEARCH_EXACT_SHARE of the vectors in the index; otherwise the HNSW index (iterative scan)
    # with this candidate list size (hnsw.ef_search). docs/BENCHMARKS.md has the crossover.
    "SEARCH_EXACT_MAX": 1000,
    "SEARCH_EXACT_SHARE": 0.05,
    "SEARCH_EF_SEARCH": 300,
    # Search: a firm holding at least this many vectors gets an HNSW index of its own
    # (graph_memory/firm_indexes.py), walked with this shorter candidate list.
    "SEARCH_FIRM_INDEX_MIN": 2000,
    "SEARCH_FIRM_EF_SEARCH": 100,
    # Search: the cosine similarity a summary must reach to be a hit by meaning, per embedding
    # model ("*": any other; None: meaning alone never qualifies a hit). The local model's floor
    # is measured by bench/bench_search.py on case-like texts (docs/BENCHMARKS.md).
    "SEARCH_MIN_SIMILARITY": {"local:all-MiniLM-L6-v2": 0.33, "*": None},
    # Lint (graph_memory/lint/): when `setup_memory_schedule` schedules the weekly run (UTC); a
    # case stale for more nights than this is reported; a summary is weak when verification
    # dropped more than this share of its written statements, or when it keeps fewer than
    # LINT_WEAK_MIN_STATEMENTS for a case of at least LINT_WEAK_MANY_RECORDS records; two
    # parties are near-duplicates when the conflict matcher's similarity reaches this.
    "LINT_CRONTAB": "0 3 * * 0",
    "LINT_STALE_NIGHTS": 7,
    "LINT_WEAK_DROPPED_SHARE": 0.5,
    "LINT_WEAK_MIN_STATEMENTS": 2,
    "LINT_WEAK_MANY_RECORDS": 20,
    "LINT_NEAR_DUPLICATE_MIN_SIMILARITY": 0.8,
    # Compounding (notes.py, sources.py, memory_index.py): an assistant-filed note's caps and
    # per-user rate ("<n>/<s|min|hour|day>"; None: no limit); a source's text per answer, in
    # characters (default and most); the memory index's size in UTF-8 bytes and its gist per case.
    "NOTE_MAX_CHARS": 20000,
    "NOTE_TITLE_MAX_CHARS": 200,
    "NOTE_RATE": "30/hour",
    "SOURCE_CHARS_DEFAULT": 8000,
    "SOURCE_CHARS_MAX": 50000,
    "INDEX_MAX_BYTES": 4096,
    "INDEX_GIST_CHARS": 160,
}

_INT_KEYS = {k for k, v in DEFAULTS.items() if isinstance(v, int) and not isinstance(v, bool)}
_OPTIONAL_INT_KEYS = {"NIGHTLY_TOKEN_BUDGET", "OPENAI_MAX_TOKENS"}  # None by default, an integer when set
_FLOAT_KEYS = {k for k, v in DEFAULTS.items() if isinstance(v, float)}
_BOOL_KEYS = {k for k, v in DEFAULTS.items() if isinstance(v, bool)}


def _from_env(key: str) -> Any:
    raw = os.environ.get(f"GRAPH_MEMORY_{key}")
    if raw is None:
        return None
    if key in _INT_KEYS or key in _OPTIONAL_INT_KEYS:
        return int(raw) if raw.strip() else None
    if key in _FLOAT_KEYS:
        return float(raw)
    if key in _BOOL_KEYS:
        if raw.strip().lower() not in {"1", "true", "yes", "on", "0", "false", "no", "off"}:
            raise ImproperlyConfigured(f"GRAPH_MEMORY_{key} must be one of 1, true, yes, on, 0, false, no, off")
        return raw.strip().lower() in {"1", "true", "yes", "on"}
    return raw


def get(key: str) -> Any:
    """The current value of one setting (read each time, so tests can override)."""
    if key not in DEFAULTS:
        raise KeyError(f"unknown GRAPH_MEMORY setting {key!r}")
    env_value = _from_env(key)
    if env_value is not None:
        return env_value
    return getattr(settings, "GRAPH_MEMORY", {}).get(key, DEFAULTS[key])


def case_model_label() -> str:
    """settings.GRAPH_MEMORY_CASE_MODEL ("app_label.ModelName"): the host's case model."""
    return getattr(settings, "GRAPH_MEMORY_CASE_MODEL", DEFAULT_CASE_MODEL)


def firm_model_label() -> str:
    """settings.GRAPH_MEMORY_FIRM_MODEL ("app_label.ModelName"): the host's firm model."""
    return getattr(settings, "GRAPH_MEMORY_FIRM_MODEL", DEFAULT_FIRM_MODEL)


def page_size(limit: int | None) -> int:
    """The page size of a read: PAGE_DEFAULT when not given; out of range is the
    caller's error (ValueError), never a silent cut."""
    if limit is None:
        return int(get("PAGE_DEFAULT"))
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= int(get("PAGE_MAX")):
        raise ValueError(f"limit must be an integer from 1 to {get('PAGE_MAX')}")
    return limit


def openai_api_key() -> str:
    return os.environ.get("OPENAI_API_KEY", "")


def openai_base_url() -> str | None:
    return os.environ.get("OPENAI_BASE_URL") or None
