"""The memory layer's public functions for app code: `from graph_memory import services`.

Every read takes the viewer and starts from the viewer's scope (`graph_memory.wall.scope`);
writes (rebuilds, summaries, stale marks) never reason about viewers. The API, MCP and
admin reach the viewer's reads through this module only (tests/contracts/test_imports.py).
"""

from __future__ import annotations

# Each feature module re-exports its public functions here.
# Connection map (graph.py writes, selectors.py reads).
from graph_memory.map.graph import GraphChanges as GraphChanges
from graph_memory.map.graph import graph_rebuild_firm as graph_rebuild_firm
from graph_memory.map.graph import graph_refresh_label as graph_refresh_label
from graph_memory.map.graph import graph_sync_case as graph_sync_case
from graph_memory.refresh import ensure_summary as ensure_summary
from graph_memory.refresh import firms_to_refresh as firms_to_refresh
from graph_memory.refresh import mark_stale as mark_stale
from graph_memory.refresh import note_on_run as note_on_run
from graph_memory.refresh import record_unqueued_runs as record_unqueued_runs
from graph_memory.refresh import refresh_firm as refresh_firm
from graph_memory.refresh import repair_missed_changes as repair_missed_changes

# Case summaries (graph_memory/summaries/), and each case's last activity, which the index orders by.
from graph_memory.summaries.activity import activity_rebuild as activity_rebuild
from graph_memory.summaries.rewrite import SummaryFailed as SummaryFailed
from graph_memory.summaries.rewrite import summarize_case as summarize_case
from graph_memory.summaries.rewrite import summary_payload as summary_payload
from graph_memory.viewer.selectors import ConflictReport as ConflictReport
from graph_memory.viewer.selectors import NeighborPage as NeighborPage
from graph_memory.viewer.selectors import NodePage as NodePage
from graph_memory.viewer.selectors import NodeRef as NodeRef
from graph_memory.viewer.selectors import conflicts_check as conflicts_check
from graph_memory.viewer.selectors import node_get as node_get
from graph_memory.viewer.selectors import node_neighbors as node_neighbors
from graph_memory.viewer.selectors import nodes_lookup as nodes_lookup

# isort: split
# Briefs and search (briefs.py, search.py, embeddings.py).
from graph_memory.vectors.embeddings import backfill_missing_embeddings as backfill_missing_embeddings
from graph_memory.vectors.embeddings import embed_case_summary as embed_case_summary
from graph_memory.vectors.firm_indexes import ensure_search_indexes as ensure_search_indexes
from graph_memory.viewer.briefs import Brief as Brief
from graph_memory.viewer.briefs import node_brief as node_brief
from graph_memory.viewer.search import SearchResult as SearchResult
from graph_memory.viewer.search import search_cases as search_cases

# isort: split
# Lint (graph_memory/lint/): the weekly health check of one firm's memory.
from graph_memory.lint import lint_firm as lint_firm
from graph_memory.lint import lint_firms as lint_firms

# isort: split
# Long documents (graph_memory/documents/): routing indexes and answers quoted from the pages.
from graph_memory.documents.answers import Answer as Answer
from graph_memory.documents.answers import ask_documents as ask_documents
from graph_memory.documents.routing import build_document_index as build_document_index
from graph_memory.documents.routing import mark_documents_stale as mark_documents_stale
from graph_memory.documents.routing import rebuild_stale_indexes as rebuild_stale_indexes

# isort: split
# The access ledger (graph_memory/ledger/): who could open which case's memory, when, and why.
from graph_memory.ledger.history import cases_open_to as cases_open_to
from graph_memory.ledger.history import who_could_open as who_could_open

# isort: split
# Memory consent (issue 31, item 4): a client or a case kept out of the memory.
from graph_memory.consent.exclusions import MemoryExcluded as MemoryExcluded
from graph_memory.consent.exclusions import case_excluded as case_excluded
from graph_memory.consent.service import memory_exclude as memory_exclude
from graph_memory.consent.service import memory_include as memory_include

# isort: split
# The wall's answer for anything hidden or absent, the same for both.
from graph_memory.wall.access import NotFound as NotFound

# isort: split
# What the assistant opens and files (graph_memory/viewer/): the memory index, a cited source, a note.
from graph_memory.viewer.memory_index import MemoryIndex as MemoryIndex
from graph_memory.viewer.memory_index import memory_index as memory_index
from graph_memory.viewer.notes import IDEMPOTENCY_HEADER as IDEMPOTENCY_HEADER
from graph_memory.viewer.notes import IDEMPOTENCY_KEY_MAX_CHARS as IDEMPOTENCY_KEY_MAX_CHARS
from graph_memory.viewer.notes import ORIGIN_ID_MAX_CHARS as ORIGIN_ID_MAX_CHARS
from graph_memory.viewer.notes import ORIGIN_MAX_MESSAGES as ORIGIN_MAX_MESSAGES
from graph_memory.viewer.notes import NoteInvalid as NoteInvalid
from graph_memory.viewer.notes import NoteRateLimited as NoteRateLimited
from graph_memory.viewer.notes import note_file as note_file
from graph_memory.viewer.sources import source_get as source_get
from graph_memory.wall.writeback.guard import NoteCrossesWall as NoteCrossesWall
