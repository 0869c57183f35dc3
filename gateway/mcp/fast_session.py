"""The fast path for requests on an open session of a handshake-era client (2025 versions: Claude Code,
Codex, Gemini CLI): what the MCP SDK's session manager would pass to the session's transport, which
answers it with one JSON body, is answered here by the SDK's kernel (gateway/mcp/fast.py), skipping the
session's memory streams, dispatcher task and message router.

The session is looked up as the SDK's manager looks it up: the id must name a live session, opened with
the same caller (the manager's owner check; anything else it answers 404, so it is left to it). A
session's protocol version is the one its `initialize` negotiated, read from the SDK's own answer to it
(`Versions`); a session this gateway saw no answer for goes through the SDK. While a request is served,
the session counts it in flight as the SDK's transport does, so the idle timeout never ends a session
with a call under way.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import orjson
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.datastructures import Headers
from starlette.types import Message, Scope, Send

MAX_ANSWER_BYTES = 64 * 1024  # an initialize answer is a few hundred bytes: a larger body is not read


class Versions:
    """Each open session's negotiated protocol version, read off the SDK's answers to `initialize`."""

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self.manager = manager
        self._by_session: dict[str, str] = {}

    def get(self, session_id: str) -> str | None:
        return self._by_session.get(session_id)

    def watching(self, send: Send) -> Send:
        """`send`, noting the session and version of an initialize answer on its way to the client."""
        session_id: str | None = None
        body = bytearray()

        async def watched(message: Message) -> None:
            nonlocal session_id
            if message["type"] == "http.response.start" and message["status"] == 200:
                session_id = Headers(raw=message.get("headers", [])).get(MCP_SESSION_ID_HEADER)
            elif message["type"] == "http.response.body" and session_id is not None:
                body.extend(message.get("body", b""))
                if len(body) > MAX_ANSWER_BYTES:
                    session_id = None
                elif not message.get("more_body", False):
                    self._note(session_id, bytes(body))
            await send(message)

        return watched

    def _note(self, session_id: str, body: bytes) -> None:
        try:
            answer = orjson.loads(body)
        except orjson.JSONDecodeError:
            return
        result = answer.get("result") if isinstance(answer, dict) else None
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if isinstance(version, str) and session_id in self.manager._server_instances:
            live = self.manager._server_instances  # sessions the SDK ended (DELETE, idle timeout) go too
            self._by_session = {sid: v for sid, v in self._by_session.items() if sid in live}
            self._by_session[session_id] = version


def session_transport(
    manager: StreamableHTTPSessionManager, scope: Scope, session_id: str
) -> StreamableHTTPServerTransport | None:
    """The session's transport, if the SDK's manager would hand it this request and it would serve it."""
    transport = manager._server_instances.get(session_id)
    user = scope.get("user")
    requestor = authorization_context(user) if isinstance(user, AuthenticatedUser) else None
    if transport is None or requestor != manager._session_owners.get(session_id) or transport.is_terminated:
        return None
    if transport.idle_scope is not None and transport.idle_scope.cancel_called:
        return None  # idle past its timeout: the SDK ends it and answers 404
    return transport


@contextmanager
def in_flight(transport: StreamableHTTPServerTransport) -> Iterator[None]:
    """The request held as in flight on its session, as the SDK's transport holds each request it serves
    (StreamableHTTPServerTransport.handle_request): no idle countdown while it runs, a new one after."""
    idle, timeout = transport.idle_scope, transport._idle_timeout
    if idle is None or timeout is None:
        yield
        return
    transport._requests_in_flight += 1
    idle.deadline = math.inf
    try:
        yield
    finally:
        transport._requests_in_flight -= 1
        if not transport._requests_in_flight:
            idle.deadline = anyio.current_time() + timeout


def json_content_type(headers: Headers) -> bool:
    """The session transport's own Content-Type check (exactly application/json, parameters aside)."""
    parts = headers.get("content-type", "").split(";")[0].split(",")
    return any(part.strip() == "application/json" for part in parts)


def session_answer_headers(session_id: str) -> dict[str, Any]:
    return {"Content-Type": "application/json", MCP_SESSION_ID_HEADER: session_id}
