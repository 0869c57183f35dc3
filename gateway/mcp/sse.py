"""The older HTTP+SSE transport at the MCP endpoint, for clients that do not speak Streamable HTTP yet:
``GET /mcp/sse`` opens the event stream (its first event names the message endpoint), and the client
POSTs its messages to ``/mcp/messages/?session_id=...``. Built on the MCP SDK's SseServerTransport,
serving the same server (the same handlers, access, limits and guard) as /mcp.

Both requests are authenticated with the cachegate key, each on its own; a session's messages are
accepted only with the key that opened its stream (the SDK compares the request's ``user``; another
key is answered as if the session did not exist). The guard session is the caller's x-session-id (or a
CLI's own header), else this transport's session id, as the MCP session id is on /mcp.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.lowlevel import Server
from mcp.server.sse import SseServerTransport
from starlette.datastructures import Headers, QueryParams
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from gateway.ids import safe_id
from gateway.mcp.caller import CALLER, Callers, McpCaller

STREAM_PATH = "/mcp/sse"
MESSAGES_PATH = "/mcp/messages/"
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]


def unauthorized() -> JSONResponse:
    message = "Missing or invalid API key: send your cachegate key as 'Authorization: Bearer <key>' or 'x-api-key'."
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}, status_code=401)


def owner(caller: McpCaller) -> AuthenticatedUser:
    """The MCP SDK's user for the caller's key (its id, never the secret): the transports accept a
    session's requests only from the user that opened it."""
    key = f"{caller.tenant}/{caller.identity.id}"
    return AuthenticatedUser(AccessToken(token=key, client_id=key, scopes=[]))


def with_caller(scope: Scope, caller: McpCaller) -> Scope:
    return {**scope, CALLER: caller, "user": owner(caller)}


class AsgiRoute:
    """An ASGI handler as a route's endpoint (Starlette calls a plain function with a Request)."""

    def __init__(self, handle: Asgi) -> None:
        self.handle = handle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.handle(scope, receive, send)


class SseEndpoint:
    def __init__(self, server: Server[Any], callers: Callers, max_body_bytes: int) -> None:
        self.server, self.callers = server, callers
        self.transport = SseServerTransport(MESSAGES_PATH, max_request_body_size=max_body_bytes)

    def _caller(self, scope: Scope) -> McpCaller | None:
        return self.callers.identify(Headers(scope=scope)) if scope["type"] == "http" else None

    async def stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        """GET /mcp/sse: the session's event stream, for as long as the client keeps it open."""
        caller = self._caller(scope)
        if caller is None:
            await unauthorized()(scope, receive, send)
            return
        async with self.transport.connect_sse(with_caller(scope, caller), receive, send) as (read, write):
            await self.server.run(read, write, self.server.create_initialization_options())

    async def message(self, scope: Scope, receive: Receive, send: Send) -> None:
        """POST /mcp/messages/?session_id=...: one client message of an open session."""
        caller = self._caller(scope)
        if caller is None:
            await unauthorized()(scope, receive, send)
            return
        if caller.session_id is None:  # the transport's session names the guard session
            session = QueryParams(scope.get("query_string", b"")).get("session_id")
            caller = dataclasses.replace(caller, session_id=safe_id(session) if session else None)
        await self.transport.handle_post_message(with_caller(scope, caller), receive, send)
