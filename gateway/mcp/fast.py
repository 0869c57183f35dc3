"""The fast path of /mcp: a `tools/call` or `tools/list` POST the MCP SDK would answer with one JSON body
is served here instead of through the SDK's HTTP machinery: the body is read and parsed once, and the
request runs through the SDK's own kernel (`serve_one`: the method's params validation, the handler of
gateway/mcp/tools.py, the result's per-version shape), so the checks, the records and the answer are
the SDK path's. Two kinds are taken:

- stateless (2026-07-28) requests, after the SDK's own checks of their envelope and headers
  (`classify_inbound_request`, duplicated routing headers, `Mcp-Param-*`), answered as its
  single-exchange entry answers (which skips its body-limit middleware and pydantic request model);
- requests on an open session of a handshake-era client (gateway/mcp/fast_session.py), answered as the
  session's transport answers (which skips its memory streams, dispatcher task and message router).

Anything else (the handshake, notifications, batches, other methods, a body the SDK might read
differently, a session it does not know, any refusal of the checks above) goes to the SDK with the body
as it came, and the SDK answers it. Left to the SDK on the session path: a `notifications/cancelled` for a
call served here finds nothing to cancel (the call completes).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

import orjson

# The SDK's own dispatch context of a single-exchange request (closed back-channel, no stream), from its
# private module rather than copied: both paths hand the kernel the same one.
from mcp.server._streamable_http_modern import _SingleExchangeDispatchContext
from mcp.server.connection import Connection
from mcp.server.runner import modern_error_data, serve_one
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport, check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PARAM_HEADER_PREFIX,
    MCP_PROTOCOL_VERSION_HEADER,
    InboundModernRoute,
    classify_inbound_request,
    find_duplicated_routing_header,
    validate_mcp_param_headers,
)
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data, progress_token_from_params
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import ErrorData, JSONRPCError, JSONRPCResponse
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from gateway.logs import log_failure
from gateway.mcp.fast_session import Versions, in_flight, json_content_type, session_answer_headers, session_transport
from gateway.mcp.metrics import McpMetrics

log = logging.getLogger("cachegate.mcp")
METHODS = frozenset({"tools/call", "tools/list"})
ENVELOPE_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
PARAM_PREFIX = MCP_PARAM_HEADER_PREFIX.lower()
FAST, SDK = "fast", "sdk"
# A 2026-07-28 request: answered as the SDK's single-exchange entry answers (its HTTP statuses).
STATELESS: Final = "stateless"


class Body:
    """The request's body, read once: parsed here, or replayed to the SDK as it came."""

    def __init__(self, receive: Receive) -> None:
        self._receive = receive
        self._read: list[Message] = []

    async def read(self, limit: int) -> bytes | None:
        """The whole body; None once it runs past `limit` or the client left (the SDK answers that)."""
        size, chunks = 0, []
        while True:
            message = await self._receive()
            self._read.append(message)
            if message["type"] != "http.request":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def replay(self) -> Message:
        return self._read.pop(0) if self._read else await self._receive()


@dataclass(frozen=True, slots=True)
class OnSession:
    """A request on an open handshake-era session: answered as its transport answers (200, the session id)."""

    session_id: str
    version: str  # negotiated by the session's initialize
    transport: StreamableHTTPServerTransport


Mode = OnSession | Literal["stateless"]


def _plain_request(decoded: Any) -> dict[str, Any] | None:
    """A single JSON-RPC request of a fast method, in the shape the SDK's request model takes unchanged."""
    if not isinstance(decoded, dict) or not decoded.keys() <= ENVELOPE_KEYS or decoded.get("jsonrpc") != "2.0":
        return None
    request_id, params = decoded.get("id"), decoded.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    if decoded.get("method") not in METHODS or not (params is None or isinstance(params, dict)):
        return None
    return decoded


def _status(message: JSONRPCResponse | JSONRPCError) -> int:
    return ERROR_CODE_HTTP_STATUS.get(message.error.code, 200) if isinstance(message, JSONRPCError) else 200


class FastPath:
    def __init__(self, manager: StreamableHTTPSessionManager, metrics: McpMetrics) -> None:
        self.manager, self.server, self.metrics = manager, manager.app, metrics
        self.max_body_bytes = manager.max_request_body_size
        self.versions = Versions(manager)

    def watch(self, scope: Scope, send: Send) -> Send:
        """The `send` of a request going to the SDK: an initialize's answer tells its session's version."""
        opening = scope["method"] == "POST" and MCP_SESSION_ID_HEADER not in Headers(scope=scope)
        return self.versions.watching(send) if opening else send

    def _mode(self, scope: Scope, headers: Headers) -> Mode | None:
        """How the SDK would serve this POST, if with one JSON body after checks the fast path repeats."""
        if scope["method"] != "POST" or not headers.get("content-type", "").lower().startswith("application/json"):
            return None  # the SDK's transport-security check: Content-Type
        version, session_id = headers.get(MCP_PROTOCOL_VERSION_HEADER), headers.get(MCP_SESSION_ID_HEADER)
        if version in MODERN_PROTOCOL_VERSIONS:
            return STATELESS
        if (version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS) or session_id is None:
            return None
        transport = session_transport(self.manager, scope, session_id)
        negotiated = self.versions.get(session_id)
        if transport is None or negotiated is None or not json_content_type(headers):
            return None
        return OnSession(session_id, negotiated, transport)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> Receive | None:
        """Serve the request if it may take the fast path (None); else the receive the SDK reads it from."""
        headers = Headers(scope=scope)
        mode = self._mode(scope, headers)
        request, length = Request(scope, receive), headers.get("content-length", "0")
        if mode is None or not check_accept_headers(request)[0]:
            return receive
        if not length.isdigit() or int(length) > self.max_body_bytes:
            return receive
        body = Body(receive)
        raw = await body.read(self.max_body_bytes)
        routed = self._route(raw, headers, mode)
        if routed is None:
            self.metrics.requests.labels(SDK).inc()
            return body.replay
        self.metrics.requests.labels(FAST).inc()
        decoded, verdict = routed
        if isinstance(mode, OnSession):
            with in_flight(mode.transport):
                await self._answer_on_session(request, decoded, mode, scope, receive, send)
        else:
            assert verdict is not None
            await self._answer_stateless(request, decoded, verdict, scope, receive, send)
        return None

    def _route(
        self, raw: bytes | None, headers: Headers, mode: Mode
    ) -> tuple[dict[str, Any], InboundModernRoute | None] | None:
        """The request, once it passed every check the SDK would run before its handler (None: to the SDK)."""
        if raw is None:
            return None
        try:
            decoded = _plain_request(orjson.loads(raw))
        except orjson.JSONDecodeError:
            return None
        if decoded is None:
            return None
        if isinstance(mode, OnSession):
            return decoded, None
        if find_duplicated_routing_header(headers.items()) is not None:
            return None
        verdict = classify_inbound_request(decoded, headers=dict(headers))
        if not isinstance(verdict, InboundModernRoute) or self._mcp_param_refused(decoded, headers):
            return None
        return decoded, verdict

    def _mcp_param_refused(self, request: dict[str, Any], headers: Headers) -> bool:
        """The SDK's `Mcp-Param-*` check of a call, against the caller's listing of the tool."""
        params = request["params"]
        name, arguments = params.get("name"), params.get("arguments")
        if request["method"] != "tools/call" or not isinstance(name, str):
            return False
        if arguments is not None and not isinstance(arguments, Mapping):
            return False
        if not arguments and not any(header.startswith(PARAM_PREFIX) for header in headers):
            return False
        lookup = self.server.get_tool_input_schema
        schema = lookup(name) if lookup is not None else None
        return schema is not None and validate_mcp_param_headers(schema, arguments or {}, headers) is not None

    async def _kernel(self, request: Request, decoded: dict[str, Any], connection: Connection) -> dict[str, Any]:
        """The SDK's own handling of the request (params checks, the handler, the result's wire shape)."""
        params = decoded.get("params")
        dctx = _SingleExchangeDispatchContext(
            transport=TransportContext(kind="streamable-http", can_send_request=False, headers=request.headers),
            request_id=decoded["id"],
            message_metadata=ServerMessageMetadata(request_context=request),
            progress_token=progress_token_from_params(params),
        )
        # The manager's lifespan state, entered once when it started (the SDK's path passes the same).
        lifespan_state = self.manager._lifespan_state
        return await serve_one(
            self.server, dctx, decoded["method"], params, connection=connection, lifespan_state=lifespan_state
        )

    async def _answer_stateless(
        self,
        request: Request,
        decoded: dict[str, Any],
        verdict: InboundModernRoute,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        """As the SDK's single-exchange JSON mode: the result or error, with the error's HTTP status."""
        request_id = decoded["id"]
        connection = Connection.from_envelope(
            verdict.protocol_version, verdict.client_info, verdict.client_capabilities
        )
        message: JSONRPCResponse | JSONRPCError
        try:
            result = await self._kernel(request, decoded, connection)
            message = JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
        except Exception as exc:
            message = JSONRPCError(jsonrpc="2.0", id=request_id, error=modern_error_data(exc))
        body = json.dumps(message.model_dump(mode="json", by_alias=True, exclude_none=True), separators=(",", ":"))
        await Response(body, status_code=_status(message), media_type="application/json")(scope, receive, send)

    async def _answer_on_session(
        self, request: Request, decoded: dict[str, Any], mode: OnSession, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """As a session's transport in JSON mode, with its dispatcher's error mapping: always 200."""
        request_id = decoded["id"]
        message: JSONRPCResponse | JSONRPCError
        try:
            result = await self._kernel(request, decoded, Connection.from_envelope(mode.version, None, None))
            message = JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
        except Exception as exc:
            error = handler_exception_to_error_data(exc)
            if error is None:  # the dispatcher's catch-all (logged without the exception's text)
                log_failure(log, "mcp: the %s handler failed", decoded["method"])
                error = ErrorData(code=0, message=str(exc))
            message = JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        body = message.model_dump_json(by_alias=True, exclude_unset=True)
        await Response(body, status_code=200, headers=session_answer_headers(mode.session_id))(scope, receive, send)
