"""Memory consent (graph_memory/consent/)."""
