"""Django admin as a firm admin reads it (graph_memory/admin/)."""
