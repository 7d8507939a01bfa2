"""Vectors for search by meaning: the embedders, each summary's vector, and each large firm's own index."""
