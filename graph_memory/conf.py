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
    # Each key has its own comment: docs/settings.md is generated from them (docs/settings_reference.py),
    # and a test fails when a key has none. `# --- Title ---` lines are the page's sections.
    # --- The host ---
    # Dotted path of the host's subclass of `graph_memory.adapter.MemoryAdapter`, the one door to its
    # models. Unset, not importable or not such a subclass: E033.
    "ADAPTER": None,
    # The fixed notice on every summary, brief and API answer: orientation to verify, not fact.
    "NOTICE": NOTICE,
    # --- Reads and the API ---
    # Page size of every list when the request gives no `limit`.
    "PAGE_DEFAULT": 25,
    # The largest `limit` of every list; more is a 400, never a silent cut.
    "PAGE_MAX": 100,
    # The longest `q` or `name` a read accepts, in characters.
    "QUERY_MAX_CHARS": 500,
    # Per-user rate of the assistant's API, `<n>/<period>` (periods `s`, `min`, `hour`, `day`), counted
    # in the default cache, which every process must share; None: no throttling. A bad rate is E038.
    "THROTTLE_RATE": "120/min",
    # --- The summary writer ---
    # `auto` (`openai` when `OPENAI_API_KEY` is set, else `extractive`), `openai` or `extractive`.
    "WRITER": "auto",
    # The chat model the `openai` writer asks, on any OpenAI-compatible server (`OPENAI_BASE_URL`).
    "OPENAI_MODEL": "gpt-4o-mini",
    # Seconds one HTTP call to the model server may take (summaries, document indexes and answers, embeddings).
    "OPENAI_TIMEOUT": 30.0,
    # Retries of a connection error, a 429 or a 5xx; never of a timeout, because the server is still
    # generating for the request the client gave up on.
    "OPENAI_MAX_RETRIES": 1,
    # Output cap of one summary call, in tokens; None: the most a valid answer to the output schema can need.
    "OPENAI_MAX_TOKENS": None,
    # Seconds a server's refusal of a response format is remembered, in the default cache (so every
    # process skips the format it refused).
    "OPENAI_FORMAT_MEMORY_TTL": 7 * 24 * 3600,
    # Regression guard (summaries/guard.py): a rewrite replaces the current summary only if at least
    # this share of the sentence ids it selected are in the slice.
    "GUARD_MIN_KEPT_RATE": 0.5,
    # ... and only if it serves at least this share as many distinct sentences, and covers this share
    # of the distinct records and field records, as the current summary does with what its records
    # still back. A weaker rewrite is recorded as rejected and the case stays stale.
    "GUARD_MIN_SHARE": 0.6,
    # --- A case's slice (what a summary is written from) ---
    # Documents in a slice, latest first (processed ones only).
    "CONTEXT_MAX_DOCUMENTS": 8,
    # Pages of each document in a slice, from the first.
    "CONTEXT_MAX_PAGES_PER_DOCUMENT": 3,
    # Drafts in a slice, latest first.
    "CONTEXT_MAX_DRAFTS": 5,
    # Deadlines in a slice: open ones first, soonest first; then done ones, most recent first.
    "CONTEXT_MAX_DEADLINES": 10,
    # Invoices in a slice, latest first.
    "CONTEXT_MAX_INVOICES": 10,
    # Working notes in a slice, latest first.
    "CONTEXT_MAX_NOTES": 10,
    # Counterparties in a slice's header.
    "CONTEXT_MAX_COUNTERPARTIES": 10,
    # Characters of each item's text (description, note, draft, page); a sentence the cut splits gets no id.
    "CONTEXT_ITEM_MAX_CHARS": 1200,
    # Characters of the whole slice.
    "CONTEXT_MAX_CHARS": 16000,
    # --- Embeddings and search ---
    # `auto` (`local` when the `local-embeddings` extra is installed, else `none`), `local`
    # (all-MiniLM-L6-v2 on the CPU, offline), `openai` (the embeddings API) or `none` (search by words only).
    "EMBEDDER": "auto",
    # The model the `openai` embedder asks.
    "EMBEDDING_MODEL": "text-embedding-3-small",
    # Width of the stored vectors; the migration's column is 384-d, so any other value is E030.
    "EMBEDDING_DIMENSIONS": 384,
    # Search ranks by an exact scan when the viewer sees at most this many vectors ...
    "SEARCH_EXACT_MAX": 1000,
    # ... or at most this share of the index (its planner estimate); otherwise it walks the HNSW index
    # with an iterative scan. docs/BENCHMARKS.md has the crossover.
    "SEARCH_EXACT_SHARE": 0.05,
    # The HNSW candidate list size (`hnsw.ef_search`) of a walk of the index every firm shares.
    "SEARCH_EF_SEARCH": 300,
    # A firm holding at least this many vectors gets an HNSW index of its own (graph_memory/vectors/firm_indexes.py;
    # built after its nightly refresh or by `manage.py search_indexes`); below half of it, the index goes.
    "SEARCH_FIRM_INDEX_MIN": 2000,
    # The candidate list size of a walk of a firm's own index (it meets no other firm's vectors). At 100,
    # a practice group's member (a tenth of a 50,000-case firm) got a recall@10 of 0.90; at 400, 1.0 for
    # every class of viewer in bench_scale's firm (docs/BENCHMARKS.md, "Scale").
    "SEARCH_FIRM_EF_SEARCH": 400,
    # The cosine similarity a summary must reach to be a hit by meaning, per embedding model (`"*"`: any
    # other model; None: meaning alone never qualifies a hit, and `manage.py check` warns, W040); JSON in
    # the environment. The local model's floor is measured by bench/bench_search.py (docs/BENCHMARKS.md).
    "SEARCH_MIN_SIMILARITY": {"local:all-MiniLM-L6-v2": 0.33, "*": None},
    # Lawyers' walks, lookups and briefs read the sight: the nodes of the cases each grant opens, per
    # user or group granted, kept beside the map row by row by triggers (graph_memory/wall/sight.py; hosts
    # that grant through django-guardian only), so a read costs what it finds, not how many cases they
    # may open. False: from the cases they may open every time.
    "LAWYER_SIGHT": True,
    # A lawyer who may open at most this many cases gets a conflict check that starts from the parties of
    # their cases, and a memory index sorted from their cases (so does anyone, a firm admin too): its time
    # follows what they may see, and a hidden case or party costs nothing. Past it, the check starts from the
    # firm's matching parties, as a firm admin's does, and the index walks the firm's cases most recently
    # active first; each probes the wall per row, so its time then grows with the firm's matches, or with
    # the firm's cases more recently active than the page, hidden ones included (docs/SECURITY.md, "Timing
    # side channels").
    "VISIBLE_FIRST_MAX": 1000,
    # --- The nightly refresh ---
    # When `setup_memory_schedule` schedules the nightly refresh (crontab, UTC). A bad one is E020.
    "NIGHTLY_CRONTAB": "0 2 * * *",
    # Stale cases rewritten per firm per night at most, oldest first.
    "NIGHTLY_BATCH_SIZE": 50,
    # Model tokens per firm per night; the run stops claiming cases once spent. None: no budget.
    "NIGHTLY_TOKEN_BUDGET": None,
    # Seconds a first summary may take when a case without one is asked about.
    "ON_DEMAND_TIMEOUT": 20.0,
    # --- Long documents (graph_memory/documents/) ---
    # Documents shorter than this are indexed offline, from their headings, even with a model configured.
    "DOCUMENT_MODEL_MIN_PAGES": 20,
    # Pages per model call when a model builds a document's routing index ...
    "DOCUMENT_INDEX_BATCH_PAGES": 20,
    # ... each page cut to this many characters in that call.
    "DOCUMENT_PAGE_MAX_CHARS": 6000,
    # The longest section of an index, in pages; a longer one is split in parts.
    "DOCUMENT_SECTION_MAX_PAGES": 25,
    # Verified terms kept per section of an index.
    "DOCUMENT_TERMS_PER_SECTION": 24,
    # The most of a case's document indexes the router call reads, in characters (under 1000 is E091).
    "DOCUMENT_ROUTER_MAX_CHARS": 30000,
    # Pages of the routed sections an answer reads at most.
    "DOCUMENT_ANSWER_MAX_PAGES": 30,
    # Quotes an answer serves at most (offline: 3).
    "DOCUMENT_ANSWER_MAX_QUOTES": 5,
    # Routing indexes rebuilt per firm per night, after the summaries and within what is left of
    # NIGHTLY_TOKEN_BUDGET.
    "NIGHTLY_DOCUMENT_BATCH_SIZE": 20,
    # Indexes built on the spot, offline, when a question reaches documents that have none yet.
    "DOCUMENT_ON_DEMAND_MAX": 3,
    # --- Lint (graph_memory/lint/) ---
    # When `setup_memory_schedule` schedules the weekly lint (crontab, UTC). A bad one is E100.
    "LINT_CRONTAB": "0 3 * * 0",
    # A case stale (or with activity and no summary) for more nights than this is reported.
    "LINT_STALE_NIGHTS": 7,
    # A summary is weak when verification dropped more than this share of its written statements ...
    "LINT_WEAK_DROPPED_SHARE": 0.5,
    # ... or when it keeps fewer written statements than this ...
    "LINT_WEAK_MIN_STATEMENTS": 2,
    # ... for a case of at least this many records (the adapter's `case_record_count()`).
    "LINT_WEAK_MANY_RECORDS": 20,
    # Two parties are near-duplicates when the conflict matcher's similarity reaches this.
    "LINT_NEAR_DUPLICATE_MIN_SIMILARITY": 0.8,
    # --- Notes, sources and the memory index ---
    # The longest text of a note the assistant files, in characters (more is a 400).
    "NOTE_MAX_CHARS": 20000,
    # The longest title of such a note, in characters (more is a 400).
    "NOTE_TITLE_MAX_CHARS": 200,
    # Notes a user may file per period, `<n>/<period>` (periods `s`, `min`, `hour`, `day`), a fixed window
    # in the default cache; every attempt counts, on hidden cases alike. None: no limit. A bad one is E081.
    "NOTE_RATE": "30/hour",
    # The write-back guard reads the texts (records, summary) of at most this many of the filer's cases whose
    # audience differs from the note's case, most recently active first; names and case numbers of all of them.
    "NOTE_GUARD_MAX_CASES": 500,
    # Characters of a source's text per answer when the request gives no `limit` ...
    "SOURCE_CHARS_DEFAULT": 8000,
    # ... and the most a request may ask for (more is a 400).
    "SOURCE_CHARS_MAX": 50000,
    # Size cap of the memory index in UTF-8 bytes, whole lines only (at least 512).
    "INDEX_MAX_BYTES": 4096,
    # Characters of each case's first written statement in the memory index.
    "INDEX_GIST_CHARS": 160,
    # --- The served ledger (issue 31) ---
    # The key of the ledger's query fingerprints and of its hash chain (any string). None: derived from
    # SECRET_KEY. Set it to a key of its own and never change it: rows sealed under another key fail
    # `memory_ledger verify`, and the same query no longer has the same fingerprint.
    "SERVED_LEDGER_KEY": None,
    # Days a served-ledger row is kept before `memory_ledger prune` may remove it (7 years).
    "SERVED_LEDGER_RETENTION_DAYS": 2557,
    # True: a legal hold; `memory_ledger prune` removes nothing, whatever the rows' age.
    "SERVED_LEDGER_LEGAL_HOLD": False,
    # False (the default): a read's ledger row is committed without waiting for its WAL flush
    # (PostgreSQL's `synchronous_commit = off`, for that row's transaction only): the INSERT has
    # succeeded before the answer is given, but a database crash may lose the rows of its last
    # fraction of a second (at most three times `wal_writer_delay`), whose answers were given. True:
    # each read waits for its row's flush (on a busy disk, milliseconds: docs/BENCHMARKS.md, "Served
    # ledger", measures both). A row written inside a transaction (a note's) always commits with it.
    "SERVED_LEDGER_SYNCHRONOUS_COMMIT": False,
    # Seconds between two runs of the periodic task that seals new rows into each firm's chain.
    "SERVED_LEDGER_SEAL_SECONDS": 60,
    # Rows one firm's seal takes per transaction (the task loops until none is left).
    "SERVED_LEDGER_SEAL_BATCH": 5000,
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
