"""The MCP configuration: upstreams only as the operator writes them, names that keep prefixes
unambiguous, credentials by environment variable name, and the allow/deny globs."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gateway.config import Settings
from gateway.config.mcp import McpAccess, McpServerConfig


@pytest.mark.parametrize(
    "server",
    [
        {"name": "two__parts", "url": "http://127.0.0.1:1/mcp"},  # '__' would make prefixes ambiguous
        {"name": "files", "url": "file:///etc/passwd"},
        {"name": "files"},  # http without a url
        {"name": "files", "transport": "stdio"},  # stdio without a command
        {"name": "files", "url": "http://127.0.0.1:1/mcp", "headers_env": {"Authorization": "Bearer abc"}},
    ],
)
def test_a_server_the_gateway_could_not_serve_safely_is_refused_at_load(server: dict[str, str]) -> None:
    with pytest.raises(ValidationError):
        McpServerConfig.model_validate(server)


def test_two_servers_with_one_name_are_refused() -> None:
    server = {"name": "files", "url": "http://127.0.0.1:1/mcp"}
    with pytest.raises(ValidationError, match="duplicate MCP server names"):
        Settings.model_validate({"mcp": {"servers": [server, server]}})


def test_deny_wins_and_allow_lists_limit() -> None:
    access = McpAccess(allow_servers=["files", "git*"], deny_tools=["*__delete_*"])
    assert access.tool_allowed("files", "files__read_file")
    assert access.tool_allowed("github", "github__list_issues")
    assert not access.tool_allowed("github", "github__delete_repo")
    assert not access.tool_allowed("shell", "shell__run")
    assert McpAccess().tool_allowed("any", "any__tool")
    assert not McpAccess(allow_tools=[]).tool_allowed("any", "any__tool")
