"""The access ledger and the served ledger (graph_memory/ledger/)."""
