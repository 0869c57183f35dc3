"""The MCP gateway (gateway/mcp/): the upstream MCP servers the operator configures, and which of
their servers and tools a tenant or key may use (``policy.mcp``, merged like every policy override).

Upstreams come from this file only: a caller never names a URL or a command. Upstream credentials are
the names of environment variables (``headers_env``, or per tenant and key ``policy.mcp.credentials``,
which a managed key's record can carry), never the values, and never the caller's key.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from gateway.config.mcp_limits import ToolCallLimits
from gateway.config.tenants import ENV_NAME

# Tool names travel as "<server>__<tool>": a server name holds no "__", so the first one splits them.
SERVER_NAME = re.compile(r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*")
HEADER_NAME = re.compile(r"[A-Za-z0-9-]{1,64}")


class McpServerConfig(BaseModel):
    name: str = Field(description="Prefix of its tools' names ('<name>__<tool>'); letters, digits, '-', single '_'")
    transport: Literal["http", "sse", "stdio"] = "http"
    url: str | None = Field(
        default=None, description="Streamable HTTP endpoint (transport http), or the SSE stream's (transport sse)"
    )
    headers_env: dict[str, str] = Field(
        default_factory=dict,
        description="Header sent upstream -> environment variable holding its value ({'Authorization': "
        "'GITHUB_MCP_TOKEN'}): the upstream's own credentials; the caller's key never goes upstream",
    )
    command: str | None = Field(default=None, description="Executable the gateway starts (transport stdio)")
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment of the stdio process")
    cwd: str | None = None
    timeout_s: float = Field(default=60.0, gt=0, description="Longest a tool call may take upstream")

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        if len(name) > 48 or not SERVER_NAME.fullmatch(name):
            raise ValueError("MCP server names: up to 48 letters, digits, '-' and single '_'")
        return name

    @field_validator("headers_env")
    @classmethod
    def _headers(cls, headers: dict[str, str]) -> dict[str, str]:
        return _header_envs(headers)

    @model_validator(mode="after")
    def _target(self) -> McpServerConfig:
        if self.transport != "stdio" and not (self.url and self.url.startswith(("http://", "https://"))):
            raise ValueError(f"MCP server {self.name!r}: transport {self.transport} needs an http(s) url")
        if self.transport == "stdio" and not self.command:
            raise ValueError(f"MCP server {self.name!r}: transport stdio needs a command")
        return self


class McpConfig(BaseModel):
    servers: list[McpServerConfig] = Field(default_factory=list, description="Empty: no /mcp endpoint")
    max_result_bytes: int = Field(
        default=1024 * 1024, gt=0, description="Largest tool result passed back (JSON bytes); larger: an error"
    )
    fast_path: bool = Field(
        default=True,
        description="Serve stateless tools/call and tools/list POSTs without the MCP SDK's HTTP entry "
        "(gateway/mcp/fast.py); the same checks and answers. False: every request through the SDK",
    )

    @field_validator("servers")
    @classmethod
    def _unique(cls, servers: list[McpServerConfig]) -> list[McpServerConfig]:
        names = [s.name for s in servers]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate MCP server names: {duplicates}")
        return servers


class McpAccess(BaseModel):
    """Which servers and tools a tenant or key may use (``policy.mcp``). Globs (fnmatch, case-sensitive);
    tools by their public name '<server>__<tool>'. None: all allowed; a deny match always wins."""

    allow_servers: list[str] | None = None
    deny_servers: list[str] = Field(default_factory=list)
    allow_tools: list[str] | None = None
    deny_tools: list[str] = Field(default_factory=list)
    credentials: dict[str, dict[str, str]] = Field(
        default_factory=dict,
        description="Server name -> headers_env used in place of the server's own for this tenant or key "
        "(environment variable names, never values; http and sse servers)",
    )
    key_limits: ToolCallLimits = Field(default_factory=ToolCallLimits, description="Each key's own tool calls")
    tenant_limits: ToolCallLimits = Field(
        default_factory=ToolCallLimits, description="The tenant's tool calls, all its keys together"
    )

    @field_validator("credentials")
    @classmethod
    def _credentials(cls, credentials: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        for headers in credentials.values():
            _header_envs(headers)
        return credentials

    def server_allowed(self, server: str) -> bool:
        return _allowed(server, self.allow_servers, self.deny_servers)

    def tool_allowed(self, server: str, public_name: str) -> bool:
        return self.server_allowed(server) and _allowed(public_name, self.allow_tools, self.deny_tools)


def _header_envs(headers: dict[str, str]) -> dict[str, str]:
    for header, env in headers.items():
        if not HEADER_NAME.fullmatch(header) or not ENV_NAME.fullmatch(env):
            raise ValueError("headers_env maps header names to environment variable names")
    return headers


def _allowed(name: str, allow: list[str] | None, deny: list[str]) -> bool:
    if any(fnmatchcase(name, pattern) for pattern in deny):
        return False
    return allow is None or any(fnmatchcase(name, pattern) for pattern in allow)
