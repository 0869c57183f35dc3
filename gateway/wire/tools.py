"""Adding a function tool the gateway offers (the guard's terminate tool) to a request's own tools."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def with_tool(
    body: dict[str, Any], name: str, tool: dict[str, Any], name_of: Callable[[dict[str, Any]], Any]
) -> dict[str, Any] | None:
    """The body with `tool` appended to its tools; None when it has no tools (the gateway does not turn a
    plain chat into a tool call) or already has a tool called `name` (`name_of` reads a tool's name)."""
    tools = body.get("tools")
    if not isinstance(tools, list) or not tools:
        return None
    if any(isinstance(existing, dict) and name_of(existing) == name for existing in tools):
        return None
    return {**body, "tools": [*tools, tool]}
