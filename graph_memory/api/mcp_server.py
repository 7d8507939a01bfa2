"""The assistant's tools over the Model Context Protocol (official `mcp` SDK, low-level `Server`).

One source, no second API: the tools are `api.tools.tool_definitions()`, the
list `/api/memory/tools/` answers, and each call is carried out by the very DRF
view its method and path name, in-process, as the session's user. So a tool
answers exactly what its endpoint answers that user — the same JSON, the
notice, the one error shape, hidden ≡ absent — and a tool added to that list
works here with no code in this module.

Two ways in:
- Streamable HTTP, `mcp_http_app()` (or `with_mcp(django_asgi_app)`, which
  config/asgi.py uses to serve it at `/mcp/` next to Django). Every HTTP request
  carries the user's DRF token, `Authorization: Token <key>` or `Bearer <key>`;
  anything else is answered 401 with `WWW-Authenticate: Bearer
  error="invalid_token"`, as the MCP authorization spec asks of a resource server.
  Stateless and POST only: a GET (the transport's optional server-to-client
  event stream) or a DELETE (ending a session) is answered 405.
- stdio, `serve_stdio(username)` behind `manage.py memory_mcp --user USERNAME`.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import quote

import anyio
import mcp_types as types
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import close_old_connections
from django.http.request import split_domain_port, validate_host
from django.urls import Resolver404, resolve
from mcp.server import Server
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from rest_framework.authtoken.models import Token
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIRequestFactory, force_authenticate
from starlette.applications import Starlette
from starlette.authentication import AuthCredentials
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from graph_memory.adapter import Viewer
from graph_memory.api import tools
from graph_memory.api.errors import error_body
from graph_memory.ledger import served_ledger
from graph_memory.wall.access import NotFound, viewer_firm_id

logger = logging.getLogger(__name__)

SERVER_NAME = "graph-memory"
_KEYWORDS = ("token", "bearer")  # DRF's own keyword, and the one MCP clients send
_REQUIRED = "This field is required."


# --- The tools: listed from tools.py, carried out by the API's own views ------------


def list_tools() -> list[types.Tool]:
    """The tools of `/api/memory/tools/`, one for one: same names, descriptions and JSON Schemas."""
    return [
        types.Tool(
            name=t["name"],
            description=t["description"],
            input_schema=t["parameters"],
            annotations=types.ToolAnnotations(
                read_only_hint=t["method"] == "GET",
                destructive_hint=False,  # the one write files a new note; nothing is changed or removed
                idempotent_hint=t["method"] == "GET",
                open_world_hint=False,
            ),
        )
        for t in tools.tool_definitions()
    ]


class ArgumentError(Exception):
    """An argument the endpoint could not even be asked about (unknown, missing from the path, not a value)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.body = error_body("invalid", message, field)


def _request_for(definition: dict[str, Any], arguments: dict[str, Any]) -> Any:
    """The HTTP request the tool stands for: path parameters into the path, the rest as query (GET) or JSON body."""
    known = set(definition["parameters"].get("properties", {}))
    for name in arguments:
        if name not in known:
            raise ArgumentError(name, f"Unknown argument. This tool takes: {', '.join(sorted(known)) or 'none'}.")
    rest = {k: v for k, v in arguments.items() if v is not None}  # null: the model's way of leaving one out
    path = definition["path"]
    for name in [p.split("}")[0] for p in path.split("{")[1:]]:
        value = rest.pop(name, None)
        if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
            raise ArgumentError(name, _REQUIRED if value in (None, "") else "Must be a string.")
        # Quoted whole, so a value with "/" or "?" reaches the same route (and the same 404) as over HTTP.
        path = path.replace("{" + name + "}", quote(str(value), safe=""))
    factory = APIRequestFactory()
    method = definition["method"].upper()
    if method == "GET":
        query = {}
        for name, value in rest.items():
            if isinstance(value, (dict, list)):
                raise ArgumentError(name, "Must be a single value, not a list or an object.")
            query[name] = ("true" if value else "false") if isinstance(value, bool) else str(value)
        return factory.get(path, query)
    return factory.generic(method, path, json.dumps(rest), content_type="application/json")


def call_endpoint(viewer: Viewer, name: str, arguments: dict[str, Any]) -> tuple[int, str]:
    """Carry out tool `name` for `viewer` through its endpoint's DRF view; return the status and the JSON it answers.

    Synchronous (ORM): call it from a worker thread. The view does all the
    validation, sign-in policy, throttling and error shaping it does over HTTP;
    only the authentication is given (the session's user), not re-checked.
    """
    definition = next((t for t in tools.tool_definitions() if t["name"] == name), None)
    if definition is None:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")
    with served_ledger.answering_as(f"mcp:{name}"):
        try:
            request = _request_for(definition, arguments)
        except ArgumentError as exc:
            return _unviewed(viewer, name, arguments, 400, exc.body)
        force_authenticate(request, user=viewer)
        try:
            match = resolve(request.path_info)
        except Resolver404:  # a host that left out the memory's catch-all route: still the one 404
            return _unviewed(viewer, name, arguments, 404, error_body("not_found", NotFound.message))
        request.resolver_match = match
        # The view writes the served-ledger row, named for the tool (served_ledger.answering_as).
        response = match.func(request, *match.args, **match.kwargs)
    if getattr(response, "streaming", False):
        raise MCPError(code=types.INTERNAL_ERROR, message=f"Tool {name} answers a stream; it cannot be called here.")
    response.render()
    return response.status_code, response.content.decode() or _json({})


def _unviewed(viewer: Viewer, name: str, arguments: dict[str, Any], status: int, body: dict[str, Any]) -> tuple[int, str]:
    """An error answered before any view: its served-ledger row here (no case), or no answer (fail closed)."""
    firm_id = viewer_firm_id(viewer)
    if firm_id is not None:
        try:
            served_ledger.record(
                firm_id=firm_id, viewer_id=viewer.pk, endpoint=f"mcp:{name}",
                status=served_ledger.status_for(status), query={"tool": name, "arguments": arguments},
            )  # fmt: skip
        except served_ledger.LedgerUnavailable:
            message = "The memory could not record this answer, so it gives none. Try again later."
            return 503, _json(error_body("unavailable", message))
    return status, _json(body)


def _json(body: dict[str, Any]) -> str:
    return JSONRenderer().render(body).decode()  # the bytes the API itself would send


def _call_in_thread(load_viewer: Callable[[], Viewer], name: str, arguments: dict[str, Any]) -> tuple[int, str]:
    # What Django's request handler does around a request: no connection
    # outlives CONN_MAX_AGE, and a broken one is never reused.
    close_old_connections()
    try:
        return call_endpoint(load_viewer(), name, arguments)
    finally:
        close_old_connections()


ViewerLoader = Callable[[ServerRequestContext[Any, Any]], Callable[[], Viewer]]


def build_server(viewer_loader: ViewerLoader) -> Server[Any]:
    """The MCP server. `viewer_loader(ctx)` returns a synchronous callable giving the request's user."""

    async def on_list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list_tools())

    async def on_call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        load = viewer_loader(ctx)
        try:
            status, text = await sync_to_async(_call_in_thread, thread_sensitive=True)(
                load, params.name, params.arguments or {}
            )
        except MCPError:
            raise
        except Exception:
            logger.exception("MCP tool %r failed", params.name)
            raise MCPError(code=types.INTERNAL_ERROR, message="The memory could not answer; try again later.") from None
        # A 4xx is the tool's own answer (not found, invalid argument, throttled), for the model to read:
        # a tool error in the API's body, not a protocol error.
        return types.CallToolResult(
            content=[types.TextContent(text=text)], structured_content=json.loads(text), is_error=status >= 400
        )

    return Server(
        SERVER_NAME,
        version="1",
        title="Firm memory",
        instructions=tools.DISCIPLINE,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


# --- Streamable HTTP: the DRF token on every request --------------------------------


class MemoryUser(AuthenticatedUser):
    """The SDK's authenticated user (so its session manager ties a session to this principal), with the Django user."""

    def __init__(self, user: Viewer, key: str) -> None:
        super().__init__(AccessToken(token=key, client_id=f"user:{user.pk}", subject=str(user.pk), scopes=[]))
        self.django_user = user


def _user_for_key(key: str) -> Viewer | None:
    close_old_connections()
    try:
        token = Token.objects.select_related("user").filter(key=key).first()
    finally:
        close_old_connections()
    if token is None or not token.user.is_active:
        return None
    return token.user


def _allowed_host(host: str) -> bool:
    """Django's own ALLOWED_HOSTS rule (DNS-rebinding protection, as Django gives every other path)."""
    allowed = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    domain, _ = split_domain_port(host)
    return bool(domain) and validate_host(domain, allowed)


def _unauthorized(description: str) -> JSONResponse:
    return JSONResponse(
        {"error": "invalid_token", "error_description": description},
        status_code=401,
        headers={"WWW-Authenticate": f'Bearer error="invalid_token", error_description="{description}"'},
    )


class TokenAuthMiddleware:
    """Admit a request only with an active user's DRF token; put that user in the scope."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if not _allowed_host(headers.get("host", "")):
            await JSONResponse({"error": "invalid_request", "error_description": "Host not allowed"}, 421)(
                scope, receive, send
            )
            return
        if origin and not _allowed_host(origin.partition("://")[2]):  # a browser page of another site
            await JSONResponse({"error": "invalid_request", "error_description": "Origin not allowed"}, 403)(
                scope, receive, send
            )
            return
        keyword, _, key = headers.get("authorization", "").strip().partition(" ")
        if keyword.lower() not in _KEYWORDS or not key.strip():
            await _unauthorized("Send the user's API token: Authorization: Token <key>")(scope, receive, send)
            return
        user = await sync_to_async(_user_for_key, thread_sensitive=True)(key.strip())
        if user is None:
            await _unauthorized("Invalid token")(scope, receive, send)
            return
        scope = {**scope, "user": MemoryUser(user, key.strip()), "auth": AuthCredentials([])}
        await self.app(scope, receive, send)


def _viewer_from_request(ctx: ServerRequestContext[Any, Any]) -> Callable[[], Viewer]:
    user = getattr(ctx.request, "scope", {}).get("user")
    if not isinstance(user, MemoryUser):  # unreachable behind TokenAuthMiddleware
        raise MCPError(code=types.INVALID_REQUEST, message="Not signed in.")
    return lambda: user.django_user


class _Endpoint:
    """The Streamable HTTP endpoint; its session manager lives as long as the ASGI lifespan that started it."""

    def __init__(self, server: Server[Any]) -> None:
        self.server = server
        self.manager: StreamableHTTPSessionManager | None = None

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Any) -> AsyncIterator[None]:
        # A fresh manager per lifespan: the SDK's can run only once, and a
        # server (or a test) may start the application more than once.
        # Stateless JSON: no session state in this process, so any worker
        # behind a load balancer can answer any request, and the user is
        # checked on every request.
        manager = StreamableHTTPSessionManager(app=self.server, stateless=True, json_response=True)
        async with manager.run():
            self.manager = manager
            try:
                yield
            finally:
                self.manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") != "POST":
            # Stateless: no session for a GET stream to belong to, and nothing the server would send on it,
            # so the SDK's GET would hold an idle event stream open for as long as the client likes. The
            # transport's answer for a server without that stream is 405 (and DELETE has no session to end).
            await JSONResponse(
                {"error": "method_not_allowed", "error_description": "This MCP endpoint takes POST only (stateless)."},
                405,
                headers={"Allow": "POST"},
            )(scope, receive, send)
            return
        if self.manager is None:
            await JSONResponse(
                {"error": "unavailable", "error_description": "The MCP endpoint starts with the ASGI lifespan."}, 503
            )(scope, receive, send)
            return
        await self.manager.handle_request(scope, receive, send)


class PrivateAnswers:
    """Every MCP answer is one user's, as every API answer is (`MemoryWiring.cache_control`): no shared
    cache may keep it or hand it to another user, whether it is a result, an error or the 401."""

    HEADERS = [(b"cache-control", b"private, no-store"), (b"vary", b"Authorization, Cookie")]

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def private_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in self.HEADERS}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message = {**message, "headers": kept + self.HEADERS}
            await send(message)

        await self.app(scope, receive, private_send)


def mcp_http_app(*, path: str = "/mcp/") -> Starlette:
    """An ASGI app serving the tools over Streamable HTTP at `path` (with or without its trailing slash).

    It needs the ASGI lifespan (uvicorn's default) to start its session
    manager. Mount it with `with_mcp` next to Django, or route to it yourself.
    """
    endpoint = _Endpoint(build_server(_viewer_from_request))
    guarded = PrivateAnswers(TokenAuthMiddleware(endpoint))
    paths = {path, path.rstrip("/") or "/"}
    return Starlette(routes=[Route(p, guarded) for p in sorted(paths)], lifespan=endpoint.lifespan)


def with_mcp(django_app: ASGIApp, *, path: str = "/mcp/") -> ASGIApp:
    """`django_app` with the MCP endpoint at `path`: lifespan events and that path go to MCP, the rest to Django."""
    mcp = mcp_http_app(path=path)
    paths = {path, path.rstrip("/")}

    async def application(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan" or (scope["type"] == "http" and scope["path"] in paths):
            await mcp(scope, receive, send)
        else:
            await django_app(scope, receive, send)

    return application


# --- stdio: one user, on their own machine ------------------------------------------


def _stdio_viewer(user_pk: Any) -> ViewerLoader:
    def load() -> Viewer:
        # Looked up on every call: a user deactivated meanwhile gets nothing more.
        user = get_user_model().objects.filter(pk=user_pk, is_active=True).first()
        if user is None:
            raise MCPError(code=types.INVALID_REQUEST, message="This user is no longer active.")
        return user

    return lambda ctx: load


async def serve_stdio(user: Viewer, *, stdin: Any = None, stdout: Any = None) -> None:
    """Serve the tools over stdio as `user` until the client closes stdin."""
    server = build_server(_stdio_viewer(user.pk))
    async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(user: Viewer) -> None:
    anyio.run(serve_stdio, user)
