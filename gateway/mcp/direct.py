"""A tool call to a Streamable HTTP upstream as one JSON-RPC POST on a pooled aiohttp session, instead of
the MCP SDK's client (its dispatcher, memory streams and task groups, and httpx: ~0.7 ms of CPU a call
more, bench/mcp_overhead.py).

Taken only where the POST is all the SDK's client would send: the SDK's connection to the server (still
opened first, gateway/mcp/upstream.py) negotiated a stateless protocol version (2026-07-28: no session,
each request stamped with the version and client info in `_meta`), and the server's listing shows the
tool without an output schema (the SDK's client checks a result against it) or `x-mcp-header` arguments
(sent as `Mcp-Param-*` headers). Everything else goes through the SDK's client. The request carries the
operator's headers for the server and the call's name (one the server listed) and arguments, nothing
else of the caller's.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import aiohttp
import mcp_types as types
import orjson
from mcp.client.session import DEFAULT_CLIENT_INFO
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    encode_header_value,
    x_mcp_header_map,
)
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY, methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from gateway.upstream.lean import env_proxy, new_session
from gateway.wire.sse import iter_events

METHOD = "tools/call"
CLIENT_INFO = DEFAULT_CLIENT_INFO.model_dump(mode="json", by_alias=True, exclude_none=True)
CLIENT_CAPABILITIES: dict[str, Any] = {}  # the gateway's SDK clients have no sampling/elicitation/roots callbacks


class DirectFailed(Exception):
    """The server could not be reached or sent no JSON-RPC answer (the message names no caller data)."""


def plain_tools(tools: list[types.Tool]) -> frozenset[str]:
    """The listed tools a direct POST may call: no output schema, no `x-mcp-header` argument."""
    return frozenset(
        tool.name for tool in tools if tool.output_schema is None and not x_mcp_header_map(tool.input_schema)
    )


def stateless(version: str) -> bool:
    return version in MODERN_PROTOCOL_VERSIONS


def _answer(message: Any, request_id: int) -> dict[str, Any]:
    """The call's result, or its JSON-RPC error raised as the SDK's client raises it."""
    if not isinstance(message, dict) or message.get("id") != request_id:
        raise DirectFailed("no answer to the call")
    if "error" in message:
        raise MCPError.from_error_data(types.ErrorData.model_validate(message["error"]))
    result = message.get("result")
    if not isinstance(result, dict) or result.get("resultType", "complete") != "complete":
        raise DirectFailed("an answer that is not a tool result")  # input_required and the like: not served here
    answer: dict[str, Any] = result
    return answer


class DirectHttp:
    """One server's direct calls (one aiohttp session, opened on first use in the serving loop)."""

    def __init__(self, url: str, timeout_s: float) -> None:
        self.url, self.timeout = url, aiohttp.ClientTimeout(total=None, sock_connect=min(timeout_s, 10.0))
        self._ids = itertools.count(1)
        self._session: aiohttp.ClientSession | None = None

    async def call_tool(
        self, version: str, tool: str, arguments: dict[str, Any] | None, headers: Mapping[str, str]
    ) -> types.CallToolResult:
        request_id = next(self._ids)
        meta = {
            PROTOCOL_VERSION_META_KEY: version,
            CLIENT_INFO_META_KEY: CLIENT_INFO,
            CLIENT_CAPABILITIES_META_KEY: CLIENT_CAPABILITIES,
        }
        params: dict[str, Any] = {"name": tool, "_meta": meta}
        if arguments is not None:
            params["arguments"] = arguments
        body = orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": METHOD, "params": params})
        sent = {
            **headers,
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            MCP_PROTOCOL_VERSION_HEADER: version,
            MCP_METHOD_HEADER: METHOD,
            MCP_NAME_HEADER: encode_header_value(tool),  # a name the server listed, encoded as the SDK encodes it
        }
        if self._session is None or self._session.closed:
            self._session = new_session()
        proxy, proxy_auth = env_proxy(self.url)
        try:
            async with self._session.post(
                self.url, data=body, headers=sent, timeout=self.timeout, proxy=proxy, proxy_auth=proxy_auth
            ) as response:
                if response.content_type == "text/event-stream":
                    message = await self._from_events(response, request_id)
                else:
                    message = orjson.loads(await response.read())
        except (aiohttp.ClientError, orjson.JSONDecodeError, UnicodeDecodeError) as exc:
            raise DirectFailed(type(exc).__name__) from None
        parsed = methods.parse_server_result(METHOD, version, _answer(message, request_id))  # as the SDK parses it
        if not isinstance(parsed, types.CallToolResult):
            raise DirectFailed("an answer that is not a tool result")
        return parsed

    @staticmethod
    async def _from_events(response: aiohttp.ClientResponse, request_id: int) -> Any:
        """The answer among the stream's events (notifications before it are not the caller's: dropped)."""
        async for event in iter_events(response.content.iter_any()):
            if not event.data:
                continue
            message = orjson.loads(event.data)
            if isinstance(message, dict) and message.get("id") == request_id:
                return message
        raise DirectFailed("the stream ended without an answer")

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
