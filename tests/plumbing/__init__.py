"""The plumbing (graph_memory/plumbing/): one writer of the model-call log."""
