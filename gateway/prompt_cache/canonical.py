"""Canonical tool schemas: the same tools always serialise to the same bytes (sorted keys, sorted tools)."""

from __future__ import annotations

from typing import Any


def sorted_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(item) for item in value]
    return value


def tool_name(tool: Any) -> str:
    """OpenAI tools name their function; Anthropic tools are named directly."""
    if not isinstance(tool, dict):
        return ""
    function = tool.get("function")
    name = function.get("name") if isinstance(function, dict) else tool.get("name")
    return str(name or "")


def canonical_tools(tools: list[Any]) -> list[Any]:
    """Tools in a stable order (by name; the sort is stable for unnamed ones) with sorted keys.

    The client's cache_control marks survive: they are keys like any other.
    """
    return [sorted_keys(tool) for tool in sorted(tools, key=tool_name)]
