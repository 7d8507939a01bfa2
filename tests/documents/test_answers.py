"""Asking a case's documents: the wall, routing, verbatim quotes checked on their pages, JSON and SSE, the log."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import uuid
from typing import Any

import pytest
from django.db import connection
from django.test import Client as HttpClient
from django.test.utils import CaptureQueriesContext

from graph_memory.documents import answers
from graph_memory.documents.routing import build_document_index
from graph_memory.documents.terms import quote_on_page
from graph_memory.models import AICall, DocumentQuery, Node
from tests.api_support import NOT_FOUND
from tests.document_support import ESCROW_CLAUSE, DocWorld, doc_world
from tests.openai_server import Reply

OFFLINE = {"WRITER": "extractive", "EMBEDDER": "none", "THROTTLE_RATE": None}
OPENAI = {"WRITER": "openai", "EMBEDDER": "none", "OPENAI_MAX_RETRIES": 0, "THROTTLE_RATE": None}
ESCROW_Q = "When is the escrow amount released to the sellers?"
ESCROW_PAGE = 18  # article 5 of 4-page articles, its second page


@pytest.fixture
def world(personas, settings) -> DocWorld:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **OFFLINE}
    return doc_world(personas)


def ask(world: DocWorld, persona: str, node: str | None = None, **params: Any) -> Any:
    client = HttpClient(headers=world.headers(persona))
    return client.get(f"/api/memory/cases/{node or world.case_node}/ask/", {"q": ESCROW_Q, **params})


def sse_events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in raw.decode().split("\n\n"):
        if block.strip() and not block.startswith(":"):  # ": working" comments keep the line alive
            lines = dict(line.split(": ", 1) for line in block.splitlines())
            events.append((lines["event"], json.loads(lines["data"])))
    return events


# --- offline -------------------------------------------------------------------------------------


def test_offline_a_clause_question_returns_the_clause_verbatim_with_its_page(world) -> None:
    response = ask(world, "owner")
    assert response.status_code == 200, response.content
    body = response.json()
    top = body["quotes"][0]
    assert ESCROW_CLAUSE in top["text"] and top["page"] == ESCROW_PAGE and top["verified"] is True
    assert top["document"] == {"key": "spa", "title": "Share Purchase Agreement"}
    assert body["sections"][0] == "spa#article-5" and body["router"] == "offline"
    assert all(quote_on_page(q["text"], world.pages[q["page"] - 1]) for q in body["quotes"])
    assert f"p. {ESCROW_PAGE})" in body["text"] and body["notice"]
    # The index was built on the spot (asked before the nightly run), offline, and used.
    assert not body["stale"]
    row = DocumentQuery.objects.get()
    assert (row.outcome, row.viewer, row.sections[0], row.quotes_served) == ("success", world.personas.owner,
                                                                            "spa#article-5", len(body["quotes"]))
    assert "escrow" not in json.dumps([row.documents, row.sections, row.error, row.router]).replace("spa#", "")


def test_every_generated_question_routes_to_its_page_offline(world) -> None:
    build_document_index(case_id=world.case.pk, key="spa")
    target = answers.Target(answers.NodeRef("x", "case", "x"), world.case.pk, world.case.firm_id,
                            [d for d in answers.get_adapter().case_documents(case_id=world.case.pk) if d.key == "spa"])
    for question in world.questions:
        answer = answers.answer_question(target, question=question.text)
        assert any(q.page == question.page for q in answer.quotes), question.text


def test_a_question_that_routes_to_nothing_says_so(world) -> None:
    body = ask(world, "owner", q="zebra quokka").json()
    assert body["quotes"] == [] and body["sections"] == [] and body["message"] == answers.NO_SECTION
    assert DocumentQuery.objects.get().outcome == "unrouted"


def test_one_document_of_the_case_may_be_named(world) -> None:
    assert ask(world, "owner", document="spa").status_code == 200
    assert ask(world, "owner", document="nope").content == NOT_FOUND


# --- the wall ------------------------------------------------------------------------------------


def test_only_viewers_who_may_open_the_case_get_an_answer_and_hidden_is_absent(world) -> None:
    assert ask(world, "teammate").status_code == 200
    assert ask(world, "firm_admin").status_code == 200
    absent = ask(world, "owner", node=str(uuid.uuid4()))
    assert absent.status_code == 404 and absent.content == NOT_FOUND
    for persona in ("outsider", "other_firm_admin"):
        response = ask(world, persona)
        assert (response.status_code, response.content) == (404, NOT_FOUND), persona
    # The owner's case exists, the firm's hidden case does not exist for them, nor its document via theirs.
    assert ask(world, "owner", node=world.hidden_node).content == NOT_FOUND
    assert ask(world, "owner", document="secret-spa").content == NOT_FOUND
    # A node that is not a case (the client) is no case to ask.
    client_node = Node.objects.get(kind=Node.Kind.CLIENT, ref_id=world.case.client_id)
    assert ask(world, "owner", node=str(client_node.pk)).content == NOT_FOUND
    stream = HttpClient(headers=world.headers("outsider")).get(
        f"/api/memory/cases/{world.case_node}/ask/stream/", {"q": ESCROW_Q})
    assert (stream.status_code, stream.content) == (404, NOT_FOUND)
    # No row of the log for a question the wall turned away.
    assert DocumentQuery.objects.filter(viewer__in=[world.personas.outsider, world.personas.other_firm_admin]).count() == 0


def test_an_answer_reads_a_fixed_number_of_queries(world) -> None:
    build_document_index(case_id=world.case.pk, key="spa")
    viewer = world.personas.owner
    # the wall (node_get) + documents + indexes + one page read per routed section (at most three) + the log row,
    # however long the document and however many sections its index has.
    with CaptureQueriesContext(connection) as wall:
        answers.node_get(viewer=viewer, node_id=world.case_node)
    for question in (ESCROW_Q, "zebra escrow agent quokka nonesuch", world.questions[0].text):
        with CaptureQueriesContext(connection) as queries:
            answer = answers.ask_documents(viewer=viewer, node_id=world.case_node, question=question)
        assert 1 <= len(answer.sections) <= 3
        assert len(queries) == len(wall) + 3 + len(answer.sections), question


def test_the_bad_question_is_a_400_naming_the_field(world) -> None:
    response = ask(world, "owner", q="")
    assert response.status_code == 400 and response.json()["error"]["field"] == "q"
    assert ask(world, "owner", q="x" * 501).json()["error"]["field"] == "q"


# --- with a model --------------------------------------------------------------------------------


def test_the_router_drops_unknown_and_hidden_ids_and_a_quote_not_on_its_page_is_never_served(
    world, openai_server, settings
) -> None:
    build_document_index(case_id=world.case.pk, key="spa")
    build_document_index(case_id=world.hidden_case.pk, key="secret-spa")
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **OPENAI}
    fake = "The Escrow Amount shall be released to the Buyer on demand."
    openai_server.add_chat(
        Reply.json({"sections": ["spa#article-99", "secret-spa#article-1", "spa#article-5"]}),
        Reply.json({"quotes": [
            {"document": "spa", "page": ESCROW_PAGE, "text": fake},
            {"document": "spa", "page": ESCROW_PAGE, "text": ESCROW_CLAUSE},
            {"document": "secret-spa", "page": 1, "text": "The Nightingale escrow is released on the Zephyr milestone"},
            {"document": "spa", "page": ESCROW_PAGE + 1, "text": ESCROW_CLAUSE},  # right words, wrong page
        ]}),
    )  # fmt: skip
    body = ask(world, "owner").json()
    assert body["router"] == "model" and body["answerer"] == "model"
    assert body["sections"] == ["spa#article-5"] and body["unknown_sections"] == 2
    assert [q["text"] for q in body["quotes"]] == [ESCROW_CLAUSE] and body["quotes"][0]["page"] == ESCROW_PAGE
    assert body["rejected_quotes"] == 3 and fake not in json.dumps(body)
    router, answer = openai_server.chat_requests()
    assert router["temperature"] == 0 and router["response_format"]["json_schema"]["name"] == "document_route"
    assert "Nightingale" not in router["messages"][1]["content"]  # another case's index is never shown
    assert "Nightingale" not in answer["messages"][1]["content"]  # nor its pages loaded
    assert "ARTICLE 5 ESCROW" in answer["messages"][1]["content"] and "ARTICLE 6" not in answer["messages"][1]["content"]
    row = DocumentQuery.objects.get()
    assert (row.quotes_served, row.quotes_rejected, row.router) == (1, 3, "model")
    assert row.tokens_in == 2 * 420 and row.tokens_out == 2 * 96
    purposes = list(AICall.objects.order_by("id").values_list("purpose", "outcome", "report"))
    assert purposes == [("document_route", "ok", {"unknown_sections": 2}),
                        ("document_answer", "ok", {"proposed": 4, "served": 1, "rejected": 3})]  # fmt: skip
    assert body["usage"]["route"]["tokens_in"] == 420 and body["usage"]["answer"]["tokens_out"] == 96


def test_a_router_returning_only_unknown_ids_fails_and_the_offline_router_decides(world, openai_server, settings) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **OPENAI}
    openai_server.add_chat(
        Reply.json({"sections": ["spa#chapter-x", "secret-spa#article-1"]}),
        Reply.json({"quotes": [{"document": "spa", "page": ESCROW_PAGE, "text": ESCROW_CLAUSE}]}),
    )
    body = ask(world, "owner").json()
    assert body["router"] == "offline after model error" and body["sections"][0] == "spa#article-5"
    assert body["quotes"][0]["text"] == ESCROW_CLAUSE
    route = AICall.objects.get(purpose=AICall.Purpose.DOCUMENT_ROUTE)
    assert route.outcome == "error" and "unknown" in route.error
    # Indexed on the spot offline, and left flagged so the nightly run rebuilds it with the model.
    assert body["stale"] is True


def test_a_failed_answer_call_falls_back_to_passages_and_is_logged(world, openai_server, settings) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **OPENAI}
    openai_server.add_chat(Reply.json({"sections": ["spa#article-5"]}), Reply.error(500))
    body = ask(world, "owner").json()
    assert body["answerer"] == "offline after model error" and ESCROW_CLAUSE in body["quotes"][0]["text"]
    assert DocumentQuery.objects.get().error.startswith("answer: HTTP 500")


# --- served as events ----------------------------------------------------------------------------


# The test client is WSGI-like: Django warns that it consumes the async stream synchronously, which is
# the point here (a WSGI server gets the whole answer too). The real ASGI server is tested below.
@pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume asynchronous iterators")
def test_server_sent_events_through_the_test_client(world) -> None:
    client = HttpClient(headers=world.headers("owner"))
    response = client.get(f"/api/memory/cases/{world.case_node}/ask/", {"q": ESCROW_Q}, HTTP_ACCEPT="text/event-stream")
    assert response.status_code == 200 and response["Content-Type"] == "text/event-stream"
    events = sse_events(b"".join(iter(response)))  # an async iterator, consumed as WSGI would
    names = [name for name, _ in events]
    assert names[-1] == "done" and set(names[:-1]) == {"token"} and len(names) > 2
    done = events[-1][1]
    assert "".join(data["text"] for name, data in events[:-1]) == done["text"]
    assert ESCROW_CLAUSE in done["quotes"][0]["text"] and done["notice"]
    assert DocumentQuery.objects.get().streamed is True


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def asgi_server(transactional_db):  # -> Iterator[str]
    """The project's ASGI application under a real uvicorn server on 127.0.0.1, in this process."""
    import uvicorn
    from django.core.asgi import get_asgi_application

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(get_asgi_application(), host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="off"))  # fmt: skip
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    yield f"127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def _get(address: str, path: str, token: str, *, read_all: bool) -> bytes:
    host, port = address.split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    request = (f"GET {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Token {token}\r\n"
               "Accept: text/event-stream\r\nConnection: close\r\n\r\n")  # fmt: skip
    sock.sendall(request.encode())
    received = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
            if not read_all and b"\r\n\r\n" in received:
                break  # headers are in: leave before the answer
    finally:
        sock.close()
    return received


def _wait_for_log(count: int = 1, seconds: float = 15.0) -> list[DocumentQuery]:
    """The rows, once `count` are written and completed (a stream's row is written as the question is
    received, as if the client left before the first byte, and completed when the stream ends)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        rows = list(DocumentQuery.objects.order_by("id"))
        if len(rows) >= count and not any(r.error == "client disconnected before the first byte" for r in rows):
            return rows
        time.sleep(0.1)
    raise AssertionError("no query log row was written, or it was not completed")


def test_sse_through_a_real_asgi_server_and_a_disconnect_is_logged_as_aborted(
    personas, asgi_server, openai_server, settings
) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **OFFLINE}
    world = doc_world(personas)
    path = f"/api/memory/cases/{world.case_node}/ask/stream/?q=When+is+the+escrow+amount+released"
    raw = _get(asgi_server, path, world.tokens["owner"], read_all=True)
    head, _, body = raw.partition(b"\r\n\r\n")
    assert b"200 OK" in head.split(b"\r\n")[0] and b"text/event-stream" in head
    assert b"event: token" in body and b"event: done" in body
    assert ESCROW_CLAUSE.encode() in body.replace(b"\\u20ac", b"")
    assert _wait_for_log(1)[0].outcome == "success"

    # A router that takes its time: the client leaves before any event; the answer call is never
    # made, and the row says aborted, with the router call's tokens.
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **OPENAI}
    openai_server.add_chat(Reply.json({"sections": ["spa#article-5"]}, delay=1.5),
                           Reply.json({"quotes": [{"document": "spa", "page": ESCROW_PAGE, "text": ESCROW_CLAUSE}]}))  # fmt: skip
    _get(asgi_server, path, world.tokens["owner"], read_all=False)
    rows = _wait_for_log(2)
    assert rows[1].outcome == "aborted" and rows[1].streamed and rows[1].error == "client disconnected"
    assert rows[1].viewer_id == personas.owner.pk and rows[1].tokens_in == 420
    time.sleep(0.5)
    assert openai_server.calls("/v1/chat/completions") == 1  # the router only
    assert list(AICall.objects.values_list("purpose", flat=True)) == ["document_route"]


def test_the_stream_logs_in_finally_when_cancelled() -> None:
    """Unit level: a cancelled stream still awaits its log write."""
    from graph_memory.api import views_documents

    logged: list[str] = []

    async def run() -> None:
        target = answers.Target(answers.NodeRef("n", "case", "c"), 1, 1, [])
        def blocked(target: Any, *, question: str, should_stop: Any = None) -> Any:
            time.sleep(0.3)
            return answers.Answer(case=target.case, question=question)

        original, original_log = answers.answer_question, answers.log_query
        answers.answer_question = blocked  # type: ignore[assignment]
        answers.log_query = lambda *a, **k: logged.append(k["outcome"])  # type: ignore[assignment]
        try:
            stream = views_documents.stream_answer(target, viewer=None, question="q")
            task = asyncio.ensure_future(stream.__anext__())
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        finally:
            answers.answer_question, answers.log_query = original, original_log  # type: ignore[assignment]

    asyncio.run(run())
    assert logged == ["aborted"]


def test_a_client_that_left_stops_before_the_answer_call(world, openai_server, settings) -> None:
    settings.GRAPH_MEMORY = {**settings.GRAPH_MEMORY, **OPENAI}
    openai_server.add_chat(Reply.json({"sections": ["spa#article-5"]}))
    target = answers.open_documents(viewer=world.personas.owner, node_id=world.case_node)
    answer = answers.answer_question(target, question=ESCROW_Q, should_stop=lambda: True)
    assert answer.quotes == [] and answer.error == answers.STOPPED and answer.sections == ["spa#article-5"]
    assert openai_server.calls("/v1/chat/completions") == 1
