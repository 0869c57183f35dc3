"""The NUDGE rung: a message for the model appended to the request, keeping it valid for the provider.

The text goes at the end of the last user turn (OpenAI: the last ``user`` or ``tool`` message; Anthropic:
the last ``user`` message, after its ``tool_result`` blocks, as a text block), so no message is added or
reordered and every tool call stays paired with its result. Messages are copied, never changed in place:
the caller's history (and the step parser's references to it) stay as sent.
"""

from __future__ import annotations

from typing import Any

_TARGET_ROLES = {"openai": ("user", "tool"), "anthropic": ("user",)}


def _with_text(content: Any, text: str, wire: str) -> Any:
    if isinstance(content, str):
        return f"{content}\n\n{text}" if content else text
    if isinstance(content, list):
        return [*content, {"type": "text", "text": text}]
    return text if wire == "openai" else [{"type": "text", "text": text}]


def append_nudge(wire: str, body: dict[str, Any], text: str) -> dict[str, Any] | None:
    """``body`` with ``text`` appended to its last user turn; None when there is no such turn."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    roles = _TARGET_ROLES[wire]
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, dict) and message.get("role") in roles:
            nudged = {**message, "content": _with_text(message.get("content"), text, wire)}
            return {**body, "messages": [*messages[:index], nudged, *messages[index + 1 :]]}
    return None
