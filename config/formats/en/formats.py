"""Times as admin shows them in English: with the zone's abbreviation, the form `graph_memory.plumbing.display` uses
("2026-12-01 03:31 EST"). Every other format is Django's."""

DATETIME_FORMAT = "Y-m-d H:i T"
SHORT_DATETIME_FORMAT = "Y-m-d H:i T"
