"""The gateway opens its upstream MCP connections when it starts, not on a client's first listing: a stdio
server takes seconds to start, and Codex sends its first model request without the tools of an MCP
server still listing them (tests/mcp/test_agent_cli_mcp.py)."""

from __future__ import annotations

import time
from pathlib import Path

from tests.gateway_harness import running_gateway
from tests.mcp.conftest import mcp_settings

STARTUP_S = 20.0


def processes_naming(text: str) -> list[int]:
    """Ids of the running processes whose command line holds `text`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text in cmdline.read_bytes().decode(errors="replace"):
                found.append(int(cmdline.parent.name))
        except OSError:  # the process ended meanwhile
            continue
    return found


def test_the_stdio_upstream_starts_with_the_gateway_before_any_mcp_request(upstream_url: str, tmp_path: Path) -> None:
    root = tmp_path / "startup-root"  # in the stdio server's arguments: names this gateway's process only
    root.mkdir()
    with running_gateway(**mcp_settings(upstream_url, root)):
        deadline = time.monotonic() + STARTUP_S
        while not processes_naming(str(root)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert processes_naming(str(root)), "the stdio MCP server was not started with the gateway"
