"""Memory consent (issue 31, item 4): a client or a case kept out of the memory.

- `exclusions`: the rule, one SQL condition over a case row (excluded itself,
  or its client is), used by every writer of derived memory and by the
  checks (`case_excluded`, `excluded_case_ids`), and `MemoryExcluded`.
- `service`: `memory_exclude` / `memory_include`, which delete the case's
  derived memory, or restart it from the records, and append the access
  ledger's `consent` rows in the same transaction.

The table is `graph_memory.models.MemoryExclusion`; docs/SECURITY.md
("Memory consent") says what an exclusion does and does not do.
"""
