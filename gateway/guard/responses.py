"""Reading and reshaping a final response (either API shape) for the guard's response checks."""

from __future__ import annotations

from typing import Any


def tool_call_count(wire: str, response: dict[str, Any]) -> int:
    if wire == "openai":
        choices = response.get("choices") or []
        return sum(len((choice.get("message") or {}).get("tool_calls") or []) for choice in choices)
    return sum(1 for block in response.get("content") or [] if block.get("type") == "tool_use")


def response_text(wire: str, response: dict[str, Any]) -> str:
    if wire == "openai":
        choices = response.get("choices") or []
        return str((choices[0].get("message") or {}).get("content") or "") if choices else ""
    return "".join(b.get("text", "") for b in response.get("content") or [] if b.get("type") == "text")


def truncated(wire: str, response: dict[str, Any], keep: int) -> dict[str, Any]:
    """The response as the cut stream would have ended: its text cut to ``keep`` characters, no calls."""
    text = response_text(wire, response)[:keep]
    if wire == "openai":
        choices = response["choices"]
        message = {"role": "assistant", "content": text, "refusal": None}
        return {**response, "choices": [{**choices[0], "message": message, "finish_reason": "stop"}, *choices[1:]]}
    return {**response, "content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}
