"""The vectors (graph_memory/vectors/): embeddings and each firm's own index."""
