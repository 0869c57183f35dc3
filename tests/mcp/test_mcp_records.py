"""A tool call's record says why it was refused as a model request's would: a guard stop at the tool
layer is class guard (agent_loop_stopped, the guard's status, never 403), a denied tool class client."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError

from tests.gateway_harness import RunningGateway
from tests.mcp.conftest import key_headers, mcp_client
from tests.mcp.test_mcp_limits import refused_record

READ = {"path": "notes.txt"}


async def test_a_guard_stop_at_the_tool_layer_is_recorded_as_the_guards(gw: RunningGateway) -> None:
    async with mcp_client(f"{gw.url}/mcp", key_headers(session="records-guard-1")) as client:
        for _ in range(4):
            await client.call_tool("files__read_file", READ)
        with pytest.raises(MCPError):
            await client.call_tool("files__read_file", READ)
    record = await refused_record(gw, "records-guard-1", "guard")
    assert record["status"] == 400 and record["error"] == "agent_loop_stopped"
    assert record["error_code"] and record["guard"].split(";")[0] in ("stop", "block")
    assert record["mcp"]["outcome"] == "guard_stopped"


async def test_a_denied_tool_is_recorded_as_the_callers_error(gw: RunningGateway) -> None:
    async with mcp_client(f"{gw.url}/mcp", key_headers("globex", session="records-denied-1")) as client:
        with pytest.raises(MCPError):
            await client.call_tool("local__read_file", READ)
    record = await refused_record(gw, "records-denied-1", "client")
    assert record["status"] == 403 and record["error"] == "permission" and record["mcp"]["outcome"] == "denied"
