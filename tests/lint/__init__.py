"""The lint pass (graph_memory/lint/)."""
