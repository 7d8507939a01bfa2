"""Issue 17 in the second host: notes land as file memos, sources open from its own rows, the index stays behind its wall."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client as HttpClient
from rest_framework.authtoken.models import Token

from graph_memory import services
from graph_memory.adapter import NoteOrigin
from graph_memory.models import CaseSummary, Node
from graph_memory.viewer.memory_index import memory_index
from graph_memory.viewer.notes import note_file
from graph_memory.viewer.sources import source_get
from graph_memory.wall import access
from tests.second_host.matters.models import Memo
from tests.second_host.world import ACQ, TERM, VISIBLE, Office

pytestmark = pytest.mark.django_db

NOT_FOUND = b'{"error":{"code":"not_found","message":"Not found.","field":null}}'


def case_node(memory: Office, reference: str) -> str:
    return str(Node.objects.get(kind="case", ref_id=memory.matters[reference].pk).pk)


def test_a_filed_note_is_a_file_memo_compiled_and_cited(memory: Office) -> None:
    owner = memory.people["owner"]
    filed = note_file(viewer=owner, case_node_id=case_node(memory, ACQ), title="Escrow", text=" Escrow agreed.\n",
                      origin=NoteOrigin("conv-2", ("m-9",)))  # fmt: skip
    memo = Memo.objects.get(pk=int(filed.source_id.removeprefix("note:")))
    assert memo.kind == Memo.Kind.FILE_NOTE and memo.body == " Escrow agreed.\n" and memo.heading == "Escrow"
    assert memo.author == owner and memo.origin == {"conversation_id": "conv-2", "message_ids": ["m-9"]}
    assert CaseSummary.objects.get(case_id=memory.matters[ACQ].pk).stale
    services.summarize_case(case_id=memory.matters[ACQ].pk)
    assert filed.source_id in CaseSummary.objects.get(case_id=memory.matters[ACQ].pk).source_ids
    source = source_get(viewer=owner, case_node_id=case_node(memory, ACQ), source_id=filed.source_id)
    assert source.text == " Escrow agreed.\n" and source.fields["assistant_filed"] is True
    with pytest.raises(access.NotFound):
        note_file(viewer=memory.people["outsider"], case_node_id=case_node(memory, ACQ), title="t", text="x")
    assert Memo.objects.filter(body="x").count() == 0


def test_every_cited_source_opens_and_is_walled(memory: Office) -> None:
    for reference, matter in memory.matters.items():
        node = Node.objects.filter(kind="case", ref_id=matter.pk).first()
        if node is None:
            continue
        summary = services.summarize_case(case_id=matter.pk)
        cited = {sid for section in summary.content.values() for s in section for sid in s["sources"]}
        for persona, visible in VISIBLE.items():
            for source_id in cited:
                if reference in visible:
                    assert source_get(viewer=memory.people[persona], case_node_id=node.pk, source_id=source_id).id
                else:
                    with pytest.raises(access.NotFound):
                        source_get(viewer=memory.people[persona], case_node_id=node.pk, source_id=source_id)


def test_the_index_and_the_note_endpoint_behind_the_wall(memory: Office, settings: Any) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, "THROTTLE_RATE": "100000/min"}
    cache.clear()
    for persona, visible in VISIBLE.items():
        index = memory_index(viewer=memory.people[persona])
        hidden = {ref for ref in memory.matters if ref not in visible}
        assert not any(ref in index.text for ref in hidden), persona
        assert index.omitted == 0 and len(index.text.encode()) <= 4096
    token = Token.objects.create(user=memory.people["owner"]).key
    client = HttpClient(headers={"Authorization": f"Token {token}"})
    body = json.dumps({"title": "t", "text": "x"})
    hidden = client.post(f"/api/memory/cases/{case_node(memory, TERM)}/notes/", body, content_type="application/json")
    absent = client.post(
        "/api/memory/cases/00000000-0000-0000-0000-000000000000/notes/", body, content_type="application/json"
    )
    assert hidden.status_code == absent.status_code == 404 and hidden.content == absent.content == NOT_FOUND
    assert client.post(f"/api/memory/cases/{case_node(memory, ACQ)}/notes/", body,
                       content_type="application/json").status_code == 201  # fmt: skip
