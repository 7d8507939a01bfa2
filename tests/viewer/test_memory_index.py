"""The compact memory index: within its byte cap, honest about what it leaves out, blind to hidden cases, cheap to re-check."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import Firm, User
from graph_memory import services
from graph_memory.models import CaseActivity, CaseSummary
from graph_memory.summaries import activity
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


@pytest.fixture(params=["sorted", "walked"])
def path(request: pytest.FixtureRequest, settings: Any) -> str:
    """Each way the index finds its order: a viewer's cases sorted by their clocks (within VISIBLE_FIRST_MAX, every
    demo viewer), or, past it (here 1), the firm's cases walked in the activity's order, each probed against the wall."""
    if request.param == "walked":
        settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "VISIBLE_FIRST_MAX": 1}
    return str(request.param)


def references(index: Any) -> list[str]:
    return [line[2:].split(" · ", 1)[0] for line in index.text.splitlines() if line.startswith("- ")]


def set_clocks(world: World, order: list[str]) -> dict[str, dt.datetime]:
    """The host's clock of each case of `order` (references), most recent first and later than any summary; the
    activity caught up as the nightly run does. Returns the times set."""
    start = timezone.now() + dt.timedelta(days=30)
    times = {reference: start - dt.timedelta(days=i) for i, reference in enumerate(order)}
    for reference, at in times.items():
        Case.objects.filter(firm=world.firm, key=reference).update(updated_at=at)
    activity.activity_rebuild(firm_id=world.firm.pk)
    return times


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


def test_the_index_never_mentions_a_hidden_case(world: World, path: str) -> None:
    # The cases alice may not open are the firm's most recently active: a walk meets them first.
    set_clocks(world, ["2026-031", "2026-047", "2026-014", "2025-088"])
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


def test_counts_of_what_is_left_out_are_of_the_viewers_own_cases(world: World, path: str) -> None:
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


def test_one_query_whatever_the_firms_size(world: World, path: str, django_assert_num_queries: Any) -> None:
    for persona in ("alice", "dana", "stranger"):
        with django_assert_num_queries(1):
            memory_index(viewer=world.users[persona])
    add_cases(world, 120)
    for persona in ("alice", "dana"):
        with django_assert_num_queries(1):
            memory_index(viewer=world.users[persona])


def test_the_order_is_the_last_activity_and_both_ways_agree(world: World, settings: Any) -> None:
    order = ["2026-047", "2025-088", "2026-014", "2026-031"]
    set_clocks(world, order)
    sorted_ = {persona: memory_index(viewer=world.users[persona]) for persona in ("alice", "dana")}
    assert references(sorted_["dana"]) == order and references(sorted_["alice"]) == ["2025-088", "2026-014"]
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "VISIBLE_FIRST_MAX": 1}
    for persona, index in sorted_.items():
        assert memory_index(viewer=world.users[persona]).text == index.text, persona


def test_past_visible_first_max_the_order_is_the_activity_column(world: World, settings: Any) -> None:
    """The walk reads the column, not the clocks: written to it directly (as if a clock had moved), the order follows."""
    set_clocks(world, ["2026-047", "2025-088", "2026-014", "2026-031"])
    rows = CaseActivity.objects.filter(firm=world.firm)
    newest = rows.order_by("-active_at").first().active_at
    for i, reference in enumerate(["2026-031", "2026-014", "2025-088", "2026-047"]):
        rows.filter(case__key=reference).update(active_at=newest + dt.timedelta(hours=10 - i))
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "VISIBLE_FIRST_MAX": 1}
    walked = memory_index(viewer=world.users["dana"])
    assert references(walked) == ["2026-031", "2026-014", "2025-088", "2026-047"]
    assert f"active {newest + dt.timedelta(hours=10):%Y-%m-%d}" in walked.text.splitlines()[1]


def test_a_case_with_no_summary_keeps_its_place_by_its_own_clock(world: World, path: str) -> None:
    set_clocks(world, ["2026-047", "2025-088", "2026-014", "2026-031"])
    services.memory_exclude(
        firm_id=world.firm.pk, case_id=Case.objects.get(firm=world.firm, key="2025-088").pk, reason="consent"
    )
    assert not CaseSummary.objects.filter(case__key="2025-088").exists()
    index = memory_index(viewer=world.users["dana"])
    assert references(index) == ["2026-047", "2025-088", "2026-014", "2026-031"]
    line = next(line for line in index.text.splitlines() if line.startswith("- 2025-088 "))
    assert "no summary yet" in line and ": " not in line.split(" · ")[-1]


def test_ties_go_to_the_newer_case(world: World, path: str) -> None:
    at = timezone.now() + dt.timedelta(days=30)
    Case.objects.filter(firm=world.firm).update(updated_at=at)
    activity.activity_rebuild(firm_id=world.firm.pk)
    newest_first = list(Case.objects.filter(firm=world.firm).order_by("-pk").values_list("key", flat=True))
    assert references(memory_index(viewer=world.users["dana"])) == newest_first
