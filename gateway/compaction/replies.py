"""What compaction reads from a provider's reply, per API shape: its text and its tool calls."""

from __future__ import annotations

from typing import Any

import orjson

Reply = dict[str, Any]


def reply_text(wire: str, reply: Reply) -> str:
    if wire == "openai":
        choices = reply.get("choices") or [{}]
        return str((choices[0].get("message") or {}).get("content") or "")
    return "".join(b.get("text", "") for b in reply.get("content") or [] if b.get("type") == "text")


def reply_calls(wire: str, reply: Reply) -> list[tuple[str, str, dict[str, Any]]]:
    """(call id, tool name, arguments) of the tool calls in a reply; unparsable arguments read as {}."""
    if wire == "openai":
        choices = reply.get("choices") or [{}]
        calls = []
        for call in (choices[0].get("message") or {}).get("tool_calls") or []:
            function = call.get("function") or {}
            try:
                arguments = orjson.loads(function.get("arguments") or "{}")
            except orjson.JSONDecodeError:
                arguments = {}
            arguments = arguments if isinstance(arguments, dict) else {}
            calls.append((str(call.get("id")), str(function.get("name")), arguments))
        return calls
    return [
        (str(b.get("id")), str(b.get("name")), b.get("input") if isinstance(b.get("input"), dict) else {})
        for b in reply.get("content") or []
        if b.get("type") == "tool_use"
    ]


def assistant_message(wire: str, reply: Reply) -> dict[str, Any]:
    """The reply as the assistant message of a follow-up request."""
    if wire == "openai":
        message = dict((reply.get("choices") or [{}])[0].get("message") or {})
        return {k: v for k, v in message.items() if k in ("role", "content", "tool_calls")}
    return {"role": "assistant", "content": reply.get("content") or []}


def tool_answers(wire: str, answers: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """Messages answering tool calls: (call id, text) pairs."""
    if wire == "openai":
        return [{"role": "tool", "tool_call_id": call_id, "content": text} for call_id, text in answers]
    blocks = [{"type": "tool_result", "tool_use_id": call_id, "content": text} for call_id, text in answers]
    return [{"role": "user", "content": blocks}]


def without_tool(wire: str, reply: Reply, name: str) -> Reply:
    """The reply with the calls of one tool removed (the client never sees the gateway's own tool)."""
    if wire == "openai":
        choices = []
        for choice in reply.get("choices") or []:
            message = dict(choice.get("message") or {})
            calls = [c for c in message.get("tool_calls") or [] if (c.get("function") or {}).get("name") != name]
            if calls:
                message["tool_calls"] = calls
            else:
                message.pop("tool_calls", None)
                choice = {**choice, "finish_reason": "stop"}
            choices.append({**choice, "message": message})
        return {**reply, "choices": choices}
    content = [b for b in reply.get("content") or [] if not (b.get("type") == "tool_use" and b.get("name") == name)]
    has_calls = any(b.get("type") == "tool_use" for b in content)
    stop = reply.get("stop_reason") if has_calls else "end_turn"
    return {**reply, "content": content, "stop_reason": stop}


def add_usage(total: Any, more: Any) -> Any:
    """Field-by-field sum of two usage objects (nested dicts of counts), for multi-call answers."""
    if isinstance(total, dict) and isinstance(more, dict):
        return {key: add_usage(total.get(key), more.get(key)) for key in {**total, **more}}
    if isinstance(total, int | float) and isinstance(more, int | float) and not isinstance(total, bool):
        return total + more
    return total if total is not None else more
