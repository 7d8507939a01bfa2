"""The wall: who may open which case (graph_memory/wall/): access, the sight and its triggers, the write-back guard."""
