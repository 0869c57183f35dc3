"""A provider-neutral view of a request's turns: what replies, directives and replay look at."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

TurnKind = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class Turn:
    """One piece of conversation; an Anthropic message with tool results yields one Turn per result."""

    kind: TurnKind
    text: str
    tool_call_id: str | None = None


def content_text(content: Any) -> str:
    """Plain text of a string or a list of content parts/blocks (non-text parts are skipped)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"]
    return "".join(parts)


def openai_turns(messages: list[dict[str, Any]]) -> list[list[Turn]]:
    """Turns grouped by message, OpenAI Chat Completions shape."""
    grouped: list[list[Turn]] = []
    for message in messages:
        role = message.get("role")
        text = content_text(message.get("content"))
        if role == "tool":
            grouped.append([Turn("tool", text, message.get("tool_call_id"))])
        elif role in ("system", "developer"):
            grouped.append([Turn("system", text)])
        elif role == "assistant":
            grouped.append([Turn("assistant", text)])
        else:
            grouped.append([Turn("user", text)])
    return grouped


def anthropic_turns(messages: list[dict[str, Any]]) -> list[list[Turn]]:
    """Turns grouped by message, Anthropic Messages shape (tool results live in user messages)."""
    grouped: list[list[Turn]] = []
    for message in messages:
        content = message.get("content")
        if message.get("role") == "assistant":
            grouped.append([Turn("assistant", content_text(content))])
            continue
        if message.get("role") == "system":  # system text at this position (per-turn-control beta)
            grouped.append([Turn("system", content_text(content))])
            continue
        if isinstance(content, str):
            grouped.append([Turn("user", content)])
            continue
        turns = [
            Turn("tool", content_text(block.get("content")), block.get("tool_use_id"))
            for block in content or []
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]
        text = content_text(content)
        if text or not turns:
            turns.append(Turn("user", text))
        grouped.append(turns)
    return grouped
