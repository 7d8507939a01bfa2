"""The memory's tools over MCP, driven by the `mcp` SDK's own clients.

Streamable HTTP: the project's real ASGI application (config/asgi.py) under
uvicorn, in a thread of this process so it sees the test database; stdio:
`manage.py memory_mcp --user` as a subprocess pointed at the test database.
Every answer is compared with what the DRF API answers the same user.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import anyio
import httpx2
import pytest
import uvicorn
from django.db import connection
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from graph_memory.api.tools import DISCIPLINE, tool_definitions
from graph_memory.models import Node
from practice.models import Note as PracticeNote
from tests.api_support import C014, C031, C088, NOT_FOUND, NW_CP, World, build_world, node

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db(transaction=True)  # the server's threads must see the test's rows


class UvicornThread:
    """uvicorn serving `app` on a free port of 127.0.0.1, in a daemon thread (no signal handlers off the main thread)."""

    def __init__(self, app: Any, lifespan: str = "on") -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(app, lifespan=lifespan, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> UvicornThread:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()


@pytest.fixture
def world(demo_firm: Any, demo_users: Any, settings: Any) -> World:
    return build_world(demo_firm, demo_users, settings)


@pytest.fixture
def mcp_url() -> Iterator[str]:
    from config.asgi import application  # the project's own: Django with MCP at /mcp/

    with UvicornThread(application) as server:
        yield server.url + "/mcp/"


@contextlib.asynccontextmanager
async def connect(url: str, authorization: str | None, mode: str = "legacy") -> AsyncIterator[Client]:
    headers = {"Authorization": authorization} if authorization else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60)) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            yield client


def raised(run: Callable[[], Awaitable[Any]]) -> BaseException:
    """The error `anyio.run(run)` ends with, out of the task groups' exception groups."""
    try:
        anyio.run(run)
    except BaseException as exc:
        while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        return exc
    raise AssertionError("no error was raised")


def api(world: World, persona: str, name: str, arguments: dict[str, Any]) -> tuple[int, Any]:
    """What the DRF endpoint of tool `name` answers `persona` for these arguments (the test client, same process)."""
    tool = next(t for t in tool_definitions() if t["name"] == name)
    path, rest = tool["path"], dict(arguments)
    for key in [p.split("}")[0] for p in path.split("{")[1:]]:
        path = path.replace("{" + key + "}", quote(str(rest.pop(key)), safe=""))
    if tool["method"] == "GET":
        response = world.get(persona, path, rest)
    else:
        response = world.client(persona).generic(tool["method"], path, json.dumps(rest), "application/json")
    return response.status_code, response.json()


def calls(world: World) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Per persona, a call of every read-only tool with arguments that make the answer non-trivial, and failing ones."""
    nw = str(node("counterparty", NW_CP).pk)
    c014, c031, c088 = (str(node("case", label).pk) for label in (C014, C031, C088))
    return {
        "alice": [
            ("find_nodes", {"q": "Northwind"}),
            ("walk_neighbors", {"node_id": c014, "limit": 5}),
            ("get_brief", {"node_id": c088}),
            ("search_cases", {"q": "lease dispute", "limit": 3}),
            ("check_conflicts", {"name": "Northwind Holdings"}),
            ("get_memory_index", {}),
            ("open_source", {"case_id": c014, "source_id": "document:spa-v3#p1"}),  # "#" and ":" in a path
            ("ask_documents", {"case_id": c014, "q": "When is the signing deadline?"}),
            ("find_nodes", {"q": "x", "limit": 101}),  # invalid: the API's 400 names `limit`
        ],
        "bob": [
            ("find_nodes", {"q": "Northwind", "kind": "counterparty"}),
            ("walk_neighbors", {"node_id": nw}),
            ("get_brief", {"node_id": c031}),
            ("search_cases", {"q": "logistics agreement"}),
            ("check_conflicts", {"name": "Northwind Holdings"}),
            ("get_memory_index", {}),
            ("open_source", {"case_id": c031, "source_id": "deadline:answer"}),
            ("ask_documents", {"case_id": c031, "q": "What is the claim about?"}),
            ("get_brief", {"node_id": c014}),  # hidden from bob: the one 404
            ("open_source", {"case_id": c014, "source_id": "document:spa-v3#p1"}),  # the same, for a source
        ],
    }


WRITES = {"file_note"}  # answered with a new id each time: compared apart from it


def test_streamable_http_answers_as_the_api_does_for_each_user(world: World, mcp_url: str) -> None:
    plan = calls(world)
    assert {name for name, _ in plan["alice"]} | WRITES == {t["name"] for t in tool_definitions()}  # every tool
    expected = {p: [api(world, p, name, args) for name, args in plan[p]] for p in plan}
    listed_by_api = world.get("alice", "/api/memory/tools/").json()
    assert {status for p in expected for status, _ in expected[p]} == {200, 400, 404}  # every kind of answer

    async def drive(persona: str, mode: str) -> tuple[str, Any, list[Any], str | None]:
        async with connect(mcp_url, f"Token {world.tokens[persona]}", mode) as client:
            listed = await client.list_tools()
            results = [await client.call_tool(name, args) for name, args in plan[persona]]
            return client.protocol_version, listed, results, client.instructions

    # The 2025-11-25 initialize handshake, and the 2026-07-28 per-request protocol the default mode negotiates.
    for mode, version in (("legacy", "2025-11-25"), ("auto", "2026-07-28")):
        for persona in plan:
            negotiated, listed, results, instructions = anyio.run(drive, persona, mode)
            assert negotiated == version
            assert instructions == DISCIPLINE
            assert [
                {"name": t.name, "description": t.description, "parameters": t.input_schema} for t in listed.tools
            ] == [t["function"] for t in listed_by_api["tools"]]
            for (name, _), (status, body), result in zip(plan[persona], expected[persona], results, strict=True):
                assert result.structured_content == body, (mode, persona, name)
                assert json.loads(result.content[0].text) == body
                assert result.is_error is (status >= 400), (mode, persona, name)
                if status == 200:
                    assert body["notice"], name
    alice_invalid = expected["alice"][-1][1]
    assert alice_invalid["error"]["code"] == "invalid" and alice_invalid["error"]["field"] == "limit"
    bob_found = expected["bob"][0][1]["results"]
    assert [n["label"] for n in bob_found] == [NW_CP]


def test_hidden_and_absent_nodes_are_the_same_tool_error(world: World, mcp_url: str) -> None:
    hidden = str(node("case", C014).pk)  # alice's case, not bob's
    absent = str(uuid.uuid4())
    assert not Node.objects.filter(pk=absent).exists()

    async def drive() -> dict[str, list[Any]]:
        async with connect(mcp_url, f"Token {world.tokens['bob']}") as client:
            answers: dict[str, list[Any]] = {}
            for name in ("get_brief", "walk_neighbors"):
                answers[name] = [
                    (await client.call_tool(name, {"node_id": node_id})).model_dump(mode="json", by_alias=True)
                    for node_id in (hidden, absent, "not/a node?")
                ]
            return answers

    for name, (for_hidden, for_absent, for_garbage) in anyio.run(drive).items():
        assert for_hidden == for_absent == for_garbage, name
        assert for_hidden["isError"] is True
        assert for_hidden["content"][0]["text"].encode() == NOT_FOUND  # the API's 404, byte for byte
        assert hidden not in json.dumps(for_hidden)


def test_arguments_the_endpoint_cannot_take_are_named(world: World, mcp_url: str) -> None:
    async def drive() -> list[Any]:
        async with connect(mcp_url, f"Token {world.tokens['alice']}") as client:
            return [
                await client.call_tool("get_brief", {"id": "x"}),  # unknown argument
                await client.call_tool("get_brief", {}),  # path parameter missing
                await client.call_tool("find_nodes", {"q": ["a", "b"]}),  # not one value
                await client.call_tool("search_cases", {"q": "", "limit": 3}),  # the API's own 400
            ]

    fields = [
        (r.is_error, r.structured_content["error"]["code"], r.structured_content["error"]["field"])
        for r in anyio.run(drive)
    ]
    assert fields == [
        (True, "invalid", "id"),
        (True, "invalid", "node_id"),
        (True, "invalid", "q"),
        (True, "invalid", "q"),
    ]

    async def unknown_tool() -> None:
        async with connect(mcp_url, f"Token {world.tokens['alice']}") as client:
            await client.call_tool("drop_tables", {})

    error = raised(unknown_tool)  # not a tool error: a protocol error, there is no such tool
    assert isinstance(error, MCPError) and error.message == "Unknown tool: drop_tables"


def test_filing_a_note_is_the_apis_post_and_hidden_cases_take_nothing(world: World, mcp_url: str) -> None:
    c014 = str(node("case", C014).pk)  # alice's case, not bob's
    note = {"title": "Call with the client", "text": "Northwind wants the escrow released by 30 June."}
    status, by_api = api(world, "alice", "file_note", {"case_id": c014, **note})
    assert status == 201

    async def drive(persona: str, arguments: dict[str, Any]) -> tuple[Any, Any]:
        async with connect(mcp_url, f"Token {world.tokens[persona]}") as client:
            filed = await client.call_tool("file_note", arguments)
            opened = None
            if not filed.is_error:
                source = {"case_id": c014, "source_id": filed.structured_content["note"]["id"]}
                opened = await client.call_tool("open_source", source)
            return filed, opened

    filed, opened = anyio.run(drive, "alice", {"case_id": c014, **note})
    assert not filed.is_error

    def unique(body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "note": {k: v for k, v in body["note"].items() if k not in ("id", "created")}}

    assert unique(filed.structured_content) == unique(by_api)  # the same answer, but for its own new id
    assert filed.structured_content["note"]["id"] != by_api["note"]["id"]
    assert not opened.is_error and note["text"] in json.dumps(opened.structured_content)  # stored, as filed

    notes = PracticeNote.objects.filter(case__key="2026-014").count()
    hidden, _ = anyio.run(drive, "bob", {"case_id": c014, **note})
    absent, _ = anyio.run(drive, "bob", {"case_id": str(uuid.uuid4()), **note})
    assert hidden.is_error and hidden.model_dump() == absent.model_dump()
    assert hidden.content[0].text.encode() == NOT_FOUND
    assert PracticeNote.objects.filter(case__key="2026-014").count() == notes  # nothing written
    untitled, _ = anyio.run(drive, "alice", {"case_id": c014, "text": "no title"})
    assert untitled.is_error and untitled.structured_content["error"]["field"] == "title"


@pytest.mark.parametrize(
    "authorization", [None, "Token not-a-token", "Basic YWxpY2U6cGFzc3dvcmQ=", "Token", "Bearer"], ids=str
)
def test_anything_but_a_valid_token_gets_the_protocols_auth_error(
    world: World, mcp_url: str, authorization: Any
) -> None:
    seen: list[httpx2.Response] = []

    async def record(response: httpx2.Response) -> None:
        await response.aread()
        seen.append(response)

    async def drive() -> None:
        headers = {"Authorization": authorization} if authorization else {}
        async with httpx2.AsyncClient(headers=headers, event_hooks={"response": [record]}) as http:
            async with Client(streamable_http_client(mcp_url, http_client=http), mode="legacy") as client:
                await client.list_tools()

    assert isinstance(raised(drive), MCPError)
    assert seen and all(r.status_code == 401 for r in seen)
    assert all(r.headers["www-authenticate"].startswith('Bearer error="invalid_token"') for r in seen)
    assert all(r.json()["error"] == "invalid_token" for r in seen)
    assert all(r.headers["cache-control"] == "private, no-store" for r in seen)


def test_every_mcp_answer_is_private_to_its_user(world: World, mcp_url: str) -> None:
    seen: list[httpx2.Response] = []

    async def record(response: httpx2.Response) -> None:
        await response.aread()
        seen.append(response)

    async def drive() -> None:
        headers = {"Authorization": f"Token {world.tokens['alice']}"}
        async with httpx2.AsyncClient(headers=headers, event_hooks={"response": [record]}) as http:
            async with Client(streamable_http_client(mcp_url, http_client=http), mode="legacy") as client:
                await client.list_tools()
                await client.call_tool("find_nodes", {"q": "Northwind"})

    anyio.run(drive)
    assert len(seen) >= 2 and all(r.status_code < 300 for r in seen)
    # Cache-Control and Vary as on every API answer: a shared cache keeps none of them.
    assert {r.headers["cache-control"] for r in seen} == {"private, no-store"}
    assert {r.headers["vary"] for r in seen} == {"Authorization, Cookie"}


def test_a_token_sent_as_bearer_is_accepted_and_deactivating_the_user_locks_them_out(
    world: World, mcp_url: str
) -> None:
    async def names() -> list[str]:
        async with connect(mcp_url, f"Bearer {world.tokens['bob']}", mode="auto") as client:
            return [t.name for t in (await client.list_tools()).tools]

    assert anyio.run(names) == [t["name"] for t in tool_definitions()]
    world.users["bob"].is_active = False
    world.users["bob"].save(update_fields=["is_active"])
    assert isinstance(raised(names), MCPError)


def test_the_documented_example_prints_what_the_docs_say(
    world: World, mcp_url: str, monkeypatch: Any, capsys: Any
) -> None:
    page = (ROOT / "docs" / "assistant-developers.md").read_text()
    example = next(
        b for b in re.findall(r"```python\n(.*?)```", page, flags=re.S) if "streamable_http_client(URL" in b
    )
    printed = re.search(r"On the demo firm it prints:\n\n```text\n(.*?)```", page, flags=re.S)
    assert printed is not None
    monkeypatch.setenv("MEMORY_URL", mcp_url.removesuffix("/mcp/"))
    monkeypatch.setenv("MEMORY_TOKEN", world.tokens["alice"])
    exec(compile(example, "docs/assistant-developers.md", "exec"), {"__name__": "documented"})
    assert capsys.readouterr().out == printed.group(1)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_a_host_outside_allowed_hosts_is_refused_and_django_still_answers_beside_it(world: World, mcp_url: str) -> None:
    auth = {"Authorization": f"Token {world.tokens['alice']}", **ACCEPT}
    with httpx2.Client() as http:
        assert http.post(mcp_url, json=INITIALIZE, headers=auth).status_code == 200
        assert http.post(mcp_url.removesuffix("/"), json=INITIALIZE, headers=auth).status_code == 200  # no redirect
        assert http.post(mcp_url, json=INITIALIZE, headers={**auth, "Host": "evil.example"}).status_code == 421
        cross_site = {**auth, "Origin": "https://evil.example"}
        assert http.post(mcp_url, json=INITIALIZE, headers=cross_site).status_code == 403
        root = mcp_url.removesuffix("/mcp/")
        assert http.get(root + "/healthz").json() == {"status": "ok"}  # Django, in the same application
        tools = http.get(root + "/api/memory/tools/", headers={"Authorization": f"Token {world.tokens['alice']}"})
        assert tools.status_code == 200


def test_without_the_asgi_lifespan_the_endpoint_says_so(world: World) -> None:
    from django.core.asgi import get_asgi_application

    from graph_memory.api.mcp_server import with_mcp

    with UvicornThread(with_mcp(get_asgi_application()), lifespan="off") as server, httpx2.Client() as http:
        headers = {"Authorization": f"Token {world.tokens['alice']}", **ACCEPT}
        response = http.post(server.url + "/mcp/", json=INITIALIZE, headers=headers)
    assert response.status_code == 503 and "lifespan" in response.json()["error_description"]


def database_url() -> str:
    """The test database as a DATABASE_URL (config/settings.py reads it), for a subprocess."""
    s = connection.settings_dict
    netloc = f"{quote(s['USER'] or '', safe='')}:{quote(s['PASSWORD'] or '', safe='')}@{s['HOST'] or ''}"
    netloc += f":{s['PORT']}" if s["PORT"] else ""
    options = {k: v for k, v in s.get("OPTIONS", {}).items() if isinstance(v, str)}  # e.g. the socket directory
    return f"postgresql://{netloc}/{s['NAME']}" + (f"?{urlencode(options)}" if options else "")


def test_stdio_command_answers_as_the_api_does(world: World) -> None:
    plan = calls(world)["bob"]
    expected = [api(world, "bob", name, args) for name, args in plan]
    env = {
        "DATABASE_URL": database_url(),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "GRAPH_MEMORY_EMBEDDER": "none",  # as build_world's settings: the same search mode as the API's answers
        "GRAPH_MEMORY_THROTTLE_RATE": "100000/min",
    }
    params = StdioServerParameters(
        command=sys.executable, args=["manage.py", "memory_mcp", "--user", "bob"], env=env, cwd=str(ROOT)
    )

    async def drive() -> tuple[list[str], list[Any], str | None]:
        async with Client(params) as client:  # mode "auto": the 2026-07-28 protocol over stdio
            listed = [t.name for t in (await client.list_tools()).tools]
            return listed, [await client.call_tool(name, args) for name, args in plan], client.instructions

    listed, results, instructions = anyio.run(drive)
    assert listed == [t["name"] for t in tool_definitions()] and instructions == DISCIPLINE
    assert [r.structured_content for r in results] == [body for _, body in expected]
    assert [r.is_error for r in results] == [status >= 400 for status, _ in expected]
    assert results[-1].is_error and results[-1].content[0].text.encode() == NOT_FOUND  # alice's, hidden from bob


def test_stdio_command_refuses_an_unknown_user(world: World) -> None:
    import subprocess

    env = {**os.environ, "DATABASE_URL": database_url()}
    done = subprocess.run(
        [sys.executable, "manage.py", "memory_mcp", "--user", "nobody"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 1 and "no active user named 'nobody'" in done.stderr and done.stdout == ""


def test_a_get_is_405_not_an_idle_event_stream(world: World, mcp_url: str) -> None:
    """Stateless: no event stream to offer. A GET (and a DELETE) with a valid token is answered at once, 405."""
    headers = {"Authorization": f"Token {world.tokens['alice']}", "Accept": "text/event-stream"}
    with httpx2.Client(headers=headers, timeout=httpx2.Timeout(10)) as http:
        for method in ("GET", "DELETE"):
            response = http.request(method, mcp_url)
            assert response.status_code == 405, (method, response.text)
            assert response.headers["allow"] == "POST" and response.json()["error"] == "method_not_allowed"
            assert response.headers["cache-control"] == "private, no-store"
        assert http.get(mcp_url, headers={"Authorization": "Token nope"}).status_code == 401  # sign-in first


def test_file_note_is_strict_and_idempotent_over_mcp(world: World, mcp_url: str) -> None:
    """Through the API's view: a number for a text is refused, and the same origin ids give back the first note."""
    c014 = str(node("case", C014).pk)
    note = {"case_id": c014, "title": "Escrow", "text": "Released on 30 June.",
            "origin": {"conversation_id": "mcp-1", "message_ids": ["m-1"]}}  # fmt: skip

    async def drive() -> list[Any]:
        async with connect(mcp_url, f"Token {world.tokens['alice']}") as client:
            return [
                await client.call_tool("file_note", {**note, "text": 123}),
                await client.call_tool("file_note", note),
                await client.call_tool("file_note", note),
            ]

    numeric, first, again = anyio.run(drive)
    assert numeric.is_error and numeric.structured_content["error"]["field"] == "text"
    assert numeric.structured_content["error"]["code"] == "invalid"
    assert not first.is_error and not again.is_error
    assert again.structured_content == first.structured_content
    assert PracticeNote.objects.filter(case__key="2026-014", origin__message_ids=["m-1"]).count() == 1
