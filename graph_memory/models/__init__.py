from __future__ import annotations

from graph_memory.models.activity import CaseActivity
from graph_memory.models.consent import MemoryExclusion
from graph_memory.models.documents import DocumentIndex, DocumentQuery
from graph_memory.models.graph import Edge, Node
from graph_memory.models.ledger import AccessChange
from graph_memory.models.lint import LintFinding, LintRun
from graph_memory.models.refresh import MissedChange, RefreshRun
from graph_memory.models.served import ServedChain, ServedRow
from graph_memory.models.sight import Sight, SightCase, SightState
from graph_memory.models.summaries import AICall, CaseSummary, SummaryVersion
from graph_memory.models.writeback import NoteFiling, NoteRefusal

__all__ = [
    "AICall",
    "AccessChange",
    "CaseActivity",
    "CaseSummary",
    "DocumentIndex",
    "DocumentQuery",
    "Edge",
    "LintFinding",
    "LintRun",
    "MemoryExclusion",
    "MissedChange",
    "Node",
    "NoteFiling",
    "NoteRefusal",
    "RefreshRun",
    "ServedChain",
    "ServedRow",
    "Sight",
    "SightCase",
    "SightState",
    "SummaryVersion",
]
