"""Connections to the configured upstream MCP servers (Streamable HTTP, HTTP+SSE, or stdio processes the
gateway starts), built on the official MCP SDK's client.

One connection per server and credential, opened on first use and shared by every caller with that
credential (the SDK multiplexes concurrent requests over it), held by a task of its own
(gateway/mcp/held.py); a connection that failed is opened again on the next call. A Streamable HTTP
server's listed tools are then called with one POST of their own (gateway/mcp/direct.py). Only what the
operator configured reaches an upstream: its URL or command, and the headers named in ``headers_env``
or, for a tenant or key with its own, in ``policy.mcp.credentials`` (read from the environment). Nothing
of the caller's request but the method's name and arguments goes upstream: never its key or headers.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client._transport import TransportStreams
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from gateway.config.mcp import McpServerConfig
from gateway.mcp.direct import DirectFailed, DirectHttp, plain_tools, stateless
from gateway.mcp.held import OPEN_TIMEOUT_S, Held, NotOpen

MAX_PAGES = 20  # a listing is read page by page; an upstream paging forever is cut here
MAX_CONNECTIONS = 64  # per server, one per credential: past it the oldest connection is closed
SSE_READ_TIMEOUT_S = 300.0  # an SSE stream silent this long (no event, no ping) counts as broken
Credential = Mapping[str, str]  # header -> the environment variable holding its value
ConnectionKey = tuple[tuple[str, str], ...]
DIRECT, SDK = "direct", "sdk"  # which client made a tool call (gateway/mcp/direct.py)


class UpstreamError(Exception):
    """The upstream could not be reached or did not answer (its message names no caller data)."""


def _headers(credential: Credential) -> dict[str, str]:
    """The upstream's credentials, read from the environment at connect time (a rotated secret is
    picked up by the next connection)."""
    return {header: os.environ.get(env, "") for header, env in credential.items()}


@asynccontextmanager
async def _http(config: McpServerConfig, credential: Credential) -> AsyncIterator[TransportStreams]:
    assert config.url is not None
    timeout = httpx2.Timeout(OPEN_TIMEOUT_S, read=config.timeout_s)
    http = httpx2.AsyncClient(headers=_headers(credential), timeout=timeout)
    async with http, streamable_http_client(config.url, http_client=http) as streams:
        yield streams


def _transport(config: McpServerConfig, credential: Credential) -> AbstractAsyncContextManager[TransportStreams]:
    if config.transport == "stdio":
        assert config.command is not None
        params = StdioServerParameters(command=config.command, args=config.args, env=config.env, cwd=config.cwd)
        return stdio_client(params)
    if config.transport == "sse":
        assert config.url is not None
        headers = _headers(credential)
        return sse_client(config.url, headers, timeout=OPEN_TIMEOUT_S, sse_read_timeout=SSE_READ_TIMEOUT_S)
    return _http(config, credential)


class Upstream:
    """One upstream server's shared connections, one per credential."""

    def __init__(self, config: McpServerConfig) -> None:
        self.config = config
        self._clients: dict[ConnectionKey, Held[Client]] = {}
        self._own = tuple(sorted(config.headers_env.items()))  # the server's own credential's connection
        self._evicted: set[asyncio.Task[None]] = set()
        self._direct = DirectHttp(config.url, config.timeout_s) if config.transport == "http" and config.url else None
        self._plain: dict[ConnectionKey, frozenset[str]] = {}  # each connection's directly callable tools

    @property
    def name(self) -> str:
        return self.config.name

    def _key(self, credential: Credential | None) -> ConnectionKey:
        """The connection made with `credential` (None: the server's own headers_env). A stdio server has
        one process: its environment is the operator's config, whatever the caller's credential."""
        chosen = None if self.config.transport == "stdio" else credential
        return self._own if chosen is None else tuple(sorted(chosen.items()))

    def _held(self, credential: Credential | None) -> Held[Client]:
        key = self._key(credential)
        held = self._clients.get(key)
        if held is None:
            if len(self._clients) >= MAX_CONNECTIONS:  # credentials of keys long gone: close the oldest
                oldest_key = next(iter(self._clients))
                oldest = self._clients.pop(oldest_key)
                self._plain.pop(oldest_key, None)
                task = asyncio.create_task(oldest.aclose())
                self._evicted.add(task)
                task.add_done_callback(self._evicted.discard)
            pinned = dict(key)
            held = Held(lambda: Client(_transport(self.config, pinned), cache=None), f"mcp-{self.name}")
            self._clients[key] = held
        return held

    async def list_tools(self, credential: Credential | None = None) -> list[types.Tool]:
        tools: list[types.Tool] = await self._pages(Client.list_tools, "tools", credential)
        if self._direct is not None:
            self._plain[self._key(credential)] = plain_tools(tools)
        return tools

    async def list_prompts(self, credential: Credential | None = None) -> list[types.Prompt]:
        prompts: list[types.Prompt] = await self._pages(Client.list_prompts, "prompts", credential)
        return prompts

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None, credential: Credential | None = None
    ) -> types.GetPromptResult:
        result: types.GetPromptResult = await self._call(lambda c: c.get_prompt(name, arguments), credential)
        return result

    async def list_resources(self, credential: Credential | None = None) -> list[types.Resource]:
        resources: list[types.Resource] = await self._pages(Client.list_resources, "resources", credential)
        return resources

    async def list_resource_templates(self, credential: Credential | None = None) -> list[types.ResourceTemplate]:
        listing = Client.list_resource_templates
        templates: list[types.ResourceTemplate] = await self._pages(listing, "resource_templates", credential)
        return templates

    async def read_resource(self, uri: str, credential: Credential | None = None) -> types.ReadResourceResult:
        result: types.ReadResourceResult = await self._call(lambda c: c.read_resource(uri), credential)
        return result

    async def _pages(
        self, listing: Callable[..., Awaitable[Any]], field: str, credential: Credential | None
    ) -> list[Any]:
        """A listing, page by page (`listing`: the client's list method, `field`: its result's items)."""
        items: list[Any] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await self._call(partial(listing, cursor=cursor), credential)
            items.extend(getattr(page, field))
            cursor = page.next_cursor
            if cursor is None:
                break
        return items

    async def call_tool(
        self, tool: str, arguments: dict[str, Any] | None, credential: Credential | None = None
    ) -> tuple[types.CallToolResult, str]:
        """The tool's result, and which client called it (DIRECT or SDK)."""
        timeout, direct = self.config.timeout_s, self._direct
        path = SDK

        async def call(client: Client) -> types.CallToolResult:
            nonlocal path
            version = client.protocol_version
            if direct is not None and stateless(version) and tool in self._plain.get(self._key(credential), ()):
                path = DIRECT
                headers = _headers(dict(self._key(credential)))
                return await direct.call_tool(version, tool, arguments, headers)
            result: types.CallToolResult = await client.call_tool(tool, arguments, read_timeout_seconds=timeout)
            return result

        return await self._call(call, credential), path

    async def _call(self, request: Callable[[Client], Awaitable[Any]], credential: Credential | None = None) -> Any:
        held = self._held(credential)
        try:
            client = await held.get(self.config.timeout_s)
        except NotOpen:
            raise UpstreamError(f"MCP server {self.name!r} is unreachable") from None
        try:
            return await asyncio.wait_for(request(client), self.config.timeout_s)
        except MCPError:
            raise  # the upstream's own answer (an unknown tool, bad arguments): passed on
        except TimeoutError:  # a slow tool: the connection serves the other calls on
            raise UpstreamError(f"MCP server {self.name!r} did not answer in {self.config.timeout_s:g} s") from None
        except Exception as exc:  # the connection broke: the next call opens a new one
            held.drop(client)
            what = str(exc) if isinstance(exc, DirectFailed) else type(exc).__name__
            raise UpstreamError(f"MCP server {self.name!r} did not answer ({what})") from None

    async def aclose(self) -> None:
        await asyncio.gather(*(held.aclose() for held in self._clients.values()), *self._evicted)
        if self._direct is not None:
            await self._direct.aclose()


class Upstreams:
    """The configured servers, by name (the only ones a call can reach)."""

    def __init__(self, servers: list[McpServerConfig]) -> None:
        self.by_name = {config.name: Upstream(config) for config in servers}

    def get(self, name: str) -> Upstream | None:
        return self.by_name.get(name)

    async def aclose(self) -> None:
        await asyncio.gather(*(upstream.aclose() for upstream in self.by_name.values()))
