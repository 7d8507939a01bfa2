"""The memory layer's public functions for app code: `from graph_memory import services`.

Every read takes the viewer and starts from `graph_memory.access`; writes
(rebuilds, summaries, stale marks) never reason about viewers.
"""

from __future__ import annotations

# Each feature module re-exports its public functions here.
