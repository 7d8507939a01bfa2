"""The connection map (graph_memory/map/): its build, its ids and the names it matches."""
