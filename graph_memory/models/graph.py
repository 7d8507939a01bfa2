"""The connection map: four node kinds, three edge kinds, every edge owned by one case.

Rows are derived: `graph.py` writes them from the host records and nothing
else does. Ids are UUIDs derived from what the row stands for, so a rebuild
from scratch yields the same ids and an id says nothing about how many rows
exist.
"""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models

from graph_memory import conf

# The deletion neighbourhoods of a party's name words (names.party_variants), computed by
# the SQL function migration 0005 creates: plain SQL, so it needs no extension.
PARTY_VARIANTS_FUNCTION = "graph_memory_party_variants"


def party_variants_expression() -> models.Func:
    return models.Func(
        models.F("firm"), models.F("party_key"), models.F("name_key"), function=PARTY_VARIANTS_FUNCTION,
        output_field=ArrayField(models.TextField()),
    )  # fmt: skip


class Node(models.Model):
    class Kind(models.TextChoices):
        LAWYER = "lawyer", "Lawyer"
        CASE = "case", "Case"
        CLIENT = "client", "Client"
        COUNTERPARTY = "counterparty", "Counterparty"

    id = models.UUIDField(primary_key=True, editable=False)
    # No index of its own: every index below starts with the firm.
    firm = models.ForeignKey(conf.firm_model_label(), on_delete=models.CASCADE, related_name="+", db_index=False)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    ref_id = models.BigIntegerField(help_text="Primary key of the host record this node stands for.")
    label = models.CharField(max_length=300)
    name_key = models.CharField(max_length=300, help_text="Normalised name used by lookup (names.lookup_key).")
    party_key = models.CharField(
        max_length=300, blank=True, help_text="Name as a conflict check compares it (names.party_key); clients and counterparties only."
    )

    class Meta:
        ordering = ["kind", "label", "id"]
        constraints = [models.UniqueConstraint(fields=["firm", "kind", "ref_id"], name="gm_node_unique_ref")]
        indexes = [
            models.Index(fields=["firm", "name_key"], name="gm_node_name_key"),
            models.Index(fields=["firm", "party_key"], name="gm_node_party_key"),
            # The conflict check's candidates (selectors.conflicts_check); every string starts with the firm.
            GinIndex(party_variants_expression(), name="gm_node_party_variants"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.label}"


class Edge(models.Model):
    class Kind(models.TextChoices):
        WORKS_ON = "works_on", "works on"
        FOR_CLIENT = "for_client", "is for client"
        AGAINST = "against", "is against"

    id = models.UUIDField(primary_key=True, editable=False)
    # Only `case` is a foreign key in the database too (deleting a case takes
    # its edges). The firm follows from the case, and the ends are written only
    # by graph.py, which never deletes a node an edge still uses: checking three
    # more keys per row at commit tripled the time of a 60,000-edge rebuild.
    # Django still cascades all four on delete. case, source and target need no
    # index of their own: the composite indexes below lead with them.
    firm = models.ForeignKey(
        conf.firm_model_label(), on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    case = models.ForeignKey(conf.case_model_label(), on_delete=models.CASCADE, related_name="+", db_index=False)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    source = models.ForeignKey(
        Node, on_delete=models.CASCADE, related_name="out_edges", db_index=False, db_constraint=False
    )
    target = models.ForeignKey(
        Node, on_delete=models.CASCADE, related_name="in_edges", db_index=False, db_constraint=False
    )

    class Meta:
        ordering = ["case", "kind", "source", "target"]
        constraints = [
            models.UniqueConstraint(fields=["case", "kind", "source", "target"], name="gm_edge_unique"),
        ]
        indexes = [
            models.Index(fields=["source", "case"], name="gm_edge_source_case"),
            models.Index(fields=["target", "case"], name="gm_edge_target_case"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} {self.kind} {self.target_id}"
