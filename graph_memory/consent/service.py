"""Excluding a client or a case from the memory, and including it again (issue 31, item 4).

ABA Formal Opinion 512: a self-learning tool may disclose one client's
information to another matter, so it needs the client's informed consent. A
firm whose client declines keeps that client (or one matter) out: nothing of
it is summarised, embedded, indexed or filed by the memory. The connection map
keeps it (conflict checks must see every matter) and the wall is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from graph_memory.adapter import NotSupported, case_firm_attname, case_model, get_adapter
from graph_memory.consent.exclusions import excluded_case_ids
from graph_memory.documents.routing import mark_documents_stale
from graph_memory.models import (
    AccessChange,
    CaseSummary,
    DocumentIndex,
    LintFinding,
    MemoryExclusion,
    NoteFiling,
    SummaryVersion,
)
from graph_memory.refresh.marking import mark_stale
from graph_memory.summaries import activity
from graph_memory.wall.access import NotFound

# The memory's derived rows of a case, deleted when it is excluded. Kept (tests/consent/test_consent.py names each
# with its reason): the map and its sight (conflict checks), the ledgers, and the logs of counts and ids
# (AICall, DocumentQuery, NoteRefusal, MissedChange, RefreshRun), none of which holds case text.
DERIVED = (CaseSummary, SummaryVersion, DocumentIndex, LintFinding, NoteFiling)


@dataclass(frozen=True)
class ConsentChange:
    exclusion: MemoryExclusion | None  # the row written (exclude) or removed (include); None: nothing changed
    case_ids: tuple[int, ...]  # the cases whose memory this change stopped (exclude) or restarted (include)
    deleted: dict[str, int]  # derived rows deleted, by model label (exclude only)


def _case_ids_of(*, firm_id: int, kind: str, ref_id: int) -> list[int]:
    """The firm's cases the exclusion names: the case itself, or every case of the client now."""
    adapter = get_adapter()
    firm = {case_firm_attname(): firm_id}
    cases = case_model().objects.filter(**firm)
    if kind == MemoryExclusion.Kind.CASE:
        return list(cases.filter(pk=ref_id).values_list("pk", flat=True))
    if not adapter.case_client_field:
        raise NotSupported("case_client_field")
    return list(cases.filter(**{f"{adapter.case_client_field}_id": ref_id}).order_by("pk").values_list("pk", flat=True))


def _target(*, case_id: int | None, client_id: int | None) -> tuple[str, int]:
    if (case_id is None) == (client_id is None):
        raise ValueError("name either a case or a client")
    if case_id is not None:
        return MemoryExclusion.Kind.CASE, int(case_id)
    return MemoryExclusion.Kind.CLIENT, int(client_id)  # type: ignore[arg-type]


def _ledger(*, firm_id: int, case_ids: list[int], granted: bool) -> None:
    AccessChange.objects.bulk_create(
        AccessChange(
            firm_id=firm_id,
            kind=AccessChange.Kind.CASE,
            granted=granted,
            reason=AccessChange.Reason.CONSENT,
            case_id=case_id,
        )
        for case_id in case_ids
    )


def derived_memory_delete(*, firm_id: int, case_ids: list[int]) -> dict[str, int]:
    """Delete the derived memory of these cases of the firm; the count deleted per model. Every statement names the firm."""
    deleted: dict[str, int] = {}
    for model in DERIVED:
        count, _ = model.objects.filter(firm_id=firm_id, case_id__in=case_ids).delete()
        deleted[model._meta.label] = count
    return deleted


def memory_exclude(
    *, firm_id: int, reason: str, by: Any = None, case_id: int | None = None, client_id: int | None = None
) -> ConsentChange:
    """Exclude one case, or one client (every case of it, present and future), of firm `firm_id` from the memory.

    Promises, in one transaction: the exclusion row (reason, who, when); the derived memory of each
    newly excluded case deleted (summary and its vector, versions, document indexes, lint findings,
    note filing keys: `DERIVED`); an ended `case` row with reason `consent` in the access ledger for
    each; its last activity back to the host's clock alone (the memory index still lists it, with no
    summary). The map, the wall and the host's records are untouched. A case or client that is not the
    firm's raises `access.NotFound` (another firm's answers as one that does not exist); a client
    without a case of the firm too, since nothing names it then. A blank reason raises ValueError;
    a client on a host whose adapter names no `case_client_field` raises `NotSupported`. Excluding
    what is already excluded changes nothing and returns `exclusion=None`.
    """
    kind, ref_id = _target(case_id=case_id, client_id=client_id)
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("give the reason for the exclusion (the client's instruction, the engagement letter)")
    with transaction.atomic():
        cases = _case_ids_of(firm_id=firm_id, kind=kind, ref_id=ref_id)
        if not cases:
            raise NotFound()
        before = excluded_case_ids(firm_id=firm_id, case_ids=cases)
        exclusion, created = MemoryExclusion.objects.get_or_create(
            firm_id=firm_id, kind=kind, ref_id=ref_id, defaults={"reason": reason.strip(), "excluded_by": by}
        )
        if not created:
            return ConsentChange(None, (), {})
        newly = sorted(set(cases) - before)
        deleted = derived_memory_delete(firm_id=firm_id, case_ids=newly)
        # Their summaries' clocks went with them: each keeps its place in the index by the host's clock alone.
        activity.activity_touch(case_ids=newly)
        _ledger(firm_id=firm_id, case_ids=newly, granted=False)
    return ConsentChange(exclusion, tuple(newly), deleted)


def memory_include(*, firm_id: int, case_id: int | None = None, client_id: int | None = None) -> ConsentChange:
    """End the exclusion of one case or client of firm `firm_id`: its memory restarts from the records.

    Promises, in one transaction: the exclusion row removed; each case no longer excluded (a case
    excluded itself and through its client stays out until both end) marked stale, with its
    documents, so the next refresh (or the first brief) writes its summary again from the records;
    a granted `case` row with reason `consent` in the access ledger for each. Nothing is restored
    from before: what was deleted is gone. A case or client with no exclusion of this firm raises
    `access.NotFound`.
    """
    kind, ref_id = _target(case_id=case_id, client_id=client_id)
    with transaction.atomic():
        exclusion = (
            MemoryExclusion.objects.select_for_update().filter(firm_id=firm_id, kind=kind, ref_id=ref_id).first()
        )
        if exclusion is None:
            raise NotFound()
        cases = _case_ids_of(firm_id=firm_id, kind=kind, ref_id=ref_id)
        exclusion.delete()
        restarted = sorted(set(cases) - excluded_case_ids(firm_id=firm_id, case_ids=cases))
        mark_stale(case_ids=restarted)
        adapter = get_adapter()
        mark_documents_stale(
            documents=[(case, ref.key) for case in restarted for ref in adapter.case_documents(case_id=case)]
        )
        _ledger(firm_id=firm_id, case_ids=restarted, granted=True)
    return ConsentChange(exclusion, tuple(restarted), {})


def record_new_case(*, case: Any) -> None:
    """A case just created for an excluded client: its ended `consent` row in the access ledger.

    Called from the case model's `post_save` (graph_memory.receivers), in the creating transaction.
    Its memory needs nothing: the rule is evaluated against the case's row by every writer.
    """
    adapter = get_adapter()
    if not adapter.case_client_field:
        return
    firm_id = getattr(case, case_firm_attname())
    client_id = getattr(case, f"{adapter.case_client_field}_id")
    if (
        client_id is None
        or not MemoryExclusion.objects.filter(
            firm_id=firm_id, kind=MemoryExclusion.Kind.CLIENT, ref_id=client_id
        ).exists()
    ):
        return
    _ledger(firm_id=firm_id, case_ids=[case.pk], granted=False)
