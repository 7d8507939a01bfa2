"""What each grant reaches in the connection map, kept beside it so a lawyer's reads cost what they see.

A lawyer's read used to start from every case they may open and probe the map
once per case (issue 15: so that hidden rows cost no time), which made a lawyer
on a thousand cases several times slower than a firm admin (issue 14). `Sight`
holds, per *holder* of a grant, the nodes of the cases the grant opens: a
lawyer's walk, lookup or conflict check reads the rows of their own holders
(themselves and each group they are in) through indexes that start with the
holder, so its cost follows what they may see, never what is hidden from them.

Rows are kept per holder, not per viewer (issue 28): a practice group's five
thousand cases are held once, not once per member, so the rows follow the
grants the firm makes, and joining or leaving a group changes no row at all
(a read finds the viewer's groups itself).

They are an index of the wall, never the wall itself:
- database triggers (`graph_memory.wall.sight`) rewrite the rows of exactly the
  (holder, case) pairs a statement touches, in the statement's own transaction:
  a grant adds its case's rows for its holder, a revoke removes them, an edge or
  a node's name changes its case's rows for each of the case's holders. Each
  takes the row of `SightCase` for its cases first, so two writers of one case
  take turns and the second reads what the first committed;
- a read uses these rows only while `SightState.built` is true (a TRUNCATE of
  any table they come from clears it; `sight.build` sets it again); otherwise it
  answers from the cases the viewer may open, as before;
- every row a read returns is checked once more against the wall itself.
Firm admins have none: nothing of their firm is hidden from them.

The table is hash-partitioned by `firm_id` (migration 0020, docs/SCALE.md): every read names the firm, so it
reads one partition, and its indexes are that partition's.
"""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models

from graph_memory import conf


class SightState(models.Model):
    """Whether the rows of `Sight` hold every grant's nodes (one row, id 1)."""

    built = models.BooleanField(default=False, help_text="False after a TRUNCATE until sight.build runs.")
    built_at = models.DateTimeField(null=True)

    class Meta:
        verbose_name = "sight state"

    def __str__(self) -> str:
        return "Sight built" if self.built else "Sight not built"


class SightCase(models.Model):
    """The row every writer of a case's sight rows takes first (an upsert): writers of one case take turns."""

    case = models.OneToOneField(
        conf.case_model_label(), on_delete=models.DO_NOTHING, db_constraint=False, primary_key=True, related_name="+"
    )
    version = models.BigIntegerField(default=0, help_text="Bumped by every statement that rewrites the case's rows.")

    class Meta:
        verbose_name = "sight case"

    def __str__(self) -> str:
        return f"Sight of case {self.case_id} (version {self.version})"


class Sight(models.Model):
    """A node that a grant opens, with the names a lookup needs and the cases it is reached through
    (one row per holder and node: issue 28, a lawyer's node on a holder's nineteen cases was nineteen rows).

    `holder` is the user the grant is to (their id), or the group it is to
    (the group's id, negated): the two kinds of grant django-guardian keeps.
    `cases` are the holder's cases with an edge at this node, ascending, never empty.
    Besides the index below, migration 0024 keeps a GIN index of `cases` (a case's rows, for the
    triggers' rewrites).
    """

    # The firm is in the key because the table is hash-partitioned by it (migration 0020: PostgreSQL wants the
    # partition key in every primary key); a (holder, node) is of one firm, so the key is no wider in effect.
    pk = models.CompositePrimaryKey("holder", "node_id", "firm_id")
    holder = models.BigIntegerField(help_text="A user's id, or a group's id negated.")
    node_id = models.UUIDField()
    firm_id = models.BigIntegerField(help_text="The node's firm.")
    kind = models.CharField(max_length=16)
    label = models.CharField(max_length=300)
    name_key = models.CharField(max_length=300)
    cases = ArrayField(models.BigIntegerField(), help_text="The holder's cases with an edge at the node.")

    class Meta:
        indexes = [
            # A node deleted (the trigger's lookup), and a node's rows for the viewer's holders.
            models.Index(fields=["node_id", "holder"], name="gm_sight_node_holder"),
        ]

    def __str__(self) -> str:
        return f"{self.label} for holder {self.holder}"
