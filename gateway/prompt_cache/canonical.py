"""Canonical tool schemas: the same tools always serialise to the same bytes (sorted keys, sorted tools)."""

from __future__ import annotations

from typing import Any

from gateway.pacing import CHUNK, Steps


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


def canonical_tools_steps(tools: list[Any]) -> Steps[list[Any]]:
    """Tools in a stable order (by name; the sort is stable for unnamed ones) with sorted keys.

    The client's cache_control marks survive: they are keys like any other.
    """
    canonical: list[Any] = []
    for index, tool in enumerate(sorted(tools, key=tool_name)):
        canonical.append(sorted_keys(tool))
        if index % CHUNK == CHUNK - 1:
            yield
    return canonical
