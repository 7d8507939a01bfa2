"""Writing and verifying summaries (graph_memory/summaries/)."""
