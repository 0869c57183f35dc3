"""The opt-in terminate tool: the model ends the session itself, with status success (GOAL) or failure.

Request: ``terminate(status, reason)`` is added to requests that already carry tools (agent requests),
unless the client has a tool of that name (then it is the client's and left alone). Response: a call to
it ends the session: the status is recorded, and the client gets a final text answer instead of the
call (the assistant's own text, then "Finished (success): <reason>"), no tool calls, finish reason
stop / end_turn, so any agent loop ends there. Other calls in the same turn are dropped with it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agent_runtime.guard import StopReason

NAME = "terminate"
DESCRIPTION = (
    "End the task. Call it alone, once the task is done (status 'success') or cannot be done "
    "(status 'failure'), with a one-sentence reason."
)
SCHEMA = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["success", "failure"]},
        "reason": {"type": "string", "description": "What was achieved, or why it cannot be."},
    },
    "required": ["status", "reason"],
}


@dataclass(frozen=True)
class Termination:
    status: StopReason  # GOAL or FAILURE
    reason: str
    text: str  # the final answer the client sees


def _tool_names(wire: str, tools: list[Any]) -> set[str]:
    if wire == "openai":
        return {str((tool.get("function") or {}).get("name")) for tool in tools if isinstance(tool, dict)}
    return {str(tool.get("name")) for tool in tools if isinstance(tool, dict)}


def with_terminate_tool(wire: str, body: dict[str, Any]) -> dict[str, Any] | None:
    """``body`` with the terminate tool added; None when it has no tools or already has one of that name."""
    tools = body.get("tools")
    if not isinstance(tools, list) or not tools or NAME in _tool_names(wire, tools):
        return None
    if wire == "openai":
        tool: dict[str, Any] = {
            "type": "function",
            "function": {"name": NAME, "description": DESCRIPTION, "parameters": SCHEMA},
        }
    else:
        tool = {"name": NAME, "description": DESCRIPTION, "input_schema": SCHEMA}
    return {**body, "tools": [*tools, tool]}


def _termination(args: Any, text: str) -> Termination:
    if isinstance(args, str):
        try:
            args = json.loads(args or "{}")
        except ValueError:
            args = {}
    args = args if isinstance(args, dict) else {}
    success = str(args.get("status", "")).lower() == "success"
    reason = str(args.get("reason") or "").strip() or "no reason given"
    final = f"Finished ({'success' if success else 'failure'}): {reason}"
    return Termination(
        StopReason.GOAL if success else StopReason.FAILURE, reason, f"{text}\n\n{final}" if text.strip() else final
    )


def take_termination(wire: str, response: dict[str, Any]) -> tuple[dict[str, Any], Termination] | None:
    """When the response calls terminate: the response rewritten as a final text answer, and the outcome."""
    if wire == "openai":
        choices = response.get("choices") or []
        message = (choices[0].get("message") or {}) if choices else {}
        calls = [c for c in message.get("tool_calls") or [] if (c.get("function") or {}).get("name") == NAME]
        if not calls:
            return None
        ended = _termination(calls[0]["function"].get("arguments"), message.get("content") or "")
        final = {"role": "assistant", "content": ended.text, "refusal": None}
        choice = {**choices[0], "message": final, "finish_reason": "stop"}
        return {**response, "choices": [choice, *choices[1:]]}, ended
    blocks = response.get("content") or []
    uses = [b for b in blocks if b.get("type") == "tool_use" and b.get("name") == NAME]
    if not uses:
        return None
    text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    ended = _termination(uses[0].get("input"), text)
    content = [{"type": "text", "text": ended.text}]
    return {**response, "content": content, "stop_reason": "end_turn", "stop_sequence": None}, ended
