"""Filing a note into a case: verbatim, attributed, compiled into the next summary, and only behind the wall."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.core.cache import cache

from accounts.models import Firm, User
from graph_memory import services
from graph_memory.adapter import MemoryAdapter, NoteOrigin, NotSupported
from graph_memory.api.tools import endpoints, tool_definitions
from graph_memory.models import CaseSummary
from graph_memory.viewer.notes import NoteInvalid, note_file
from graph_memory.wall import access
from practice.memory_adapter import PracticeMemoryAdapter
from practice.models import Case, Note
from tests.api_support import C014, C031, NOT_FOUND, World, build_world, node

pytestmark = pytest.mark.django_db

# Kept exactly: leading and trailing space, line breaks, quotation marks.
VERBATIM = "  Q: Does clause 9 survive?\nA: Yes — “the escrow of EUR 4,800,000 stays for 18 months”.\n"
ORIGIN = {"conversation_id": "conv-7", "message_ids": ["m-3", "m-4"]}


class NoNotesAdapter(PracticeMemoryAdapter):
    """A host whose adapter gives neither optional ability: the defaults answer."""

    file_note = MemoryAdapter.file_note  # type: ignore[assignment]
    case_record = MemoryAdapter.case_record  # type: ignore[assignment]


@pytest.fixture
def world(demo_firm: Firm, demo_users: dict[str, User], settings: Any) -> World:
    return build_world(demo_firm, demo_users, settings)


def post_note(world: World, persona: str, case_id: str, body: dict[str, Any]) -> Any:
    return world.client(persona).post(
        f"/api/memory/cases/{case_id}/notes/", data=json.dumps(body), content_type="application/json"
    )


def state(case_key: str) -> tuple[int, tuple[Any, ...]]:
    summary = CaseSummary.objects.get(case__key=case_key)
    return Note.objects.count(), (summary.stale, summary.generation, summary.text)


def test_alice_files_a_note_and_the_next_summary_cites_it(world: World) -> None:
    case = node("case", C014)
    response = post_note(world, "alice", str(case.pk), {"title": "Clause 9 escrow", "text": VERBATIM, "origin": ORIGIN})
    assert response.status_code == 201, response.content
    filed = response.json()["note"]
    assert filed["text"] == VERBATIM and filed["title"] == "Clause 9 escrow" and filed["assistant_filed"] is True
    assert filed["origin"] == ORIGIN and filed["case"]["id"] == str(case.pk) and response.json()["notice"]
    key = filed["id"].removeprefix("note:")
    note = Note.objects.get(case__key="2026-014", key=key)
    # Stored as written, attributed to the viewer, marked assistant-filed by its origin.
    assert note.text == VERBATIM and note.author == world.users["alice"] and note.assistant_filed
    assert note.origin == ORIGIN and note.firm_id == world.firm.pk
    summary = CaseSummary.objects.get(case__key="2026-014")
    assert summary.stale and filed["id"] not in summary.source_ids

    run = services.refresh_firm(firm_id=world.firm.pk)  # the nightly rewrite
    assert run.status == "done" and run.rewritten == 1
    summary.refresh_from_db()
    assert not summary.stale and filed["id"] in summary.source_ids
    cited = [s for section in summary.content.values() for s in section if filed["id"] in s["sources"]]
    assert any("Clause 9 escrow" in s["text"] for s in cited)
    # Seen in briefs by those who may open 2026-014 only.
    for persona in ("alice", "dana"):
        assert "Clause 9 escrow" in world.get(persona, f"/api/memory/nodes/{case.pk}/brief/").json()["text"]
    for persona in ("bob", "carol", "evan"):
        client = node("client", "Northwind Holdings, Inc.")
        answer = world.get(persona, f"/api/memory/nodes/{client.pk}/brief/")
        assert b"Clause 9 escrow" not in answer.content and b"escrow of EUR" not in answer.content


def test_bob_cannot_file_on_a_case_he_may_not_open_and_nothing_is_written(world: World) -> None:
    hidden = str(node("case", C014).pk)
    before = state("2026-014")
    body = {"title": "Probe", "text": "Anything.", "origin": ORIGIN}
    answers = [post_note(world, "bob", case_id, body) for case_id in (hidden, str(uuid.uuid4()), "not-an-id")]
    # A node that is not a case, even one bob reaches, answers the same too.
    lawyer = node("lawyer", world.users["bob"].name or "bob")
    answers.append(post_note(world, "bob", str(lawyer.pk), body))
    for answer in answers:
        assert answer.status_code == 404 and answer.content == NOT_FOUND
    assert {tuple(sorted(a.headers.items())) for a in answers} == {tuple(sorted(answers[0].headers.items()))}
    assert state("2026-014") == before
    with pytest.raises(access.NotFound):
        note_file(viewer=world.users["bob"], case_node_id=hidden, title="t", text="x", origin=NoteOrigin())
    assert state("2026-014") == before
    # His own case works.
    assert post_note(world, "bob", str(node("case", C031).pk), body).status_code == 201


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"title": "t"}, "text"),
        ({"title": "t", "text": "   \n"}, "text"),
        ({"text": "x"}, "title"),
        ({"title": "t" * 201, "text": "x"}, "title"),
        ({"title": "t", "text": "x" * 20001}, "text"),
        ({"title": "t", "text": "x", "origin": {"message_ids": ["m"] * 101}}, "origin"),
        ({"title": "t", "text": "x", "origin": {"conversation_id": "c" * 201}}, "origin"),
        ({"title": "t", "text": "a\x00b"}, "text"),
        ({"title": "t", "text": "lone \ud800 surrogate"}, "text"),
        ({"title": "\udfff", "text": "x"}, "title"),
        ({"title": "t", "text": "x", "origin": {"conversation_id": "c\ud800"}}, "origin"),
    ],
)
def test_bad_input_names_the_field_and_writes_nothing(world: World, body: dict[str, Any], field: str) -> None:
    before = state("2026-014")
    answer = post_note(world, "alice", str(node("case", C014).pk), body)
    assert answer.status_code == 400, answer.content
    assert answer.json()["error"]["code"] == "invalid" and answer.json()["error"]["field"] == field
    assert state("2026-014") == before


def test_the_service_checks_its_input_too(world: World) -> None:
    case = str(node("case", C014).pk)
    with pytest.raises(NoteInvalid) as error:
        note_file(viewer=world.users["alice"], case_node_id=case, title="t", text="x" * 20001)
    assert error.value.field == "text"


def test_not_json_and_other_methods(world: World) -> None:
    url = f"/api/memory/cases/{node('case', C014).pk}/notes/"
    bad = world.client("alice").post(url, data="title=t", content_type="application/x-www-form-urlencoded")
    assert bad.status_code == 415 and bad.json()["error"]["code"] == "invalid"
    broken = world.client("alice").post(url, data="{", content_type="application/json")
    assert broken.status_code == 400
    # Immutable: nothing edits or deletes a filed note through the memory.
    for method in ("get", "put", "patch", "delete"):
        assert getattr(world.client("alice"), method)(url).status_code == 405
    assert world.client(None).post(url, data="{}", content_type="application/json").status_code == 401


def test_rate_limit_counts_every_attempt_alike(world: World, settings: Any) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "NOTE_RATE": "2/hour"}
    cache.clear()
    hidden, own = str(node("case", C014).pk), str(node("case", C031).pk)
    body = {"title": "t", "text": "x"}
    # Two attempts on a case bob may not open spend his budget exactly like two that write.
    assert [post_note(world, "bob", hidden, body).status_code for _ in range(2)] == [404, 404]
    throttled = post_note(world, "bob", own, body)
    assert throttled.status_code == 429 and throttled.json()["error"]["code"] == "throttled"
    assert int(throttled["Retry-After"]) >= 1
    assert not Note.objects.filter(case__key="2026-031", text="x").exists()
    # Per user: alice is not throttled by bob's attempts.
    assert post_note(world, "alice", hidden, body).status_code == 201


def test_a_host_without_notes_answers_not_supported_and_offers_no_tool(world: World, settings: Any) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "ADAPTER": "tests.viewer.test_notes.NoNotesAdapter"}
    assert {"file_note", "open_source"}.isdisjoint(t["name"] for t in tool_definitions())
    assert "get_memory_index" in endpoints()
    body = {"title": "t", "text": "x"}
    answers = [post_note(world, persona, str(node("case", C014).pk), body) for persona in ("alice", "bob")]
    answers.append(post_note(world, "alice", str(uuid.uuid4()), body))
    for answer in answers:
        assert answer.status_code == 501 and answer.content == answers[0].content
        assert answer.json()["error"]["code"] == "not_supported"
    with pytest.raises(NotSupported):
        note_file(viewer=world.users["alice"], case_node_id=str(node("case", C014).pk), title="t", text="x")
    assert world.get("alice", "/api/memory/tools/").json()["endpoints"].keys() == endpoints().keys()
    assert not Case.objects.get(key="2026-014").notes.filter(text="x").exists()


def test_the_hosts_admin_keeps_an_assistant_note_as_filed(world: World, rf: Any) -> None:
    from django.contrib import admin

    filed = note_file(viewer=world.users["alice"], case_node_id=str(node("case", C014).pk), title="t", text="kept")
    model_admin = admin.site._registry[Note]
    request = rf.get("/")
    request.user = world.users["dana"]
    assistant_note = Note.objects.get(key=filed.source_id.removeprefix("note:"))
    assert {"text", "title", "case", "author", "created"} <= set(model_admin.get_readonly_fields(request, assistant_note))
    written_by_a_person = Note.objects.get(case__key="2026-014", key="n1")
    assert "text" not in model_admin.get_readonly_fields(request, written_by_a_person)


def test_checks_name_bad_note_source_and_index_settings(settings: Any) -> None:
    from graph_memory.checks import check_compounding_settings

    assert check_compounding_settings() == []
    settings.GRAPH_MEMORY = {"NOTE_RATE": "lots", "INDEX_MAX_BYTES": 100, "NOTE_MAX_CHARS": 0}
    assert sorted(e.id for e in check_compounding_settings()) == [
        "graph_memory.E080", "graph_memory.E080", "graph_memory.E081",
    ]  # fmt: skip


def test_a_browser_session_without_its_csrf_token_is_refused_before_the_wall(world: World) -> None:
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(world.users["bob"])
    before = state("2026-014")
    answers = [
        browser.post(f"/api/memory/cases/{case_id}/notes/", data=json.dumps({"title": "t", "text": "x"}),
                     content_type="application/json")
        for case_id in (str(node("case", C031).pk), str(node("case", C014).pk), str(uuid.uuid4()))
    ]
    # His own case, a hidden one and an absent one: the same 403 naming the CSRF check, not a 404.
    assert {a.status_code for a in answers} == {403}
    assert len({a.content for a in answers}) == 1
    assert answers[0].json()["error"]["code"] == "csrf_failed"
    assert state("2026-014") == before
    # With the token the same session files into his own case.
    browser.get("/api/memory/tools/")
    token = browser.cookies["csrftoken"].value if "csrftoken" in browser.cookies else None
    if token is None:
        from django.middleware.csrf import _get_new_csrf_string

        token = _get_new_csrf_string()
        browser.cookies["csrftoken"] = token
    filed = browser.post(f"/api/memory/cases/{node('case', C031).pk}/notes/", data=json.dumps({"title": "t", "text": "x"}),
                         content_type="application/json", headers={"X-CSRFToken": token})
    assert filed.status_code == 201, filed.content
