from __future__ import annotations

from graph_memory.models.graph import Edge, Node
from graph_memory.models.refresh import RefreshRun
from graph_memory.models.summaries import AICall, CaseSummary, SummaryVersion

__all__ = ["AICall", "CaseSummary", "Edge", "Node", "RefreshRun", "SummaryVersion"]
