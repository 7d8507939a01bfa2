"""The compact memory index: within its byte cap, honest about what it leaves out, blind to hidden cases, cheap to re-check."""

from __future__ import annotations

from typing import Any

import pytest

from accounts.models import Firm, User
from graph_memory import services
from graph_memory.viewer.memory_index import memory_index
from graph_memory.viewer.notes import note_file
from practice.models import Case
from tests.api_support import C014, C031, C047, C088, VISIBLE, World, add_cases, build_world, node

pytestmark = pytest.mark.django_db

INDEX = "/api/memory/index/"
ALL = {C014: "2026-014", C031: "2026-031", C088: "2025-088", C047: "2026-047"}
# Names only hidden cases carry, per persona who may not open them.
TITLES = {label: label.split(" ", 1)[1] for label in ALL}


@pytest.fixture
def world(demo_firm: Firm, demo_users: dict[str, User], settings: Any) -> World:
    return build_world(demo_firm, demo_users, settings)


def test_dana_gets_every_case_within_4_kb(world: World) -> None:
    answer = world.get("dana", INDEX)
    assert answer.status_code == 200
    body = answer.json()
    assert len(body["text"].encode()) <= 4096 and body["cases"] == 4
    assert body["truncated"] is False and body["omitted"] == 0 and body["notice"]
    lines = body["text"].splitlines()
    assert lines[0].startswith("Firm memory: 4 of the 4 cases you may open") and len(lines) == 5
    for label, reference in ALL.items():
        line = next(line for line in lines if line.startswith(f"- {reference} · "))
        assert TITLES[label] in line and " · active " in line and "summary " in line
        assert body["case_ids"][reference] == str(node("case", label).pk)
    acquisition = next(line for line in lines if line.startswith("- 2026-014 "))
    assert "client Northwind Holdings, Inc." in acquisition and "against Castell Components GmbH" in acquisition
    assert "Open" in acquisition and acquisition.endswith(": Buy-side counsel to Northwind Holdings on the purchase "
                                                          "of all shares of Castell Components GmbH for EUR 48,000,000.")
    assert answer["ETag"] == f'"{body["fingerprint"]}"'
    assert "private" in answer["Cache-Control"] and "public" not in answer["Cache-Control"]


def test_the_index_never_mentions_a_hidden_case(world: World) -> None:
    for persona, visible in VISIBLE.items():
        body = world.get(persona, INDEX).json()
        assert body["cases"] == len(visible) and body["omitted"] == 0 and body["truncated"] is False
        assert set(body["case_ids"]) == {ALL[label] for label in visible}
        for label, reference in ALL.items():
            shown = reference in body["text"] or TITLES[label] in body["text"]
            assert shown == (label in visible), (persona, label)
        if not visible:
            assert body["text"] == "Firm memory: no case you may open."
    # Lines of the same case read the same for everyone who may open it: nothing per-viewer leaks in.
    alice, dana = world.get("alice", INDEX).json()["text"], world.get("dana", INDEX).json()["text"]
    assert {line for line in alice.splitlines()[1:]} <= set(dana.splitlines()[1:])


def test_counts_of_what_is_left_out_are_of_the_viewers_own_cases(world: World) -> None:
    add_cases(world, 150)  # alice's
    alice = world.get("alice", INDEX).json()
    assert len(alice["text"].encode()) <= 4096 and alice["truncated"] is True
    assert alice["cases"] + alice["omitted"] == 152 and alice["cases"] == len(alice["text"].splitlines()) - 2
    assert f"… and {alice['omitted']} more of your cases" in alice["text"] and "of the 152 cases" in alice["text"]
    # bob's index neither shows nor counts any of them.
    bob = world.get("bob", INDEX).json()
    assert bob["cases"] == 1 and bob["omitted"] == 0 and "152" not in bob["text"] and "2027-" not in bob["text"]
    dana = world.get("dana", INDEX).json()
    assert dana["cases"] + dana["omitted"] == 154


def test_the_cap_is_in_utf8_bytes_and_lines_are_whole(world: World, settings: Any) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "INDEX_MAX_BYTES": 700}
    Case.objects.filter(key="2026-014").update(title="Übernahme — Northwind / Castell “Zürich” " * 2)
    index = memory_index(viewer=world.users["dana"])
    assert len(index.text.encode()) <= 700 < len(index.text.encode()) + 200
    assert index.truncated and index.cases + index.omitted == 4
    assert all(line.startswith(("Firm memory:", "- ", "… and")) for line in index.text.splitlines())


def test_etag_304_and_a_new_fingerprint_after_a_rewrite(world: World) -> None:
    first = world.get("dana", INDEX)
    etag = first["ETag"]
    again = world.client("dana").get(INDEX, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again["ETag"] == etag
    assert world.client("dana").get(INDEX, headers={"If-None-Match": '"other"'}).status_code == 200
    # Another viewer's fingerprint is their own.
    assert world.get("carol", INDEX)["ETag"] != etag
    # A note marks 2026-014 stale: the index says so, with a new fingerprint.
    case = str(node("case", C014).pk)
    note_file(viewer=world.users["alice"], case_node_id=case, title="Escrow", text="The escrow is agreed.")
    stale = world.client("dana").get(INDEX, headers={"If-None-Match": etag})
    assert stale.status_code == 200 and "stale: changed since" in stale.json()["text"]
    etag_stale = stale["ETag"]
    assert world.client("dana").get(INDEX, headers={"If-None-Match": etag_stale}).status_code == 304
    # The nightly rewrite changes it again.
    services.refresh_firm(firm_id=world.firm.pk)
    rewritten = world.client("dana").get(INDEX, headers={"If-None-Match": etag_stale})
    assert rewritten.status_code == 200 and rewritten["ETag"] not in (etag, etag_stale)
    assert "stale" not in rewritten.json()["text"]
    assert world.client("dana").get(INDEX, headers={"If-None-Match": rewritten["ETag"]}).status_code == 304


def test_one_query_whatever_the_firms_size(world: World, django_assert_num_queries: Any) -> None:
    for persona in ("alice", "dana", "stranger"):
        with django_assert_num_queries(1):
            memory_index(viewer=world.users[persona])
    add_cases(world, 120)
    for persona in ("alice", "dana"):
        with django_assert_num_queries(1):
            memory_index(viewer=world.users[persona])
