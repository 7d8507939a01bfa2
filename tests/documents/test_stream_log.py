"""Issue 32: a streamed ask logs exactly one query-log row per question, wherever the client drops the connection.

Against the project's ASGI application under a real uvicorn server (test_answers.py's
`asgi_server`), with raw sockets, so the client can leave at a chosen point: before the first byte
(while the view is still at work), mid-stream (after the first bytes, before `done`), and after the end.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from graph_memory.documents import answers
from graph_memory.models import DocumentQuery
from tests.document_support import ESCROW_CLAUSE, doc_world
from tests.documents.test_answers import ESCROW_PAGE, OFFLINE, OPENAI, asgi_server  # noqa: F401 (a fixture)
from tests.openai_server import Reply

SETTLE = 2.0  # seconds to wait after a row appears, for a second row that must never come


def ask(address: str, path: str, token: str, *, leave: Callable[[socket.socket, bytes], bool]) -> bytes:
    """Send the ask; read until `leave(sock, received)` says to go (or the server ends), then close."""
    host, port = address.split(":")
    sock = socket.create_connection((host, int(port)), timeout=20)
    request = (f"GET {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Token {token}\r\n"
               "Accept: text/event-stream\r\nConnection: close\r\n\r\n")  # fmt: skip
    sock.sendall(request.encode())
    received = b""
    try:
        while not leave(sock, received):
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    finally:
        sock.close()
    return received


def one_more_row(before: int) -> DocumentQuery:
    """The one row the question added: waits for it, then for SETTLE seconds for any second one."""
    deadline = time.monotonic() + 15
    while DocumentQuery.objects.count() == before:
        assert time.monotonic() < deadline, "no query log row was written"
        time.sleep(0.1)
    time.sleep(SETTLE)
    rows = list(DocumentQuery.objects.order_by("id")[before:])
    assert len(rows) == 1, [(r.outcome, r.error) for r in rows]
    return rows[0]


def test_one_row_whichever_moment_the_client_leaves(
    personas: Any,
    asgi_server: str,  # noqa: F811 (the fixture, imported above)
    openai_server: Any,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **OFFLINE}
    world = doc_world(personas)
    token = world.tokens["owner"]
    path = f"/api/memory/cases/{world.case_node}/ask/stream/?q=When+is+the+escrow+amount+released"

    # 1. Before the first byte: the client leaves while the view is still opening the case's documents,
    # so the server cancels the response before the stream is read at all.
    entered, left = threading.Event(), threading.Event()
    opened = answers.open_documents

    def slow_open(**kwargs: Any) -> Any:
        entered.set()
        assert left.wait(15)
        time.sleep(0.5)  # uvicorn sees the closed socket; Django cancels the response
        return opened(**kwargs)

    def leave_once_the_view_runs(sock: socket.socket, received: bytes) -> bool:
        assert entered.wait(15)
        return True

    monkeypatch.setattr(answers, "open_documents", slow_open)
    before = DocumentQuery.objects.count()
    assert ask(asgi_server, path, token, leave=leave_once_the_view_runs) == b""
    left.set()
    row = one_more_row(before)
    assert row.streamed and row.viewer_id == personas.owner.pk and row.case_id == world.case.pk
    assert (row.outcome, row.error) == ("aborted", "client disconnected before the first byte")
    monkeypatch.setattr(answers, "open_documents", opened)

    # 2. Mid-stream: the headers and a ": working" comment are in, the router is still at work.
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **OPENAI}
    openai_server.add_chat(Reply.json({"sections": ["spa#article-5"]}, delay=1.5),
                           Reply.json({"quotes": [{"document": "spa", "page": ESCROW_PAGE, "text": ESCROW_CLAUSE}]}))  # fmt: skip
    before = DocumentQuery.objects.count()
    received = ask(asgi_server, path, token, leave=lambda sock, got: b": working" in got)
    assert b"200 OK" in received.split(b"\r\n")[0] and b"event: done" not in received
    row = one_more_row(before)
    assert (row.outcome, row.error) == ("aborted", "client disconnected") and row.tokens_in > 0

    # 3. After the end: the whole answer read, one row, a success.
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **OFFLINE}
    before = DocumentQuery.objects.count()
    received = ask(asgi_server, path, token, leave=lambda sock, got: False)
    assert b"event: done" in received
    row = one_more_row(before)
    assert (row.outcome, row.error) == ("success", "") and row.quotes_served >= 1
