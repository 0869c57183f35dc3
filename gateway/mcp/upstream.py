"""Connections to the configured upstream MCP servers (Streamable HTTP, or stdio processes the gateway
starts), built on the official MCP SDK's client.

One connection per server, opened on first use and shared by every caller (the SDK multiplexes
concurrent requests over it), held by a task of its own (gateway/mcp/held.py); a connection that failed
is opened again on the next call. Only what the operator configured reaches an upstream: its URL or command, and the
headers named in ``headers_env`` (read from the environment). Nothing of the caller's request but the
tool's name and arguments goes upstream: never its key or headers.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client._transport import TransportStreams
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from gateway.config.mcp import McpServerConfig
from gateway.mcp.held import OPEN_TIMEOUT_S, Held, NotOpen

MAX_PAGES = 20  # a listing is read page by page; an upstream paging forever is cut here


class UpstreamError(Exception):
    """The upstream could not be reached or did not answer (its message names no caller data)."""


def _headers(config: McpServerConfig) -> dict[str, str]:
    """The upstream's own credentials, read from the environment at connect time (a rotated secret is
    picked up by the next connection)."""
    return {header: os.environ.get(env, "") for header, env in config.headers_env.items()}


@asynccontextmanager
async def _http(config: McpServerConfig) -> AsyncIterator[TransportStreams]:
    assert config.url is not None
    timeout = httpx2.Timeout(OPEN_TIMEOUT_S, read=config.timeout_s)
    http = httpx2.AsyncClient(headers=_headers(config), timeout=timeout)
    async with http, streamable_http_client(config.url, http_client=http) as streams:
        yield streams


def _transport(config: McpServerConfig) -> AbstractAsyncContextManager[TransportStreams]:
    if config.transport == "stdio":
        assert config.command is not None
        params = StdioServerParameters(command=config.command, args=config.args, env=config.env, cwd=config.cwd)
        return stdio_client(params)
    return _http(config)


class Upstream:
    """One upstream server's shared connection."""

    def __init__(self, config: McpServerConfig) -> None:
        self.config = config
        self._client: Held[Client] = Held(lambda: Client(_transport(config), cache=None), f"mcp-{config.name}")

    @property
    def name(self) -> str:
        return self.config.name

    async def list_tools(self) -> list[types.Tool]:
        tools: list[types.Tool] = await self._pages(Client.list_tools, "tools")
        return tools

    async def list_prompts(self) -> list[types.Prompt]:
        prompts: list[types.Prompt] = await self._pages(Client.list_prompts, "prompts")
        return prompts

    async def get_prompt(self, name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        result: types.GetPromptResult = await self._call(lambda c: c.get_prompt(name, arguments))
        return result

    async def _pages(self, listing: Callable[..., Awaitable[Any]], field: str) -> list[Any]:
        """A listing, page by page (`listing`: the client's list method, `field`: its result's items)."""
        items: list[Any] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await self._call(partial(listing, cursor=cursor))
            items.extend(getattr(page, field))
            cursor = page.next_cursor
            if cursor is None:
                break
        return items

    async def call_tool(self, tool: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        timeout = self.config.timeout_s
        result: types.CallToolResult = await self._call(
            lambda c: c.call_tool(tool, arguments, read_timeout_seconds=timeout)
        )
        return result

    async def _call(self, request: Callable[[Client], Awaitable[Any]]) -> Any:
        try:
            client = await self._client.get(self.config.timeout_s)
        except NotOpen:
            raise UpstreamError(f"MCP server {self.name!r} is unreachable") from None
        try:
            return await asyncio.wait_for(request(client), self.config.timeout_s)
        except MCPError:
            raise  # the upstream's own answer (an unknown tool, bad arguments): passed on
        except TimeoutError:  # a slow tool: the connection serves the other calls on
            raise UpstreamError(f"MCP server {self.name!r} did not answer in {self.config.timeout_s:g} s") from None
        except Exception as exc:  # the connection broke: the next call opens a new one
            self._client.drop(client)
            raise UpstreamError(f"MCP server {self.name!r} did not answer ({type(exc).__name__})") from None

    async def aclose(self) -> None:
        await self._client.aclose()


class Upstreams:
    """The configured servers, by name (the only ones a call can reach)."""

    def __init__(self, servers: list[McpServerConfig]) -> None:
        self.by_name = {config.name: Upstream(config) for config in servers}

    def get(self, name: str) -> Upstream | None:
        return self.by_name.get(name)

    async def aclose(self) -> None:
        await asyncio.gather(*(upstream.aclose() for upstream in self.by_name.values()))
