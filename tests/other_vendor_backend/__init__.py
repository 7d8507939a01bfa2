"""A database backend that is not PostgreSQL, for the check that says so (it is never connected to)."""
