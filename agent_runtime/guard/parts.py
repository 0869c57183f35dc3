"""What one message contributes to the steps, hashed once: the costly half of parsing a conversation.

A step joins parts of several messages (a call and its result, a reply and the user message after it),
but every hash comes from one message alone: a call's arguments and its turn's text from the assistant
message, a result's hash and error flag from the tool result. ``message_parts`` computes them for one
message, with no state: a pure function of the message's content, so a consumer can remember it by
content (the gateway keeps it with the message's other facts: gateway/history/steps.py) and the parser
(``parser.py``) only pairs parts up. A step built from parts equals the one ``make_tool_step`` /
``make_text_step`` build from the same call, result and reply.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .steps import Step, content_text, digest, make_text_step, make_tool_step, result_fields

__all__ = ["Call", "MessageParts", "Result", "blocks", "message_parts", "reply_text"]


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call of an assistant message: its step while unanswered."""

    call_id: str | None  # pairs it with its result (never part of a hash); None: no usable id
    step: Step


@dataclass(frozen=True, slots=True)
class Result:
    """One tool result: the ``result_hash`` and ``is_error`` of the step it answers."""

    call_id: str | None
    result_hash: str | None
    is_error: bool


@dataclass(frozen=True, slots=True)
class MessageParts:
    turn: bool = False  # an assistant message: a new turn (earlier steps are complete)
    said: Step | None = None  # an assistant turn with no call: its text (or empty) step, before any reply
    calls: tuple[Call, ...] = ()
    results: tuple[Result, ...] = ()  # in order; an assistant message's (server tools) follow its calls
    reply: str | None = None  # a user message that replies (not only tool results): the digest of its text


def _call_id(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _result(call_id: Any, content: Any, is_error: bool | None) -> Result:
    return Result(_call_id(call_id), *result_fields(content, is_error))


def _flag(message: Mapping[str, Any]) -> bool | None:
    """An explicit error flag on an OpenAI tool result, if the client sent one."""
    if isinstance(message.get("is_error"), bool):
        return bool(message["is_error"])
    status = message.get("status")
    return status == "error" if isinstance(status, str) else None


def blocks(content: Any) -> list[Mapping[str, Any]]:
    """An Anthropic message's content blocks (a string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, Mapping)]


def _turn(text: str, calls: list[tuple[Any, Any, Any, bool]], results: tuple[Result, ...] = ()) -> MessageParts:
    """An assistant turn: calls as (id, tool, arguments, free-form)."""
    if not calls:
        return MessageParts(turn=True, said=make_text_step(text), results=results)
    made = tuple(
        Call(_call_id(call_id), make_tool_step(tool if isinstance(tool, str) else None, args, text=text, freeform=free))
        for call_id, tool, args, free in calls
    )
    return MessageParts(turn=True, calls=made, results=results)


def _openai(message: Mapping[str, Any]) -> MessageParts:
    role = message.get("role")
    if role == "assistant":
        text = content_text(message.get("content"))
        if isinstance(message.get("refusal"), str):
            text = f"{text}\n{message['refusal']}" if text else message["refusal"]
        calls = list(message.get("tool_calls") or [])
        if isinstance(message.get("function_call"), Mapping):
            calls.append({"type": "function", "function": message["function_call"]})
        made = []
        for call in calls:
            custom = call.get("type") == "custom"
            spec = call.get("custom" if custom else "function") or {}
            made.append((call.get("id"), spec.get("name"), spec.get("input" if custom else "arguments"), custom))
        return _turn(text, made)
    if role in ("tool", "function"):
        return MessageParts(results=(_result(message.get("tool_call_id"), message.get("content"), _flag(message)),))
    if role == "user":
        return MessageParts(reply=digest(content_text(message.get("content"))))
    return MessageParts()


def _anthropic_result(block: Mapping[str, Any]) -> Result:
    flag = block.get("is_error")
    return _result(block.get("tool_use_id"), block.get("content"), flag if isinstance(flag, bool) else None)


def _anthropic(message: Mapping[str, Any]) -> MessageParts:
    found = blocks(message.get("content"))
    if message.get("role") == "assistant":
        text = "\n".join(b["text"] for b in found if b.get("type") == "text" and b.get("text"))
        uses = [b for b in found if b.get("type") in ("tool_use", "server_tool_use")]
        served = tuple(_anthropic_result(b) for b in found if str(b.get("type", "")).endswith("_tool_result"))
        return _turn(text, [(use.get("id"), use.get("name"), use.get("input"), False) for use in uses], served)
    if message.get("role") == "user":
        results = tuple(_anthropic_result(b) for b in found if b.get("type") == "tool_result")
        replies = [b for b in found if b.get("type") != "tool_result"]
        return MessageParts(results=results, reply=digest(content_text(replies)) if replies else None)
    return MessageParts()


def message_parts(format: str, message: Mapping[str, Any]) -> MessageParts:
    """The parts of one message in ``format`` ("openai": Chat Completions, "anthropic": Messages)."""
    return _openai(message) if format == "openai" else _anthropic(message)


def reply_text(format: str, message: Mapping[str, Any]) -> str:
    """The text a user message replies with (to join consecutive replies to one text step)."""
    if format == "openai":
        return content_text(message.get("content"))
    return content_text([b for b in blocks(message.get("content")) if b.get("type") != "tool_result"])
