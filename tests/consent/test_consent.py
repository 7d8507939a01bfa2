"""Memory consent (issue 31, item 4): an excluded client or case has no derived memory, takes no notes, keeps
its place in the map and the conflict checks, and restarts from its records when included again."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import models
from django.test import Client as HttpClient
from django.urls import reverse
from django.utils import timezone

from accounts.models import Firm, User
from graph_memory import services
from graph_memory.consent import service as consent
from graph_memory.documents.routing import IndexFailed, build_document_index, mark_documents_stale
from graph_memory.ledger.history import cases_open_to, who_could_open
from graph_memory.models import AccessChange, CaseSummary, MemoryExclusion, Node, NoteFiling, SummaryVersion
from graph_memory.summaries.rewrite import SummaryExcluded
from graph_memory.viewer.notes import note_file
from graph_memory.wall import access
from practice.models import Case
from tests.api_support import C014, NOT_FOUND, World, build_world, node
from tests.factories import CaseFactory, DocumentFactory

pytestmark = pytest.mark.django_db

# Every table of the app that names a case, and why it keeps an excluded case's rows. A table that names a
# case and is in neither this nor `consent.DERIVED` fails `test_every_table_naming_a_case_is_classified`.
KEPT = {
    "Node": "the connection map: conflict checks must see every matter",
    "Edge": "the connection map: conflict checks must see every matter",
    "Sight": "the map's per-viewer sight, as the map",
    "SightCase": "the map's per-viewer sight, as the map",
    "AccessChange": "the access ledger: ids and reasons, the record of the exclusion itself",
    "ServedRow": "the served ledger: ids and a fingerprint, hash-chained (deleting rows would break the chain)",
    "AICall": "the model-call log: counts and ids, no text",
    "DocumentQuery": "the document-question log: counts and ids, no question",
    "NoteRefusal": "the write-back guard's record: kinds and ids, no note text",
    "MemoryExclusion": "the exclusion itself",
    "CaseActivity": "when the case was last active, a time (the host's clock alone once excluded): the index lists it",
    "MissedChange": "repair work for the nightly run: ids only; redoing it writes nothing for an excluded case",
}


def _names_a_case(model: type[models.Model]) -> bool:
    case_model = apps.get_model(*Case._meta.label.split("."))
    for field in model._meta.concrete_fields:
        if field.is_relation and field.related_model is case_model:
            return True
        # A map node stands for a case by `ref_id`; the sight names nodes.
        if field.name in ("case_id", "case_ids", "ref_id", "node_id"):
            return True
    return False


@pytest.fixture
def world(demo_firm: Firm, demo_users: dict[str, User], settings: Any) -> World:
    return build_world(demo_firm, demo_users, settings)


def _acquisition(world: World) -> Case:
    return Case.objects.get(firm=world.firm, key="2026-014")


def _derived_rows(case_id: int) -> dict[str, int]:
    return {m._meta.label: m.objects.filter(case_id=case_id).count() for m in consent.DERIVED}


def _fill_memory(world: World, case: Case) -> None:
    """Every kind of derived row for `case`: summary with a vector, versions, a document index, a filing key."""
    dims = CaseSummary._meta.get_field("embedding").dimensions
    CaseSummary.objects.filter(case=case).update(embedding=[0.5] * dims, embedding_model="test")
    document = DocumentFactory(case=case, firm=world.firm)
    build_document_index(case_id=case.pk, key=document.key, offline=True)
    services.lint_firm(firm_id=world.firm.pk)
    http = world.client("alice")
    filed = http.post(
        f"/api/memory/cases/{node('case', C014).pk}/notes/",
        data=json.dumps({"title": "Kept", "text": "Signing moved to Friday."}),
        content_type="application/json",
        headers={"Idempotency-Key": "k-1"},
    )
    assert filed.status_code == 201, filed.content


def test_every_table_naming_a_case_is_classified() -> None:
    naming = {m.__name__ for m in apps.get_app_config("graph_memory").get_models() if _names_a_case(m)}
    derived = {m.__name__ for m in consent.DERIVED}
    assert naming == derived | set(KEPT), naming ^ (derived | set(KEPT))
    assert not derived & set(KEPT)


def test_excluding_a_case_deletes_its_derived_memory_and_keeps_the_map(world: World) -> None:
    case = _acquisition(world)
    _fill_memory(world, case)
    before = _derived_rows(case.pk)
    for label in ("graph_memory.CaseSummary", "graph_memory.SummaryVersion", "graph_memory.DocumentIndex",
                  "graph_memory.NoteFiling"):  # fmt: skip
        assert before[label] > 0, label
    other = Case.objects.get(firm=world.firm, key="2025-088")
    other_before = _derived_rows(other.pk)
    nodes_before = Node.objects.filter(firm=world.firm).count()

    change = services.memory_exclude(
        firm_id=world.firm.pk, case_id=case.pk, reason="Client declined AI use", by=world.users["dana"]
    )

    assert change.case_ids == (case.pk,)
    assert change.deleted == {label: n for label, n in before.items()}
    assert set(_derived_rows(case.pk).values()) == {0}
    assert _derived_rows(other.pk) == other_before  # nothing of another case
    assert Node.objects.filter(firm=world.firm).count() == nodes_before
    exclusion = MemoryExclusion.objects.get()
    assert (exclusion.reason, exclusion.excluded_by, exclusion.firm_id) == (
        "Client declined AI use",
        world.users["dana"],
        world.firm.pk,
    )
    # Conflict checks and the map still see it, for everyone who may open it.
    for persona in ("alice", "dana"):
        matches = world.get(persona, "/api/memory/conflicts/", {"name": "Northwind Holdings"}).json()["matches"]
        assert C014 in {m["case"]["label"] for m in matches}, persona
        assert world.get(persona, f"/api/memory/nodes/{node('case', C014).pk}/neighbors/").status_code == 200
    assert services.case_excluded(case_id=case.pk) and not services.case_excluded(case_id=other.pk)


def test_an_excluded_case_gets_no_memory_back(world: World) -> None:
    case = _acquisition(world)
    services.memory_exclude(firm_id=world.firm.pk, case_id=case.pk, reason="consent withdrawn")
    document = DocumentFactory(case=case, firm=world.firm)  # its signal flags an index: none is made
    assert services.mark_stale(case_ids=[case.pk]) == 0
    assert mark_documents_stale(documents=[(case.pk, document.key)]) == 0
    case.title = "Northwind / Castell acquisition (closing)"
    case.save()  # the host's own change: the receivers mark nothing
    with pytest.raises(SummaryExcluded, match="excluded from the memory"):
        services.summarize_case(case_id=case.pk)
    with pytest.raises(IndexFailed):
        build_document_index(case_id=case.pk, key=document.key, offline=True)
    assert services.ensure_summary(case_id=case.pk) is None
    services.refresh_firm(firm_id=world.firm.pk)
    services.backfill_missing_embeddings(firm_id=world.firm.pk)
    assert set(_derived_rows(case.pk).values()) == {0}


def test_notes_are_refused_only_to_those_who_may_open_the_case(world: World) -> None:
    services.memory_exclude(firm_id=world.firm.pk, case_id=_acquisition(world).pk, reason="consent")
    url = f"/api/memory/cases/{node('case', C014).pk}/notes/"
    body = json.dumps({"title": "T", "text": "Signing moved to Friday."})
    refused = world.client("alice").post(url, data=body, content_type="application/json")
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "memory_excluded" and refused.json()["error"]["field"] is None
    # The wall first: a viewer who may not open the case learns nothing of its consent.
    for persona in ("bob", "stranger"):
        hidden = world.client(persona).post(url, data=body, content_type="application/json")
        assert (hidden.status_code, hidden.content) == (404, NOT_FOUND), persona
    with pytest.raises(services.MemoryExcluded):
        note_file(viewer=world.users["dana"], case_node_id=node("case", C014).pk, title="T", text="x")
    assert NoteFiling.objects.count() == 0


def test_memory_endpoints_answer_as_for_a_case_without_memory(world: World) -> None:
    services.memory_exclude(firm_id=world.firm.pk, case_id=_acquisition(world).pk, reason="consent")
    brief = world.get("alice", f"/api/memory/nodes/{node('case', C014).pk}/brief/")
    assert brief.status_code == 200
    (entry,) = brief.json()["cases"]
    assert entry["case"]["label"] == C014 and not entry["summary"]
    hits = world.get("alice", "/api/memory/search/", {"q": "Castell acquisition"}).json()["results"]
    assert C014 not in {h["case"]["label"] for h in hits}
    # A viewer who may not open it: the same 404 as before, nothing about consent.
    hidden = world.get("bob", f"/api/memory/nodes/{node('case', C014).pk}/brief/")
    assert (hidden.status_code, hidden.content) == (404, NOT_FOUND)


def test_including_again_restarts_from_the_records(world: World) -> None:
    case = _acquisition(world)
    written = CaseSummary.objects.get(case=case).text
    services.memory_exclude(firm_id=world.firm.pk, case_id=case.pk, reason="consent")
    change = services.memory_include(firm_id=world.firm.pk, case_id=case.pk)
    assert change.case_ids == (case.pk,) and not MemoryExclusion.objects.exists()
    summary = CaseSummary.objects.get(case=case)
    assert summary.stale and summary.text == ""  # nothing restored: rewritten from the records
    services.refresh_firm(firm_id=world.firm.pk)
    assert CaseSummary.objects.get(case=case).text == written
    assert SummaryVersion.objects.filter(case=case).count() == 1
    with pytest.raises(access.NotFound):
        services.memory_include(firm_id=world.firm.pk, case_id=case.pk)


def test_excluding_a_client_excludes_its_cases_present_and_future(world: World) -> None:
    case = _acquisition(world)
    client_id = case.client_id
    change = services.memory_exclude(firm_id=world.firm.pk, client_id=client_id, reason="client's instruction")
    assert change.case_ids == tuple(sorted(Case.objects.filter(client_id=client_id).values_list("pk", flat=True)))
    later = CaseFactory(firm=world.firm, client=case.client, owner=world.users["alice"], key="2027-001")
    assert not CaseSummary.objects.filter(case=later).exists()
    assert services.case_excluded(case_id=later.pk)
    ended = AccessChange.objects.filter(case_id=later.pk, reason=AccessChange.Reason.CONSENT)
    assert list(ended.values_list("granted", flat=True)) == [False]
    # Excluded itself and through its client: out until both end.
    services.memory_exclude(firm_id=world.firm.pk, case_id=case.pk, reason="also")
    assert services.memory_include(firm_id=world.firm.pk, client_id=client_id).case_ids == (later.pk,)
    assert services.case_excluded(case_id=case.pk) and not services.case_excluded(case_id=later.pk)
    assert CaseSummary.objects.filter(case=later, stale=True).exists()


def test_another_firms_case_or_client_answers_as_nonexistent(world: World) -> None:
    case = _acquisition(world)
    stranger_firm = world.users["stranger"].firm_id
    for target in ({"case_id": case.pk}, {"client_id": case.client_id}, {"case_id": 10**9}):
        with pytest.raises(access.NotFound):
            services.memory_exclude(firm_id=stranger_firm, reason="x", **target)
    with pytest.raises(ValueError):
        services.memory_exclude(firm_id=world.firm.pk, case_id=case.pk, reason="  ")
    assert not MemoryExclusion.objects.exists()


@pytest.mark.django_db(transaction=True)  # each transition its own transaction: a row's time is its transaction's
def test_the_access_ledger_records_both_transitions(world: World) -> None:
    case = _acquisition(world)
    alice = world.users["alice"]
    before = timezone.now()
    with_memory = {a.id for a in who_could_open(firm_id=world.firm.pk, case_id=case.pk, start=before).rows}
    assert alice.pk in with_memory
    services.memory_exclude(firm_id=world.firm.pk, case_id=case.pk, reason="consent")
    excluded_at = timezone.now()
    services.memory_include(firm_id=world.firm.pk, case_id=case.pk)
    after = timezone.now()
    rows = AccessChange.objects.filter(case_id=case.pk, reason=AccessChange.Reason.CONSENT).order_by("id")
    assert [(r.kind, r.granted) for r in rows] == [("case", False), ("case", True)]
    assert who_could_open(firm_id=world.firm.pk, case_id=case.pk, start=excluded_at).rows == []
    assert case.pk not in {
        a.id for a in cases_open_to(firm_id=world.firm.pk, viewer_id=alice.pk, start=excluded_at).rows
    }
    assert {a.id for a in who_could_open(firm_id=world.firm.pk, case_id=case.pk, start=after).rows} == with_memory
    (period,) = next(a for a in cases_open_to(firm_id=world.firm.pk, viewer_id=alice.pk, start=before, end=after).rows
                     if a.id == case.pk).periods[1:]  # fmt: skip
    assert period.end is None


def _admin_login(user: User) -> HttpClient:
    User.objects.filter(pk=user.pk).update(is_staff=True)
    http = HttpClient()
    http.force_login(user)
    return http


def test_admin_action_excludes_with_a_reason_within_the_firm(world: World) -> None:
    url = reverse("admin:graph_memory_node_changelist")
    target = node("case", C014)
    dana = _admin_login(world.users["dana"])
    asked = dana.post(url, {"action": "exclude_from_memory", "_selected_action": [target.pk]})
    assert asked.status_code == 200 and b'name="reason"' in asked.content and not MemoryExclusion.objects.exists()
    # Another firm's admin posting this firm's node: their scoped queryset holds nothing; nothing changes.
    stranger = _admin_login(world.users["stranger"])
    stranger.post(url, {"action": "exclude_from_memory", "_selected_action": [target.pk], "reason": "x", "apply": "1"})
    assert not MemoryExclusion.objects.exists()
    done = dana.post(
        url,
        {"action": "exclude_from_memory", "_selected_action": [target.pk], "reason": "Client declined", "apply": "1"},
    )
    assert done.status_code == 302
    exclusion = MemoryExclusion.objects.get()
    assert (exclusion.kind, exclusion.ref_id, exclusion.reason) == ("case", target.ref_id, "Client declined")
    assert not CaseSummary.objects.filter(case_id=target.ref_id).exists()
    page = reverse("admin:graph_memory_memoryexclusion_change", args=[exclusion.pk])
    assert stranger.get(page).status_code == 404
    assert C014.split(" ", 1)[1] in dana.get(reverse("admin:graph_memory_memoryexclusion_changelist")).content.decode()
    listing = reverse("admin:graph_memory_memoryexclusion_changelist")
    stranger.post(listing, {"action": "include_in_memory", "_selected_action": [exclusion.pk]})
    assert MemoryExclusion.objects.exists()
    dana.post(listing, {"action": "include_in_memory", "_selected_action": [exclusion.pk]})
    assert (
        not MemoryExclusion.objects.exists() and CaseSummary.objects.filter(case_id=target.ref_id, stale=True).exists()
    )


def test_the_operators_command(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    slug = world.firm.slug
    call_command("memory_consent", "exclude", "--firm", slug, "--case", "2026-014", "--reason", "engagement letter")
    call_command("memory_consent", "list", "--firm", slug)
    call_command("memory_consent", "include", "--firm", slug, "--case", "2026-014")
    out = capsys.readouterr().out
    assert "Excluded case 2026-014: 1 case(s)" in out and "engagement letter" in out and "Included case 2026-014" in out
    assert not MemoryExclusion.objects.exists()
