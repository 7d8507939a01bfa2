"""What each lawyer reaches in the connection map, kept beside it so their reads cost what they see.

A lawyer's read used to start from every case they may open and probe the map
once per case (issue 15: so that hidden rows cost no time), which made a lawyer
on a thousand cases several times slower than a firm admin (issue 14). These two
tables hold, per viewer, the nodes of the cases they may open: a lawyer's walk,
lookup or conflict check reads their own rows, by primary key. A third,
`SightVector`, holds their cases' summary vectors side by side, so that a
lawyer's exact search by meaning reads a few contiguous pages rather than one
page per case.

They are an index of the wall, never the wall itself:
- database triggers (`graph_memory.sight`) bump `SightViewer.version` in the
  statement that changes a grant, a group, a case's firm, an edge, a node's
  name or a summary's vector, whatever wrote it (bulk inserts and raw SQL included);
- a read uses these rows only while `built_version = version` and the viewer's
  firm is the one they were built for; otherwise it answers from the cases the
  viewer may open, as before, and the rows are rebuilt after it;
- every row a read returns is checked once more against the wall itself.
Firm admins have none: nothing of their firm is hidden from them.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from pgvector.django import VectorField

from graph_memory import conf


class SightViewer(models.Model):
    """One viewer's state: the version the triggers bump, and the version their rows were built from."""

    viewer = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.DO_NOTHING, db_constraint=False, primary_key=True, related_name="+"
    )
    # Triggers write this row too, so it has no foreign-key constraint: a user deleted with their
    # grants leaves a row no read can reach (the wall finds no such viewer).
    firm_id = models.BigIntegerField(null=True, help_text="The firm the rows were built for.")
    version = models.BigIntegerField(default=0, help_text="Bumped by triggers on every change that could matter.")
    built_version = models.BigIntegerField(null=True, help_text="The version the rows were built from.")
    built_at = models.DateTimeField(null=True)

    class Meta:
        verbose_name = "viewer's sight"

    def __str__(self) -> str:
        state = "current" if self.built_version == self.version else "stale"
        return f"Sight of viewer {self.viewer_id} ({state})"


class Sight(models.Model):
    """A node of a case the viewer may open, with the names a lookup needs (one row per node and case)."""

    pk = models.CompositePrimaryKey("viewer_id", "node_id", "case_id")
    viewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.DO_NOTHING, db_constraint=False, db_index=False, related_name="+"
    )
    node_id = models.UUIDField()
    case = models.ForeignKey(
        conf.case_model_label(), on_delete=models.DO_NOTHING, db_constraint=False, db_index=False, related_name="+"
    )
    kind = models.CharField(max_length=16)
    label = models.CharField(max_length=300)
    name_key = models.CharField(max_length=300)
    # A client's or counterparty's conflict-check strings (its `party_variants` and its exact key) as
    # numbers (names.variant_hash): a lawyer's conflict check reads these instead of every party's node.
    variants = ArrayField(models.IntegerField(), null=True, help_text="A party's index strings, hashed.")

    class Meta:
        indexes = [models.Index(fields=["node_id"], name="gm_sight_node")]  # the node trigger's lookup

    def __str__(self) -> str:
        return f"{self.label} for viewer {self.viewer_id}"


class SightVector(models.Model):
    """The summary vector of a case the viewer may open, copied at the rebuild (one row per case)."""

    pk = models.CompositePrimaryKey("viewer_id", "case_id")
    viewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.DO_NOTHING, db_constraint=False, db_index=False, related_name="+"
    )
    case = models.ForeignKey(
        conf.case_model_label(), on_delete=models.DO_NOTHING, db_constraint=False, db_index=False, related_name="+"
    )
    embedding_model = models.CharField(max_length=200)
    embedding = VectorField(dimensions=conf.DEFAULTS["EMBEDDING_DIMENSIONS"])

    class Meta:
        indexes = [models.Index(fields=["case"], name="gm_sight_vector_case")]  # the deletion trigger's lookup

    def __str__(self) -> str:
        return f"Vector of case {self.case_id} for viewer {self.viewer_id}"
