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
from gateway.wire import WireFormat

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


def with_terminate_tool(wire: WireFormat, body: dict[str, Any]) -> dict[str, Any] | None:
    """``body`` with the terminate tool added; None when it has no tools or already has one of that name."""
    return wire.with_function_tool(body, NAME, DESCRIPTION, SCHEMA)


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


def take_termination(wire: WireFormat, response: dict[str, Any]) -> tuple[dict[str, Any], Termination] | None:
    """When the response calls terminate: the response rewritten as a final text answer, and the outcome."""
    args = wire.tool_call(response, NAME)
    if args is None:
        return None
    ended = _termination(args, wire.reply_text(response))
    return wire.with_text_only(response, ended.text), ended
