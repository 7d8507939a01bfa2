"""The seam between the memory layer and the host's records.

This is the only module in `graph_memory` that imports the host product
(`practice` in this repository). Everything else asks this module for the
host's models and records, so a different host replaces one file.
"""

from __future__ import annotations

from practice.models import (
    Case,
    CaseCounterparty,
    CaseGroupObjectPermission,
    CaseTeamMember,
    CaseUserObjectPermission,
    Client,
    Counterparty,
    Deadline,
    Document,
    Draft,
    Invoice,
    Note,
)

__all__ = [
    "Case",
    "CaseCounterparty",
    "CaseGroupObjectPermission",
    "CaseTeamMember",
    "CaseUserObjectPermission",
    "Client",
    "Counterparty",
    "Deadline",
    "Document",
    "Draft",
    "Invoice",
    "Note",
]

VIEW_CASE_CODENAME = "view_case"
