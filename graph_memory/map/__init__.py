"""The connection map: built from the host's records, deterministically, with no model call; and its names."""
