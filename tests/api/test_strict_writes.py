"""Issue 32: the write endpoint's body is strict JSON, answered in the one error shape, and note filing is idempotent.

Bodies: nesting, repeated keys, size, types and unknown fields are refused before the case is looked
up (the wall proof posts the same bodies to hidden cases). Idempotency: an Idempotency-Key header, or
the same origin message ids in the same case, gives back the first note (200), concurrent repeats
included, with the write-back guard still run on every filing.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from django.db import connection
from django.test import Client as HttpClient

from accounts.models import Firm, User
from graph_memory.models import NoteFiling, NoteRefusal
from practice.models import Note
from tests.api_support import C014, C031, NOT_FOUND, World, build_world, node
from tests.guard_world import build_guard_world, note_body
from tests.wall.test_note_guard import CLEAN, CROSSING

NOTE = {"title": "Clause 9 escrow", "text": "The escrow stays for 18 months.", "origin": {"conversation_id": "c-1"}}


@pytest.fixture
def world(demo_firm: Firm, demo_users: dict[str, User], settings: Any) -> World:
    return build_world(demo_firm, demo_users, settings)


def notes_url(case_id: Any) -> str:
    return f"/api/memory/cases/{case_id}/notes/"


def post_raw(world: World, persona: str, case_id: Any, body: bytes | str, **headers: str) -> Any:
    return world.client(persona).generic(
        "POST", notes_url(case_id), body, content_type="application/json", headers=headers
    )


def error(response: Any) -> tuple[int, str, str | None]:
    assert response["Content-Type"] == "application/json", response.content[:200]
    detail = response.json()["error"]
    return response.status_code, detail["code"], detail["field"]


# --- Strict bodies ---------------------------------------------------------------------------------


def _bodies(settings: Any) -> dict[str, tuple[bytes | str, tuple[int, str, str | None]]]:
    big = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return {
        "deep": ("[" * 100_000 + "]" * 100_000, (400, "invalid", None)),
        "deep within Python's reach": (json.dumps({**NOTE, "origin": {"message_ids": [[[[[[["m"]]]]]]]}}), (400, "invalid", None)),
        "duplicate key": ('{"title": "a", "title": "b", "text": "c"}', (400, "invalid", "title")),
        "duplicate nested key": ('{"title": "a", "text": "c", "origin": {"conversation_id": "x", "conversation_id": "y"}}', (400, "invalid", "conversation_id")),
        "oversized": (json.dumps({**NOTE, "text": "x" * big}), (413, "invalid", None)),
        "number for text": (json.dumps({**NOTE, "text": 123}), (400, "invalid", "text")),
        "boolean for title": (json.dumps({**NOTE, "title": True}), (400, "invalid", "title")),
        "number for a message id": (json.dumps({**NOTE, "origin": {"message_ids": ["m-1", 2]}}), (400, "invalid", "origin")),
        "unknown field": (json.dumps({**NOTE, "tags": ["x"]}), (400, "invalid", "tags")),
        "unknown origin field": (json.dumps({**NOTE, "origin": {"thread": "t"}}), (400, "invalid", "origin")),
        "NaN": ('{"title": "a", "text": NaN}', (400, "invalid", None)),
        "not JSON": ("{'title': 'a'}", (400, "invalid", None)),
    }  # fmt: skip


@pytest.mark.django_db
def test_every_refused_body_is_the_error_shape_and_files_nothing(world: World, settings: Any) -> None:
    case = node("case", C014)
    notes = Note.objects.count()
    for name, (body, expected) in _bodies(settings).items():
        response = post_raw(world, "alice", case.pk, body)
        assert error(response) == expected, (name, response.content[:300])
    assert Note.objects.count() == notes
    message = post_raw(world, "alice", case.pk, json.dumps({**NOTE, "tags": 1})).json()["error"]["message"]
    assert "origin, text, title" in message  # says what the body takes


@pytest.mark.django_db
def test_refused_bodies_answer_a_hidden_case_as_a_missing_one(world: World, settings: Any) -> None:
    hidden = node("case", C014)  # alice's, not bob's
    for name, (body, _) in _bodies(settings).items():
        for_hidden = post_raw(world, "bob", hidden.pk, body)
        for_missing = post_raw(world, "bob", "no-such-case", body)
        assert (for_hidden.status_code, for_hidden.content) == (for_missing.status_code, for_missing.content), name
    # A body the endpoint takes: the one 404 for both.
    assert post_raw(world, "bob", hidden.pk, json.dumps(NOTE)).content == NOT_FOUND


# --- Idempotency ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_same_idempotency_key_gives_back_the_first_note(world: World) -> None:
    case = node("case", C014)
    first = post_raw(world, "alice", case.pk, json.dumps(NOTE), **{"Idempotency-Key": "k-1"})
    again = post_raw(world, "alice", case.pk, json.dumps(NOTE), **{"Idempotency-Key": "k-1"})
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json()
    assert Note.objects.filter(case__key="2026-014", title=NOTE["title"]).count() == 1
    # Without a key (and no message ids) every filing is new.
    assert post_raw(world, "alice", case.pk, json.dumps(NOTE)).status_code == 201
    # The same key with another note: refused, naming the header and the first note.
    other = post_raw(world, "alice", case.pk, json.dumps({**NOTE, "text": "Another"}), **{"Idempotency-Key": "k-1"})
    assert error(other) == (400, "invalid", "Idempotency-Key")
    assert first.json()["note"]["id"] in other.json()["error"]["message"]
    # Another user's same key is theirs: dana files her own note.
    assert post_raw(world, "dana", case.pk, json.dumps(NOTE), **{"Idempotency-Key": "k-1"}).status_code == 201
    assert error(post_raw(world, "alice", case.pk, json.dumps(NOTE), **{"Idempotency-Key": "é"})) == (
        400,
        "invalid",
        "Idempotency-Key",
    )
    assert Note.objects.filter(case__key="2026-014", title=NOTE["title"]).count() == 3


@pytest.mark.django_db
def test_the_same_origin_messages_in_the_same_case_give_back_the_first_note(world: World) -> None:
    case = node("case", C014)
    body = {**NOTE, "origin": {"conversation_id": "c-9", "message_ids": ["m-1", "m-2"]}}
    first = post_raw(world, "alice", case.pk, json.dumps(body))
    # The model retried with other words: the same messages kept are the same note.
    retried = post_raw(world, "alice", case.pk, json.dumps({**body, "text": "The escrow stays 18 months."}))
    assert (first.status_code, retried.status_code) == (201, 200)
    assert retried.json()["note"] == first.json()["note"]
    other_messages = {**body, "origin": {"conversation_id": "c-9", "message_ids": ["m-3"]}}
    assert post_raw(world, "alice", case.pk, json.dumps(other_messages)).status_code == 201
    assert Note.objects.filter(case__key="2026-014", title=NOTE["title"]).count() == 2
    assert NoteFiling.objects.filter(firm=world.firm).count() == 2


@pytest.mark.django_db
def test_a_key_whose_note_the_host_deleted_files_anew_and_a_key_says_nothing_of_another_case(world: World) -> None:
    c014, c031 = node("case", C014), node("case", C031)
    key = {"Idempotency-Key": "d-9"}
    first = post_raw(world, "dana", c014.pk, json.dumps(NOTE), **key)
    Note.objects.filter(key=first.json()["note"]["id"].removeprefix("note:")).delete()  # the host's retention
    anew = post_raw(world, "dana", c014.pk, json.dumps(NOTE), **key)
    assert anew.status_code == 201 and anew.json()["note"]["id"] != first.json()["note"]["id"]
    again = post_raw(world, "dana", c014.pk, json.dumps(NOTE), **key)
    assert again.status_code == 200 and again.json()["note"] == anew.json()["note"]
    elsewhere = post_raw(world, "dana", c031.pk, json.dumps(NOTE), **key)
    assert error(elsewhere) == (400, "invalid", "Idempotency-Key")
    assert "note:" not in elsewhere.json()["error"]["message"]  # the first note is in another case


@pytest.mark.django_db
def test_a_repeat_still_meets_the_wall(world: World) -> None:
    """A key already used is no way around the wall: bob's repeat of dana's filing in a case he may not open
    is the one 404, as for a case that does not exist; nothing is written or returned."""
    c014 = node("case", C014)
    body = {**NOTE, "origin": {"conversation_id": "c-2", "message_ids": ["m-7"]}}
    first = post_raw(world, "dana", c014.pk, json.dumps(body), **{"Idempotency-Key": "d-1"})
    assert first.status_code == 201
    notes = Note.objects.count()
    for key in ("d-1", None):
        headers = {"Idempotency-Key": key} if key else {}
        assert post_raw(world, "bob", c014.pk, json.dumps(body), **headers).content == NOT_FOUND
        assert post_raw(world, "bob", "no-such-case", json.dumps(body), **headers).content == NOT_FOUND
    assert Note.objects.count() == notes


@pytest.mark.django_db
def test_a_repeat_still_meets_the_guard(settings: Any) -> None:
    """The same origin ids with a text that crosses the wall: refused and recorded, never answered with the
    first note (the guard runs before the key is looked at)."""
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "NOTE_RATE": None}
    guard = build_guard_world()
    client = HttpClient(headers={"Authorization": f"Token {guard.token(guard.lena)}"})
    url = notes_url(guard.node_id(guard.a))

    def post(text: str) -> Any:
        return client.post(url, data=json.dumps(note_body(text)), content_type="application/json")

    first = post(CLEAN)
    assert first.status_code == 201, first.content
    crossing = post(CROSSING)
    assert error(crossing) == (409, "crosses_wall", "text")
    assert NoteRefusal.objects.filter(case=guard.a, filer=guard.lena).count() == 1
    again = post(CLEAN)
    assert again.status_code == 200 and again.json()["note"] == first.json()["note"]
    assert Note.objects.filter(case=guard.a, origin__message_ids=["m-1"]).count() == 1


# --- Concurrent repeats ------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_eight_concurrent_identical_posts_file_one_note(world: World) -> None:
    """Eight threads, each with its own database connection, post the same note with the same origin at once."""
    case = node("case", C014)
    body = json.dumps({**NOTE, "origin": {"conversation_id": "c-8", "message_ids": ["m-8"]}})
    start = threading.Barrier(8)
    answers: list[tuple[int, dict[str, Any]]] = []

    def post() -> None:
        try:
            start.wait(timeout=30)
            response = post_raw(world, "alice", case.pk, body)
            answers.append((response.status_code, response.json()))
        finally:
            connection.close()

    threads = [threading.Thread(target=post) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(status for status, _ in answers) == [200] * 7 + [201]
    assert len({json.dumps(body["note"], sort_keys=True) for _, body in answers}) == 1
    assert Note.objects.filter(case__key="2026-014", origin__message_ids=["m-8"]).count() == 1
