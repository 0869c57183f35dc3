"""The older HTTP+SSE transport on both sides, with the MCP SDK's real SSE client and server: a client
on the gateway's /mcp/sse lists and calls tools (of Streamable HTTP, stdio and SSE upstreams), a caller
without a valid key is refused, a session's messages are accepted only with the key that opened it, and
the transport's session id names the guard session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from gateway.mcp.errors import AGENT_STOPPED
from tests.gateway_harness import TENANT_KEYS, RunningGateway
from tests.mcp.conftest import UPSTREAM_SECRET, key_headers, mcp_client
from tests.mcp.feature_gateway import feature_gateway, sse_mcp_client
from tests.mcp.test_mcp_gateway import text_of

READ = {"path": "notes.txt"}


@pytest.fixture(scope="module")
def sse_gw(upstream_url: str, tool_root: Path) -> Iterator[RunningGateway]:
    with feature_gateway(upstream_url, tool_root) as gateway:
        yield gateway


async def test_an_sse_client_lists_and_calls_tools_of_every_transport(sse_gw: RunningGateway) -> None:
    async with sse_mcp_client(f"{sse_gw.url}/mcp/sse", key_headers()) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        texts = [
            text_of(await client.call_tool(f"{server}__read_file", READ)) for server in ("files", "local", "legacy")
        ]
    assert {"files__read_file", "local__read_file", "legacy__read_file", "legacy__flaky"} <= names
    assert texts == ["hello from the file tool\n"] * 3


async def test_an_sse_upstream_gets_its_own_credential_never_the_callers_key(sse_gw: RunningGateway) -> None:
    async with mcp_client(f"{sse_gw.url}/mcp", {**key_headers(), "x-extra": "caller-header"}) as client:
        seen = text_of(await client.call_tool("legacy__whoami", {}))
    assert f"x-upstream-token={UPSTREAM_SECRET}" in seen
    assert TENANT_KEYS["acme"] not in seen and "authorization" not in seen and "caller-header" not in seen


@pytest.mark.parametrize("headers", [{}, {"authorization": "Bearer sk-wrong"}])
def test_an_sse_stream_or_message_without_a_valid_key_is_refused(
    sse_gw: RunningGateway, headers: dict[str, str]
) -> None:
    stream = httpx.get(f"{sse_gw.url}/mcp/sse", headers=headers)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    message = httpx.post(f"{sse_gw.url}/mcp/messages/?session_id={'0' * 32}", json=body, headers=headers)
    assert stream.status_code == message.status_code == 401
    assert "sk-wrong" not in stream.text + message.text


async def test_a_session_takes_messages_only_from_the_key_that_opened_it(sse_gw: RunningGateway) -> None:
    body = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
    async with (
        httpx.AsyncClient(base_url=sse_gw.url) as http,
        http.stream("GET", "/mcp/sse", headers=key_headers()) as events,
    ):
        lines = events.aiter_lines()  # kept: an abandoned line iterator would close the stream, and the session
        messages = ""
        async for line in lines:  # the endpoint event names the session's message URL
            if line.startswith("data: /mcp/messages/"):
                messages = line.removeprefix("data: ")
                break
        intruder = await http.post(messages, json=body, headers=key_headers("globex"))
        owner = await http.post(messages, json=body, headers=key_headers())
    assert intruder.status_code == 404 and owner.status_code == 202


async def test_the_sse_session_id_names_the_guard_session(sse_gw: RunningGateway) -> None:
    async with sse_mcp_client(f"{sse_gw.url}/mcp/sse", key_headers()) as client:
        texts = [text_of(await client.call_tool("legacy__read_file", READ)) for _ in range(4)]
        with pytest.raises(MCPError) as stopped:
            await client.call_tool("legacy__read_file", READ)
    assert "[loop guard]" in texts[3] and "[loop guard]" not in texts[2]
    assert stopped.value.code == AGENT_STOPPED


def test_a_streamable_http_session_takes_requests_only_from_the_key_that_opened_it(sse_gw: RunningGateway) -> None:
    accept = {"accept": "application/json, text/event-stream"}
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    opened = httpx.post(f"{sse_gw.url}/mcp", json=hello, headers={**key_headers(), **accept})
    session = {"mcp-session-id": opened.raise_for_status().headers["mcp-session-id"]}
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    intruder = httpx.post(f"{sse_gw.url}/mcp", json=ping, headers={**key_headers("globex"), **accept, **session})
    owner = httpx.post(f"{sse_gw.url}/mcp", json=ping, headers={**key_headers(), **accept, **session})
    assert intruder.status_code == 404 and owner.status_code == 200
