"""Real agent CLIs with the gateway as their MCP server, configured as docs/mcp.md and README.md tell users:
the CLI lists the gateway's tools, the simulator's model calls one by the name the CLI gives MCP tools, the
call reaches the test's MCP server through the gateway, and its result goes back to the model.

Codex (code mode) offers its MCP tools to the model only inside its `exec` tool, as JavaScript functions:
the simulator's model calls `exec` with a script that calls the tool."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.config import load_settings
from tests.agent_clis.clis import CLAUDE_CODE, CODEX, DEV_KEY, GEMINI, Cli, Run, recipe
from tests.agent_clis.test_agent_clis import ADMIN, metric, report
from tests.gateway_harness import RunningGateway, running_gateway
from tests.mcp.conftest import UPSTREAM_SECRET, UPSTREAM_SECRET_ENV, mcp_client, mcp_settings

TIMEOUT_S = 60
NOTES = "hello from the file tool"
ARGS = {"path": "notes.txt"}
# (home, gateway url) -> extra arguments: the CLI's MCP configuration, after its model-side setup
Configure = Callable[[Path, str], list[str]]


@pytest.fixture(scope="module")
def cli_gw(upstream_url: str, tool_root: Path) -> Iterator[RunningGateway]:
    """The embedded default (its dev tenant and key, the simulator) with the test's MCP servers."""
    os.environ[UPSTREAM_SECRET_ENV] = UPSTREAM_SECRET
    settings = {
        **load_settings().model_dump(exclude={"host", "port"}),
        "simulator_record_requests": True,
        "mcp": mcp_settings(upstream_url, tool_root)["mcp"],
    }
    with running_gateway(**settings) as gateway:
        asyncio.run(list_tools(gateway))  # the upstreams open (a stdio server takes seconds), as in a deployed gateway
        yield gateway


async def list_tools(gw: RunningGateway) -> None:
    """Codex sends its first model request without the tools of an MCP server that is still listing them."""
    async with mcp_client(f"{gw.url}/mcp", {"authorization": f"Bearer {DEV_KEY}"}) as client:
        await client.list_tools()


def claude_code_mcp(home: Path, url: str) -> list[str]:
    server = {"type": "http", "url": f"{url}/mcp", "headers": {"Authorization": f"Bearer {DEV_KEY}"}}
    path = home / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"cachegate": server}}))
    return ["--mcp-config", str(path), "--strict-mcp-config"]


def gemini_mcp(home: Path, url: str) -> list[str]:
    path = home / ".gemini" / "settings.json"
    settings = json.loads(path.read_text())
    server = {"httpUrl": f"{url}/mcp", "headers": {"Authorization": f"Bearer {DEV_KEY}"}}
    path.write_text(json.dumps({**settings, "mcpServers": {"cachegate": server}}))
    return []


def codex_mcp(home: Path, url: str) -> list[str]:
    path = home / ".codex" / "config.toml"
    path.write_text(f"{path.read_text()}\n{recipe('codex-mcp', url)}")
    return []


def direct_call(tool: str) -> str:
    """A `[[sim:tool ...]]` / `[[sim:loop ...]]` argument calling the MCP tool as a function of its own."""
    return f"{tool} {json.dumps(ARGS)}"


def codex_call(tool: str) -> str:
    """The same call as Codex's code mode makes it: a script for its `exec` tool (the result as JSON text)."""
    return f"exec {json.dumps({'input': f'text(await tools.{tool}({json.dumps(ARGS)}))'})}"


def run_with_mcp(cli: Cli, configure: Configure, gw: RunningGateway, prompt: str, tmp_path: Path) -> Run:
    home, workdir = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    workdir.mkdir()
    env, arguments = cli.setup(home, gw.url)
    extra = configure(home, gw.url)
    configured = Cli(cli.name, cli.shell_tool, cli.command_key, lambda _home, _url: (env, [*extra, *arguments]))
    return configured.run(gw.url, prompt, home, workdir, TIMEOUT_S)


def model_saw(gw: RunningGateway, text: str) -> bool:
    response = httpx.get(f"{gw.sim_url}/sim/requests", params={"limit": 5}, headers=ADMIN)
    requests: list[dict[str, Any]] = response.raise_for_status().json()["requests"]
    return any(text in json.dumps(request["body"]) for request in requests)


def tool_records(gw: RunningGateway) -> list[dict[str, Any]]:
    for _ in range(100):  # records are written off the request path
        response = httpx.get(f"{gw.url}/admin/requests", params={"tenant": "dev"}, headers=ADMIN)
        records = [r for r in response.raise_for_status().json()["requests"] if r["api"] == "mcp"]
        if records:
            return records
        time.sleep(0.05)
    return []


@pytest.mark.parametrize(
    ("cli", "configure", "call"),
    [
        (CLAUDE_CODE, claude_code_mcp, direct_call("mcp__cachegate__files__read_file")),
        (CODEX, codex_mcp, codex_call("mcp__cachegate__files__read_file")),
        (GEMINI, gemini_mcp, direct_call("mcp_cachegate_files__read_file")),
    ],
    ids=["claude", "codex", "gemini"],
)
def test_the_cli_calls_a_tool_through_the_gateway(
    cli: Cli, configure: Configure, call: str, cli_gw: RunningGateway, tmp_path: Path
) -> None:
    before = metric(cli_gw, "cachegate_mcp_tool_calls_total", 'outcome="ok",server="files"')
    fast = metric(cli_gw, "cachegate_mcp_fast_path_requests_total", 'path="fast"')
    run = run_with_mcp(cli, configure, cli_gw, f"Read the notes. [[sim:tool {call}]]", tmp_path)
    assert run.returncode == 0, report(run)
    assert metric(cli_gw, "cachegate_mcp_tool_calls_total", 'outcome="ok",server="files"') == before + 1, report(run)
    # Its listing and its call on its session took the fast path (gateway/mcp/fast.py)
    assert metric(cli_gw, "cachegate_mcp_fast_path_requests_total", 'path="fast"') >= fast + 2, report(run)
    assert model_saw(cli_gw, NOTES)  # the tool's result, in the CLI's next model request
    assert any(r["model"] == "files__read_file" and r["tenant"] == "dev" for r in tool_records(cli_gw))


def claude_code_in_session(session: str) -> tuple[Cli, Configure]:
    """Claude Code with `session` as x-session-id on its model requests and on /mcp."""

    def configure(home: Path, url: str) -> list[str]:
        arguments = claude_code_mcp(home, url)
        config = json.loads((home / "mcp.json").read_text())
        config["mcpServers"]["cachegate"]["headers"]["x-session-id"] = session
        (home / "mcp.json").write_text(json.dumps(config))
        return arguments

    def setup(home: Path, url: str) -> tuple[dict[str, str], list[str]]:
        env, arguments = CLAUDE_CODE.setup(home, url)
        return {**env, "ANTHROPIC_CUSTOM_HEADERS": f"x-session-id: {session}"}, arguments

    return Cli(CLAUDE_CODE.name, CLAUDE_CODE.shell_tool, CLAUDE_CODE.command_key, setup), configure


def codex_in_session(session: str) -> tuple[Cli, Configure]:
    """Codex with `session` as x-session-id on its model requests and on /mcp (README's `http_headers`)."""

    def configure(home: Path, url: str) -> list[str]:
        codex_mcp(home, url)
        path = home / ".codex" / "config.toml"  # the recipe's [mcp_servers.cachegate] table is the last one
        path.write_text(f'{path.read_text()}http_headers = {{ "x-session-id" = "{session}" }}\n')
        return ["-c", f'model_providers.cachegate.http_headers={{"x-session-id"="{session}"}}']

    return CODEX, configure


@pytest.mark.parametrize(
    ("in_session", "call"),
    [
        (claude_code_in_session, direct_call("mcp__cachegate__files__read_file")),
        (codex_in_session, codex_call("mcp__cachegate__files__read_file")),
    ],
    ids=["claude", "codex"],
)
def test_a_tool_loop_is_stopped_at_the_tool_layer_and_its_session_blocked(
    in_session: Callable[[str], tuple[Cli, Configure]], call: str, cli_gw: RunningGateway, tmp_path: Path
) -> None:
    """The model asks for the same MCP call after every result: the 4th result carries the nudge, the 5th
    call is stopped by the tool layer, and the session's next model request is refused (the CLI ends)."""
    session, decisions = f"cli-tool-loop-{tmp_path.name}", "cachegate_mcp_guard_decisions_total"
    nudges, stops = metric(cli_gw, decisions, 'action="nudge"'), metric(cli_gw, decisions, 'action="stop"')
    ok = metric(cli_gw, "cachegate_mcp_tool_calls_total", 'outcome="ok",server="files"')
    cli, configure = in_session(session)
    run = run_with_mcp(cli, configure, cli_gw, f"Keep reading. [[sim:loop {call}]]", tmp_path)
    assert "Stopped by the loop guard" in run.stdout + run.stderr, report(run)
    assert metric(cli_gw, decisions, 'action="nudge"') == nudges + 1, report(run)
    assert metric(cli_gw, decisions, 'action="stop"') == stops + 1, report(run)
    assert metric(cli_gw, "cachegate_mcp_tool_calls_total", 'outcome="ok",server="files"') == ok + 4
    body = {"model": "claude-sonnet-4-5", "max_tokens": 16, "messages": [{"role": "user", "content": "go on"}]}
    headers = {"x-api-key": DEV_KEY, "x-session-id": session, "anthropic-version": "2023-06-01"}
    refused = httpx.post(f"{cli_gw.url}/v1/messages", json=body, headers=headers)
    assert refused.json()["error"]["type"] == "agent_loop_stopped", refused.text
