"""The documented assistant loop (docs/assistant-developers.md), run as written: a live server, the real
`openai` client, a scripted model."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from rest_framework.authtoken.models import Token

from graph_memory import services
from graph_memory.models import Node
from practice.models import Case, Note
from tests.api_support import C031, FAST, NW_CP, set_throttle_rate
from tests.openai_server import Reply

PAGE = Path(__file__).resolve().parents[2] / "docs" / "assistant-developers.md"


def documented_loop() -> str:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
    return next(b for b in blocks if "/api/memory/tools/" in b)


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def completion(message: dict[str, Any], finish_reason: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-readme",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


@pytest.mark.django_db(transaction=True)
def test_the_documented_assistant_loop(
    demo_firm, demo_users, live_server, openai_server, settings, monkeypatch, capsys
) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **FAST}
    set_throttle_rate(settings, "1000/min")
    services.graph_rebuild_firm(firm_id=demo_firm.pk)
    for case_id in Case.objects.filter(firm=demo_firm).values_list("pk", flat=True):
        services.summarize_case(case_id=case_id)
    monkeypatch.setenv("MEMORY_URL", live_server.url)
    monkeypatch.setenv("MEMORY_TOKEN", Token.objects.create(user=demo_users["bob"]).key)
    bobs_case = str(Node.objects.get(kind="case", label=C031).pk)
    kept = "Q: Who is the counterparty?\nA: Northwind Holdings (as the summary says)."
    openai_server.add_chat(
        Reply(
            body=completion(
                {
                    "content": None,
                    "tool_calls": [
                        tool_call("c1", "check_conflicts", {"name": "Northwind Holdings"}),
                        tool_call("c2", "find_nodes", {"q": "Meridian", "kind": "client"}),
                        tool_call("c3", "get_brief", {"node_id": "not/a node?"}),
                        tool_call("c4", "file_note", {"case_id": bobs_case, "title": "Counterparty", "text": kept}),
                    ],
                },
                "tool_calls",
            )
        ),
        Reply(body=completion({"content": "Yes: we act against Northwind in 2026-031."}, "stop")),
    )
    exec(compile(documented_loop(), str(PAGE), "exec"), {"__name__": "documented"})
    assert capsys.readouterr().out == "Yes: we act against Northwind in 2026-031.\n"
    first, second = openai_server.chat_requests()
    assert {t["function"]["name"] for t in first["tools"]} == {
        "find_nodes",
        "walk_neighbors",
        "get_brief",
        "search_cases",
        "check_conflicts",
        "get_memory_index",
        "open_source",
        "file_note",
        "ask_documents",  # issue 18
    }
    # The index is in the system prompt; the note was filed into bob's case, verbatim, by POST.
    assert "- 2026-031 · Brightline v. Northwind" in first["messages"][0]["content"]
    assert "2026-014" not in first["messages"][0]["content"]
    answers = {m["tool_call_id"]: json.loads(m["content"]) for m in second["messages"] if m["role"] == "tool"}
    assert [(m["case"]["label"], m["party"]["label"]) for m in answers["c1"]["matches"]] == [(C031, NW_CP)]
    assert answers["c2"]["results"] == []  # bob may open no Meridian case: nothing, and no hint of it
    assert answers["c3"] == {"error": {"code": "not_found", "message": "Not found.", "field": None}}
    assert answers["c4"]["note"]["text"] == kept and answers["c4"]["note"]["assistant_filed"] is True
    assert Note.objects.get(case__key="2026-031", key=answers["c4"]["note"]["id"][5:]).text == kept
