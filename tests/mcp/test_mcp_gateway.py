"""/mcp with the real MCP SDK client: aggregated, prefixed listings; calls forwarded over Streamable HTTP
and stdio; the caller's key checked and never forwarded; per-tenant access; bounded results; records
and metrics."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from gateway.mcp.errors import UPSTREAM_FAILED
from tests.gateway_harness import ADMIN_HEADERS, TENANT_KEYS, RunningGateway
from tests.mcp.conftest import UPSTREAM_SECRET, key_headers, mcp_client


def text_of(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def test_lists_every_servers_tools_under_its_prefix_and_calls_them(gw: RunningGateway) -> None:
    async with mcp_client(f"{gw.url}/mcp", key_headers()) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"files__read_file", "files__flaky", "local__read_file", "local__flaky"} <= names
        over_http = await client.call_tool("files__read_file", {"path": "notes.txt"})
        over_stdio = await client.call_tool("local__read_file", {"path": "notes.txt"})
    assert text_of(over_http) == text_of(over_stdio) == "hello from the file tool\n"
    assert not over_http.is_error


async def test_the_callers_key_never_reaches_the_upstream(gw: RunningGateway) -> None:
    async with mcp_client(f"{gw.url}/mcp", {**key_headers(), "x-extra": "caller-header"}) as client:
        await client.list_tools()
        seen = text_of(await client.call_tool("files__whoami", {}))
    assert TENANT_KEYS["acme"] not in seen and "authorization" not in seen and "caller-header" not in seen
    assert f"x-upstream-token={UPSTREAM_SECRET}" in seen  # the upstream's own credential, from the environment


@pytest.mark.parametrize("headers", [{}, {"authorization": "Bearer sk-wrong"}])
def test_a_request_without_a_valid_key_is_refused(gw: RunningGateway, headers: dict[str, str]) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    response = httpx.post(f"{gw.url}/mcp", json=body, headers={**headers, "accept": "application/json"})
    assert response.status_code == 401
    assert "sk-wrong" not in response.text


async def test_a_key_lists_and_calls_only_the_tools_its_tenant_may_use(gw: RunningGateway) -> None:
    async with mcp_client(f"{gw.url}/mcp", key_headers("globex")) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"files__read_file", "files__whoami"}
        for denied in ("files__flaky", "local__read_file", "nowhere__read_file", "read_file"):
            with pytest.raises(MCPError) as refused:
                await client.session.call_tool(denied, {"path": "notes.txt"})
            assert refused.value.code == types.INVALID_PARAMS
        assert text_of(await client.call_tool("files__read_file", {"path": "notes.txt"})).startswith("hello")


async def test_prompts_pass_through_under_their_servers_prefix(gw: RunningGateway) -> None:
    async with mcp_client(f"{gw.url}/mcp", key_headers("globex")) as client:
        names = {prompt.name for prompt in (await client.list_prompts()).prompts}
        got = await client.get_prompt("files__review", {"topic": "the gateway"})
        with pytest.raises(MCPError) as refused:  # globex may not use the local server
            await client.get_prompt("local__review", {"topic": "x"})
    assert names == {"files__review"}
    assert isinstance(got.messages[0].content, types.TextContent)
    assert got.messages[0].content.text == "Please review the gateway."
    assert refused.value.code == types.INVALID_PARAMS


async def test_a_server_that_is_down_hides_only_its_own_tools(gw: RunningGateway) -> None:
    async with mcp_client(f"{gw.url}/mcp", key_headers()) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        with pytest.raises(MCPError) as failed:
            await client.session.call_tool("down__read_file", {"path": "notes.txt"})
    assert "files__read_file" in names and not any(name.startswith("down__") for name in names)
    assert failed.value.code == UPSTREAM_FAILED and "notes.txt" not in failed.value.message
    assert 'cachegate_mcp_tool_calls_total{outcome="upstream_error",server="down"}' in gw.metrics()


async def test_tool_arguments_and_results_stay_out_of_logs_and_metrics(
    gw: RunningGateway, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    marker = "secret-argument-7f3a"
    async with mcp_client(f"{gw.url}/mcp", key_headers(session="private-1")) as client:
        await client.list_tools()
        failed = await client.call_tool("files__read_file", {"path": marker})
    assert failed.is_error and "no such file" in text_of(failed)
    assert not [r for r in caplog.records if marker in r.getMessage() or "no such file" in r.getMessage()]
    assert marker not in gw.metrics()


async def test_a_result_over_the_size_bound_is_an_error(gw: RunningGateway) -> None:
    async with mcp_client(f"{gw.url}/mcp", key_headers()) as client:
        await client.list_tools()
        with pytest.raises(MCPError) as too_large:
            await client.call_tool("files__read_file", {"path": "big.txt"})
    assert "larger than" in too_large.value.message


async def test_tool_calls_are_recorded_and_counted(gw: RunningGateway) -> None:
    async with mcp_client(f"{gw.url}/mcp", key_headers(session="records-1")) as client:
        await client.list_tools()
        await client.call_tool("files__flaky", {})
        await client.call_tool("files__flaky", {})
    metrics = gw.metrics()
    assert 'cachegate_mcp_tool_calls_total{outcome="tool_error",server="files"}' in metrics
    assert 'cachegate_mcp_tool_calls_total{outcome="ok",server="files"}' in metrics
    records = await wait_for_records(gw, "records-1", 2)
    assert [r["mcp"]["outcome"] for r in records] == ["tool_error", "ok"]
    for record in records:
        assert record["api"] == "mcp" and record["model"] == "files__flaky" and record["route"] == "files"
        assert record["tenant"] == "acme" and record["cost_usd"] == 0.0 and record["total_ms"] > 0
        assert "temporary failure" not in str(record)  # the result is the caller's data: not in the record


async def wait_for_records(gw: RunningGateway, session: str, count: int) -> list[dict[str, Any]]:
    """The session's records, oldest first, once written (records are written off the request path)."""
    for _ in range(100):
        response = httpx.get(f"{gw.url}/admin/requests", params={"session": session}, headers=ADMIN_HEADERS)
        response.raise_for_status()
        records: list[dict[str, Any]] = response.json()["requests"]
        if len(records) >= count:
            return sorted(records, key=lambda r: r["at"])
        await asyncio.sleep(0.05)
    raise AssertionError(f"{count} records of session {session!r} never came")
