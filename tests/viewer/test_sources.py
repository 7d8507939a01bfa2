"""Opening what a summary cites: every cited id opens for those who may open the case, and 404s alike for the rest."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import quote

import pytest

from accounts.models import Firm, User
from graph_memory.adapter import NoteOrigin
from graph_memory.models import CaseSummary, Node
from graph_memory.viewer.notes import note_file
from graph_memory.viewer.sources import _parse_source_id, source_get  # the grammar, tested alone
from graph_memory.wall import access
from practice.models import Case, Document, Note
from tests.api_support import C014, C088, NOT_FOUND, VISIBLE, World, build_world, node

pytestmark = pytest.mark.django_db

SPA_P2 = (
    "Clause 9: the Buyer may terminate if the antitrust clearance is not obtained by 2026-12-15. "
    "Escrow of EUR 4,800,000 held for 18 months."
)


@pytest.fixture
def world(demo_firm: Firm, demo_users: dict[str, User], settings: Any) -> World:
    return build_world(demo_firm, demo_users, settings)


def url(case_id: Any, source_id: str, **query: Any) -> str:
    tail = "&".join(f"{k}={v}" for k, v in query.items())
    return f"/api/memory/cases/{case_id}/sources/{quote(source_id, safe='')}/" + (f"?{tail}" if tail else "")


def open_source(world: World, persona: str, case_id: Any, source_id: str, **query: Any) -> Any:
    return world.client(persona).get(url(case_id, source_id, **query))


def test_every_cited_source_of_every_demo_summary_opens_and_is_walled(world: World) -> None:
    opened = walled = 0
    for summary in CaseSummary.objects.filter(firm=world.firm).select_related("case"):
        case = Node.objects.get(kind="case", ref_id=summary.case_id)
        cited = {sid for section in summary.content.values() for s in section for sid in s["sources"]}
        assert cited and cited <= set(summary.source_ids) | cited
        for persona, visible in VISIBLE.items():
            for source_id in sorted(cited):
                answer = open_source(world, persona, case.pk, source_id)
                if case.label in visible:
                    assert answer.status_code == 200, (persona, source_id, answer.content)
                    body = answer.json()
                    assert body["case"]["id"] == str(case.pk) and body["source"]["id"] == source_id
                    assert body["notice"] and body["source"]["total_chars"] >= len(body["source"]["text"])
                    opened += 1
                else:
                    assert answer.status_code == 404 and answer.content == NOT_FOUND, (persona, source_id)
                    walled += 1
    assert opened > 50 and walled > 50


def test_a_page_deadline_invoice_and_note_read_live(world: World) -> None:
    case = node("case", C014).pk
    page = open_source(world, "alice", case, "document:spa-v3#p2").json()["source"]
    assert page["text"] == SPA_P2 and page["fields"]["page"] == 2 and page["fields"]["page_count"] == 2
    assert page["title"] == "Share purchase agreement, draft 3" and page["truncated"] is False
    deadline = open_source(world, "alice", case, "deadline:signing").json()["source"]
    assert deadline["fields"] == {"title": "Target signing", "date": "2026-12-15", "due": "2026-12-15", "done": False}
    invoice = open_source(world, "alice", case, "invoice:inv-57").json()["source"]
    assert invoice["fields"]["amount"] == "31840.50" and invoice["fields"]["status"] == "sent"
    note = open_source(world, "dana", case, "note:n1").json()["source"]
    assert note["text"].startswith("Client wants to close before year end")
    assert note["fields"]["assistant_filed"] is False and note["fields"]["author"] == "Alice Hale"
    header = open_source(world, "alice", case, "case:header").json()["source"]
    assert header["fields"]["reference"] == "2026-014" and "EUR 48,000,000" in header["text"]
    party = open_source(world, "alice", case, "counterparty:castell").json()["source"]
    assert party["fields"] == {"name": "Castell Components GmbH", "role": "counterparty"}
    # Live: a change in the record shows at once, with no rewrite of the summary.
    Note.objects.filter(case__key="2026-014", key="n1").update(text="Signing moved to January.")
    assert open_source(world, "alice", case, "note:n1").json()["source"]["text"] == "Signing moved to January."


def test_an_assistant_filed_note_opens_with_its_origin(world: World) -> None:
    case = str(node("case", C014).pk)
    origin = NoteOrigin("conv-1", ("m-1",))
    filed = note_file(viewer=world.users["alice"], case_node_id=case, title="Kept", text="Verbatim.", origin=origin)
    source = open_source(world, "alice", case, filed.source_id).json()["source"]
    assert source["text"] == "Verbatim." and source["title"] == "Kept"
    assert source["fields"]["assistant_filed"] is True
    assert source["fields"]["origin"] == {"conversation_id": "conv-1", "message_ids": ["m-1"]}
    assert open_source(world, "bob", case, filed.source_id).content == NOT_FOUND


def test_unknown_foreign_and_malformed_ids_are_one_404(world: World) -> None:
    mine, other = node("case", C014).pk, node("case", C088).pk
    answers = [
        open_source(world, "alice", mine, "note:nope"),
        open_source(world, "alice", mine, "document:spa-v3#p3"),  # a page it does not have
        open_source(world, "alice", mine, "document:scan-7#p1"),  # not processed yet
        open_source(world, "alice", mine, "document:spa-v3"),  # documents are cited by page
        open_source(world, "alice", mine, "client:castell"),  # castell is a counterparty here
        open_source(world, "alice", mine, "case:footer"),
        open_source(world, "alice", mine, "banana:1"),
        open_source(world, "alice", mine, "x" * 300),
        open_source(world, "alice", other, "document:spa-v3#p2"),  # another case's record, in a case she may open
        open_source(world, "alice", uuid.uuid4(), "document:spa-v3#p2"),
        open_source(world, "alice", "not-a-node", "note:n1"),
        open_source(world, "alice", node("client", "Northwind Holdings, Inc.").pk, "case:header"),
        open_source(world, "bob", mine, "document:spa-v3#p2"),  # a case bob may not open
        open_source(world, "bob", mine, "note:nope"),
    ]
    for answer in answers:
        assert answer.status_code == 404 and answer.content == NOT_FOUND
    assert len({tuple(sorted(a.headers.items())) for a in answers}) == 1


def test_windows_by_characters_never_cut_silently(world: World) -> None:
    case = node("case", C014).pk
    first = open_source(world, "alice", case, "document:spa-v3#p2", limit=50).json()["source"]
    assert first["text"] == SPA_P2[:50] and first["truncated"] and first["next_offset"] == 50
    assert first["total_chars"] == len(SPA_P2)
    text, offset = first["text"], first["next_offset"]
    while offset is not None:
        window = open_source(world, "alice", case, "document:spa-v3#p2", limit=50, offset=offset).json()["source"]
        text, offset = text + window["text"], window["next_offset"]
    assert text == SPA_P2
    past = open_source(world, "alice", case, "document:spa-v3#p2", offset=10_000).json()["source"]
    assert past["text"] == "" and past["next_offset"] is None and past["total_chars"] == len(SPA_P2)
    for query, field in (({"limit": 50001}, "limit"), ({"limit": 0}, "limit"), ({"offset": -1}, "offset")):
        bad = open_source(world, "alice", case, "document:spa-v3#p2", **query)
        assert bad.status_code == 400 and bad.json()["error"]["field"] == field


def test_a_long_page_is_whole_across_windows(world: World) -> None:
    long_page = " ".join(f"word{i}" for i in range(6000))  # ~ 50,000 characters, past the default window
    Document.objects.filter(case__key="2026-014", key="dd-memo").update(pages=[long_page])
    source = source_get(viewer=world.users["alice"], case_node_id=node("case", C014).pk, source_id="document:dd-memo#p1")
    assert source.truncated and source.total_chars == len(long_page) and len(source.text) == 8000
    assert source.text == long_page[:8000] and source.next_offset == 8000


@pytest.mark.parametrize(("source_id", "queries"), [("note:n1", 2), ("document:spa-v3#p1", 2), ("case:header", 3)])
def test_constant_queries(world: World, django_assert_num_queries: Any, source_id: str, queries: int) -> None:
    case = Case.objects.get(key="2026-014")
    case_node = node("case", C014).pk
    with django_assert_num_queries(queries):
        source_get(viewer=world.users["alice"], case_node_id=case_node, source_id=source_id)
    Note.objects.bulk_create(
        Note(firm=world.firm, case=case, key=f"bulk-{i}", created=case.updated_at, text="x" * 100) for i in range(200)
    )
    with django_assert_num_queries(queries):
        source_get(viewer=world.users["alice"], case_node_id=case_node, source_id=source_id)
    with django_assert_num_queries(1), pytest.raises(access.NotFound):
        source_get(viewer=world.users["bob"], case_node_id=case_node, source_id=source_id)


def test_source_id_grammar() -> None:
    assert _parse_source_id("document:spa-v3#p2") == ("document", "spa-v3", 2)
    assert _parse_source_id("deadline:signing") == ("deadline", "signing", None)
    assert _parse_source_id("case:header") == ("case", "header", None)
    for bad in ("", "note:", ":n1", "note:n1#p2", "document:x#p0", "note:a b", None, 7):
        with pytest.raises(access.NotFound):
            _parse_source_id(bad)
