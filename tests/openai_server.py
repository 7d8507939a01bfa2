"""A small OpenAI-compatible HTTP server for tests: real HTTP on 127.0.0.1, scripted answers.

    server = OpenAIServer().start()
    server.add_chat(Reply.json({...}), Reply.error(500))   # served in order
    server.emulate = "llama.cpp"                          # refuse formats like a real server
    ... the real `openai` client talks to server.base_url ...
    server.requests, server.calls("/v1/chat/completions")
    server.stop()

Endpoints:
- POST /v1/chat/completions: the next queued chat `Reply` (or `default_chat`;
  with neither, HTTP 500 "no scenario queued"). `max_tokens` is honoured: an
  answer longer than it (at four characters a token) is cut there with
  finish_reason "length", as real servers do.
- POST /v1/embeddings: the next queued embeddings `Reply` if any, otherwise
  deterministic vectors: a hashed bag of words, L2-normalised, of dimension
  `dimensions` from the request (default 384); `encoding_format` float or
  base64 (the client's default) honoured; usage counts words.

Real servers' refusals of a response format (`emulate`), answered before a
reply is taken from the queue:
- "llama.cpp" (llama-cpp-python 0.3.36): `json_schema` gets HTTP 500 with its
  FastAPI validation error as the message (`LLAMA_CPP_REFUSAL`, as that
  server printed it); `json_object` with a `schema` is served (the server
  turns the schema into a grammar); `json_object` without one makes the
  model echo the JSON Schema from the prompt, nested ever deeper, until
  `max_tokens` (or, with none, until the client gives up: llama-cpp-python's
  default is unlimited).
- "vllm" (releases before structured outputs): `json_schema` gets HTTP 400
  with a top-level `{"object": "error", ...}` body; `guided_json` is served.
- "openai" (a model without structured outputs): `json_schema` gets HTTP 400
  invalid_request_error on `response_format`; so does any argument it does
  not know (`guided_json`, `response_format.schema`); plain `json_object` is
  served.

`Reply.not_json(b"...")` answers (HTTP 200 by default) with a body that is
not JSON, on either endpoint; `Reply(usage_block={...})` sends that usage
block as is (garbage counts); an embeddings `Reply(body={...})` with status
200 is sent as the whole body (non-numbers, nulls, the wrong dimension).

`Reply.endless()` is a model that never closes its JSON: cut by `max_tokens`
if the request has one, otherwise it runs until the client times out.

The `openai_server` fixture in conftest.py starts one per test and points
OPENAI_BASE_URL / OPENAI_API_KEY at it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import struct
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer. `content` is the chat message content (a string, sent as is)."""

    status: int = 200
    content: str | None = None
    body: dict[str, Any] | None = None  # a whole JSON body, overriding everything else
    delay: float = 0.0
    prompt_tokens: int = 420
    completion_tokens: int = 96
    finish_reason: str = "stop"
    runaway: bool = False
    usage: bool = True  # False: the answer carries no usage block, as some servers send
    # A usage block as given (garbage counts: -7, 5e9, "many"), instead of the one built from the counts above.
    usage_block: Any = None
    # The response body as these bytes, not JSON (a proxy's HTML page, a cut-off body), with this content type.
    raw_body: bytes | None = None
    content_type: str = "application/json"

    @classmethod
    def json(cls, obj: Any, **kwargs: Any) -> Reply:
        return cls(content=json.dumps(obj), **kwargs)

    @classmethod
    def raw(cls, text: str, **kwargs: Any) -> Reply:
        return cls(content=text, **kwargs)

    @classmethod
    def error(cls, status: int, message: str = "server error", **kwargs: Any) -> Reply:
        return cls(status=status, body={"error": {"message": message, "type": "server_error", "code": None}}, **kwargs)

    @classmethod
    def not_json(cls, data: bytes = b"<html><body>502 Bad Gateway</body></html>", **kwargs: Any) -> Reply:
        """HTTP 200 (unless `status` says otherwise) with a body that is not JSON."""
        return cls(raw_body=data, **kwargs)

    @classmethod
    def endless(cls, **kwargs: Any) -> Reply:
        """A model that never closes its JSON (see `runaway` in the module docstring)."""
        return cls(runaway=True, **kwargs)

    @classmethod
    def slow(cls, seconds: float, then: Reply | None = None) -> Reply:
        reply = then or cls(content="{}")
        reply.delay = seconds
        return reply


def hashed_embedding(text: str, dimensions: int = 384) -> list[float]:
    """Deterministic bag-of-words vector: each word adds +-1 at a hashed index; L2-normalised."""
    vector = [0.0] * dimensions
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "big") % dimensions
        vector[index] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0:
        vector[0], norm = 1.0, 1.0
    return [v / norm for v in vector]


class OpenAIServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.emulate: str | None = None  # "llama.cpp", "vllm" or "openai": see the module docstring
        self.default_chat: Reply | None = None
        self._chat: deque[Reply] = deque()
        self._embeddings: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- scripting -------------------------------------------------------------------------

    def add_chat(self, *replies: Reply) -> None:
        with self._lock:
            self._chat.extend(replies)

    def add_embeddings(self, *replies: Reply) -> None:
        with self._lock:
            self._embeddings.extend(replies)

    def calls(self, path: str | None = None) -> int:
        """How many requests arrived (at `path`, e.g. "/v1/chat/completions")."""
        with self._lock:
            return sum(1 for r in self.requests if path is None or r["path"] == path)

    def chat_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r["body"] for r in self.requests if r["path"] == "/v1/chat/completions"]

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> OpenAIServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                status, payload, delay = server._answer(self.path, body)
                if delay and server._stopping.wait(delay):
                    return
                content_type = "application/json"
                if isinstance(payload, Reply):  # a raw body
                    data, content_type = payload.raw_body or b"", payload.content_type
                else:
                    data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="openai-test-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    # --- answering -------------------------------------------------------------------------

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any] | Reply, float]:
        with self._lock:
            self.requests.append({"path": path, "body": body})
            if path == "/v1/chat/completions":
                refusal = _refusal(self.emulate, body)
                if refusal is not None:
                    return refusal[0], refusal[1], 0.0
                if self.emulate == "llama.cpp" and _json_object_without_schema(body):
                    reply: Reply | None = Reply.endless()
                else:
                    reply = self._chat.popleft() if self._chat else self.default_chat
                if reply is None:
                    return 500, {"error": {"message": "no scenario queued", "type": "server_error"}}, 0.0
                if reply.runaway and not body.get("max_tokens"):
                    return 200, {}, RUNS_FOREVER  # the client's timeout ends it
                if reply.raw_body is not None:
                    return reply.status, reply, reply.delay
                return reply.status, reply.body or _completion(body, reply), reply.delay
            if path == "/v1/embeddings":
                reply = self._embeddings.popleft() if self._embeddings else None
                if reply is not None and reply.raw_body is not None:
                    return reply.status, reply, reply.delay
                if reply is not None and (reply.status != 200 or reply.body):
                    return reply.status, reply.body or {}, reply.delay
                return 200, _embeddings(body), reply.delay if reply else 0.0
        return 404, {"error": {"message": f"unknown path {path}", "type": "invalid_request_error"}}, 0.0


RUNS_FOREVER = 60.0
# What llama-cpp-python 0.3.36's server answered to response_format json_schema (HTTP 500), its
# source path shortened.
LLAMA_CPP_REFUSAL = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"llama_cpp/server/app.py\", line 376, "
    "in create_chat_completion\n    POST /v1/chat/completions"
)
VLLM_REFUSAL = (
    "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}]"
)
OPENAI_REFUSAL = "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model."


def _refusal(emulate: str | None, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
    fmt = body.get("response_format") or {}
    if emulate is None:
        return None
    if emulate == "llama.cpp" and fmt.get("type") == "json_schema":
        error = {"message": LLAMA_CPP_REFUSAL, "type": "internal_server_error", "param": None, "code": None}
        return 500, {"error": error}
    if emulate == "vllm" and fmt.get("type") == "json_schema":
        return 400, {"object": "error", "message": VLLM_REFUSAL, "type": "BadRequestError", "param": None, "code": 400}
    if emulate == "openai":
        if fmt.get("type") == "json_schema":
            error = {"message": OPENAI_REFUSAL, "type": "invalid_request_error", "param": "response_format"}
            return 400, {"error": {**error, "code": None}}
        unknown = sorted(set(body) - _OPENAI_ARGUMENTS) or (["response_format.schema"] if "schema" in fmt else [])
        if unknown:
            message = f"Unrecognized request argument supplied: {unknown[0]}"
            return 400, {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}
    return None


_OPENAI_ARGUMENTS = {
    "model", "messages", "temperature", "max_tokens", "max_completion_tokens", "response_format", "top_p", "n",
    "stop", "seed", "stream", "user", "tools", "tool_choice", "logprobs", "frequency_penalty", "presence_penalty",
}  # fmt: skip


def _json_object_without_schema(body: dict[str, Any]) -> bool:
    fmt = body.get("response_format") or {}
    return fmt.get("type") == "json_object" and "schema" not in fmt


def _echoed_schema(chars: int) -> str:
    """What a small model does with a JSON Schema in its prompt and no grammar: repeat it, nested ever deeper."""
    text = ""
    while len(text) < chars:
        text = '{"type": "object", "properties": {"status": {"type": "array", "items": ' + text
    return text[:chars]


def _completion(request: dict[str, Any], reply: Reply) -> dict[str, Any]:
    content, completion_tokens, finish_reason = reply.content, reply.completion_tokens, reply.finish_reason
    max_tokens = request.get("max_tokens")
    if reply.runaway:
        content, completion_tokens, finish_reason = _echoed_schema(4 * max_tokens), max_tokens, "length"
    elif max_tokens and content is not None and len(content) > 4 * max_tokens:
        content, completion_tokens, finish_reason = content[: 4 * max_tokens], max_tokens, "length"
    answer: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_767_225_600,
        "model": request.get("model", "test-model"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
    }
    if reply.usage_block is not None:
        answer["usage"] = reply.usage_block
    elif reply.usage:
        answer["usage"] = {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": reply.prompt_tokens + completion_tokens,
        }
    return answer


def _embeddings(request: dict[str, Any]) -> dict[str, Any]:
    inputs = request.get("input", [])
    if isinstance(inputs, str):
        inputs = [inputs]
    dimensions = int(request.get("dimensions") or 384)
    data = []
    words = 0
    for index, text in enumerate(inputs):
        text = text if isinstance(text, str) else " ".join(map(str, text))
        words += len(re.findall(r"\w+", text))
        vector = hashed_embedding(text, dimensions)
        if request.get("encoding_format") == "base64":
            encoded: Any = base64.b64encode(struct.pack(f"<{dimensions}f", *vector)).decode()
        else:
            encoded = vector
        data.append({"object": "embedding", "index": index, "embedding": encoded})
    return {
        "object": "list",
        "data": data,
        "model": request.get("model", "test-embedding"),
        "usage": {"prompt_tokens": words, "total_tokens": words},
    }
