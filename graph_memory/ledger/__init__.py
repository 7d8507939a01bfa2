"""The access ledger (issue 31, item 2): every change to who may open a case's memory, and when.

- `triggers`: the statement triggers that append a row per change to a grant,
  a group membership, a case (created, deleted, moved, its owner) or a user's
  `is_active`, and the append-only guard; `install`/`uninstall`.
- `users`: a user's firm and firm-admin role, which the adapter decides in
  Python, from the user model's signals.
- `baseline`: the access standing when the ledger is installed.
- `history`: the two point-in-time questions, at a time or over a range.

The table is `graph_memory.models.AccessChange`; docs/SECURITY.md says what is
recorded and what never is.
"""

from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS


def install(using: str = DEFAULT_DB_ALIAS) -> int:
    """The triggers, then the baseline if the ledger is empty (after every migrate); returns the triggers."""
    from graph_memory.ledger import baseline, triggers

    count = triggers.install(using=using)
    baseline.seed(using=using)
    return count
