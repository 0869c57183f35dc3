"""The MCP errors the endpoint answers with (JSON-RPC codes; the server-error range for our own)."""

from __future__ import annotations

import mcp_types as types
from mcp.shared.exceptions import MCPError

AGENT_STOPPED = -32001  # the loop guard stopped or blocked the session
UPSTREAM_FAILED = -32002  # the upstream server could not be reached, did not answer, or answered too much
TOOL_CALLS_LIMITED = -32003  # the key's or tenant's tool-call rate limit or budget refused the call


def not_available(kind: str, name: str) -> MCPError:
    """A tool or prompt that does not exist or that the key may not use: the same answer for both, so a
    refusal does not tell which exist."""
    return MCPError(types.INVALID_PARAMS, f"Unknown {kind}: {name[:200]!r} (or not available to this key).")


def upstream_failed(message: str) -> MCPError:
    return MCPError(UPSTREAM_FAILED, message)
