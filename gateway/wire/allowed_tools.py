"""OpenAI Chat's `allowed_tools` tool_choice for a provider without it (LiteLLM refuses it for them).

`{"type": "allowed_tools", "allowed_tools": {"mode": ..., "tools": [...]}}` limits the calls to a subset of
the declared tools while the model still reads them all (so the prompt prefix stays cacheable). Providers
without it get the same limit the way they all accept: only the allowed tools, and the mode as the plain
tool_choice ("auto" or "required").
"""

from __future__ import annotations

from typing import Any

MODES = ("auto", "required")


def _name(tool: Any) -> str | None:
    function = tool.get("function") if isinstance(tool, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    return name if isinstance(name, str) else None


def narrowed(body: dict[str, Any]) -> dict[str, Any]:
    """`body` with an allowed_tools choice turned into its tools narrowed to the allowed ones; as it is
    otherwise, or when none of the allowed names is declared (the provider then answers as it would)."""
    choice, tools = body.get("tool_choice"), body.get("tools")
    if not isinstance(choice, dict) or choice.get("type") != "allowed_tools":
        return body
    allowed = choice.get("allowed_tools")
    if not isinstance(allowed, dict) or not isinstance(allowed.get("tools"), list) or not isinstance(tools, list):
        return body
    names = {name for tool in allowed["tools"] if (name := _name(tool)) is not None}
    kept = [tool for tool in tools if _name(tool) in names]
    if not kept:
        return body
    mode = allowed.get("mode")
    return {**body, "tools": kept, "tool_choice": mode if mode in MODES else "auto"}
