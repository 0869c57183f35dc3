"""The system prompt's text fields, wherever each API shape keeps them, for volatile detection and
relocation."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from gateway.pacing import CHUNK, Steps

SYSTEM_ROLES = ("system", "developer")


@dataclass(frozen=True, slots=True)
class TextField:
    holder: dict[str, Any]
    key: str

    @property
    def text(self) -> str:
        return str(self.holder[self.key])

    def replace(self, text: str) -> None:
        self.holder[self.key] = text


def _fields(holder: dict[str, Any], key: str) -> Iterator[TextField]:
    content = holder.get(key)
    if isinstance(content, str):
        yield TextField(holder, key)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                yield TextField(part, "text")


@dataclass(frozen=True, slots=True)
class SystemPrompt:
    """Where a body keeps its system prompt: Anthropic's `system`, or OpenAI's system/developer messages
    (found once: a long history is walked a chunk at a time, see system_prompt_steps)."""

    body: dict[str, Any]
    wire: str
    messages: list[dict[str, Any]]

    def fields(self) -> list[TextField]:
        if self.wire == "anthropic":
            return list(_fields(self.body, "system"))
        return [field for message in self.messages for field in _fields(message, "content")]

    def part(self) -> Any:
        """The system prompt as one hashable value."""
        if self.wire == "anthropic":
            return self.body.get("system")
        return [message.get("content") for message in self.messages]


def system_prompt_steps(body: dict[str, Any], wire: str) -> Steps[SystemPrompt]:
    found: list[dict[str, Any]] = []
    if wire != "anthropic":
        for index, message in enumerate(body.get("messages") or []):
            if isinstance(message, dict) and message.get("role") in SYSTEM_ROLES:
                found.append(message)
            if index % CHUNK == CHUNK - 1:
                yield
    return SystemPrompt(body, wire, found)


def append_note(body: dict[str, Any], wire: str, note: str) -> None:
    """Add `note` as the request's last block, after the newest (user or tool) turn."""
    messages = body["messages"]
    if wire == "openai":
        messages.append({"role": "user", "content": note})
        return
    last = messages[-1]
    content = last.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    last["content"] = [*blocks, {"type": "text", "text": note}]
