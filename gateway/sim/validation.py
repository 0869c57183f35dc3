"""Request checks the real APIs enforce, with messages worded like theirs."""

from __future__ import annotations

from typing import Any

from gateway.sim.errors import invalid_request

ANTHROPIC_ROLES = ("user", "assistant", "system")


def check_openai_request(body: dict[str, Any]) -> None:
    if not body.get("model"):
        raise invalid_request("you must provide a model parameter", param="model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise invalid_request(
            "Invalid 'messages': empty array. Expected an array with minimum length 1.", param="messages"
        )
    check_openai_tool_pairing(messages)


def check_openai_tool_pairing(messages: list[dict[str, Any]]) -> None:
    """Tool calls must be answered by the tool messages right after them, and only those."""
    open_ids: list[str] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in open_ids:
                raise invalid_request(
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                    "message with 'tool_calls'.",
                    param=f"messages.[{index}].role",
                )
            open_ids.remove(message["tool_call_id"])
            continue
        _require_answered(open_ids, index)
        if role == "assistant":
            open_ids = [call.get("id") for call in message.get("tool_calls") or []]
    _require_answered(open_ids, len(messages))


def _require_answered(open_ids: list[str], index: int) -> None:
    if open_ids:
        raise invalid_request(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
            "'tool_call_id'. The following tool_call_ids did not have response messages: " + ", ".join(open_ids),
            param=f"messages.[{index}].role",
        )


def check_anthropic_request(body: dict[str, Any]) -> None:
    if not body.get("model"):
        raise invalid_request("model: Field required")
    if not isinstance(body.get("max_tokens"), int):
        raise invalid_request("max_tokens: Field required")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise invalid_request("messages: at least one message is required")
    for index, message in enumerate(messages):
        # `system` messages (Claude Code's per-turn-control beta) are system text at their position.
        if not isinstance(message, dict) or message.get("role") not in ANTHROPIC_ROLES:
            raise invalid_request(f"messages.{index}.role: Input should be 'user', 'assistant' or 'system'")
    check_anthropic_tool_pairing(messages)


def _blocks(message: dict[str, Any], kind: str) -> list[tuple[int, dict[str, Any]]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [(i, b) for i, b in enumerate(content) if isinstance(b, dict) and b.get("type") == kind]


def check_anthropic_tool_pairing(messages: list[dict[str, Any]]) -> None:
    """Every tool_use needs a tool_result in the next message; every tool_result a tool_use before it."""
    for index, message in enumerate(messages):
        previous = messages[index - 1] if index > 0 else {}
        used = {b.get("id") for _, b in _blocks(previous, "tool_use")} if previous.get("role") == "assistant" else set()
        for position, block in _blocks(message, "tool_result"):
            if block.get("tool_use_id") not in used:
                raise invalid_request(
                    f"messages.{index}.content.{position}: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {block.get('tool_use_id')}. Each `tool_result` block must have a corresponding "
                    "`tool_use` block in the previous message."
                )
        if message.get("role") != "assistant":
            continue
        following = messages[index + 1] if index + 1 < len(messages) else {}
        answered = {b.get("tool_use_id") for _, b in _blocks(following, "tool_result")}
        missing = [b.get("id") for _, b in _blocks(message, "tool_use") if b.get("id") not in answered]
        if missing:
            raise invalid_request(
                f"messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately "
                f"after: {', '.join(str(m) for m in missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
            )
