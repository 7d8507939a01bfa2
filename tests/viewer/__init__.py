"""The viewer's reads (graph_memory/viewer/): every public function takes viewer=."""
