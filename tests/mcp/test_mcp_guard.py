"""The loop guard across both sides of one agent run: a tool loop at /mcp is nudged (a note in the tool
result), then stopped (an MCP error) at the guard's usual count, and the session's next model call is
refused; a session the model side stopped cannot call tools either. Real SDKs on both sides."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import openai
import pytest
from mcp.shared.exceptions import MCPError

from gateway.mcp.errors import AGENT_STOPPED
from tests.gateway_harness import RunningGateway, replicas_on_one_redis
from tests.guard_stage.agents import OpenAIAgent
from tests.mcp.conftest import key_headers, mcp_client, mcp_settings
from tests.mcp.test_mcp_gateway import text_of

READ = {"path": "notes.txt"}


async def test_a_tool_loop_is_nudged_then_stopped_and_the_model_side_refused(gw: RunningGateway) -> None:
    async with mcp_client(f"{gw.url}/mcp", key_headers(session="tool-loop-1")) as client:
        await client.list_tools()
        plain = [text_of(await client.call_tool("files__read_file", READ)) for _ in range(3)]
        nudged = await client.call_tool("files__read_file", READ)  # the 4th identical call and result
        with pytest.raises(MCPError) as stopped:
            await client.call_tool("files__read_file", READ)
        with pytest.raises(MCPError) as refused:  # another tool: the session is blocked
            await client.call_tool("files__flaky", {})
    assert plain == ["hello from the file tool\n"] * 3
    assert isinstance(nudged.content[0], types.TextContent) and nudged.content[0].text == plain[0]
    assert "[loop guard] Possible loop" in text_of(nudged) and not nudged.is_error
    assert stopped.value.code == refused.value.code == AGENT_STOPPED
    assert "Stopped by the loop guard" in stopped.value.message
    model = gw.openai(default_headers={"x-session-id": "tool-loop-1"})
    with pytest.raises(openai.APIStatusError) as blocked:
        model.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "go on"}])
    assert blocked.value.response.json()["error"]["type"] == "agent_loop_stopped"


async def test_a_blocked_session_id_blocks_only_its_own_tenant(gw: RunningGateway) -> None:
    for tenant in ("acme", "globex"):
        async with mcp_client(f"{gw.url}/mcp", key_headers(tenant, session="shared-name")) as client:
            await client.list_tools()
            texts = [text_of(await client.call_tool("files__read_file", READ)) for _ in range(4)]
            with pytest.raises(MCPError):
                await client.call_tool("files__read_file", READ)
        assert "[loop guard]" in texts[3] and "[loop guard]" not in texts[2]  # globex: its own fresh session


async def test_the_same_calls_in_another_session_or_without_one_are_not_judged_together(gw: RunningGateway) -> None:
    for session in ("tool-loop-a", "tool-loop-b", None):
        async with mcp_client(f"{gw.url}/mcp", key_headers(session=session)) as client:
            await client.list_tools()
            for _ in range(3):
                assert "[loop guard]" not in text_of(await client.call_tool("files__read_file", READ))


async def test_a_session_the_model_side_stopped_cannot_call_tools(gw: RunningGateway) -> None:
    agent = OpenAIAgent(gw, "model-loop-1")
    actions = [agent.step("bash", {"command": "pytest"}, "1 failed").action for _ in range(7)]
    assert "stop" in actions
    async with mcp_client(f"{gw.url}/mcp", key_headers(session="model-loop-1")) as client:
        await client.list_tools()
        with pytest.raises(MCPError) as refused:
            await client.call_tool("files__read_file", READ)
    assert refused.value.code == AGENT_STOPPED


async def test_the_mcp_session_id_names_the_guard_session_without_other_headers(gw: RunningGateway) -> None:
    async with mcp_client(f"{gw.url}/mcp", key_headers(), mode="legacy") as client:
        await client.list_tools()
        texts = [text_of(await client.call_tool("local__read_file", READ)) for _ in range(4)]
        with pytest.raises(MCPError) as stopped:
            await client.call_tool("local__read_file", READ)
    assert "[loop guard]" in texts[3] and "[loop guard]" not in texts[2]
    assert stopped.value.code == AGENT_STOPPED


async def test_replicas_on_one_redis_share_the_tool_loop_and_its_block(upstream_url: str, tool_root: Path) -> None:
    settings = mcp_settings(upstream_url, tool_root)
    files_only = {**settings["mcp"], "servers": settings["mcp"]["servers"][:1]}
    overrides = {"tenants": settings["tenants"], "mcp": files_only}
    with replicas_on_one_redis(**overrides) as (a, b):
        texts = []
        for i in range(5):  # alternate replicas, as a balancer would
            gw = (a, b)[i % 2]
            async with mcp_client(f"{gw.url}/mcp", key_headers(session="replicated-loop")) as client:
                await client.list_tools()
                try:
                    texts.append(text_of(await client.call_tool("files__read_file", READ)))
                except MCPError as error:
                    texts.append(f"error {error.code}")
        model = b.openai(default_headers={"x-session-id": "replicated-loop"})
        with pytest.raises(openai.APIStatusError) as blocked:
            model.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "go on"}])
    assert "[loop guard]" in texts[3] and "[loop guard]" not in texts[2]
    assert texts[4] == f"error {AGENT_STOPPED}"
    assert blocked.value.response.json()["error"]["type"] == "agent_loop_stopped"
