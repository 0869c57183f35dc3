"""Where the two message layouts keep what compaction touches: tool calls, tool results, system, tools.

OpenAI Chat: system/developer messages in `messages`; an assistant message's `tool_calls` are answered
by `tool` messages right after it. Anthropic Messages: `system` is a body field; an assistant message's
`tool_use` blocks are answered by `tool_result` blocks in the next user message.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import orjson

from gateway.pacing import CHUNK, Steps, finish

Message = dict[str, Any]


def digest(value: Any, size: int = 12) -> str:
    return hashlib.blake2b(orjson.dumps(value), digest_size=size).hexdigest()


@dataclass(frozen=True)
class ToolResult:
    """One tool result in the history, by position; `block` is None for an OpenAI tool message."""

    message: int
    block: int | None
    call_id: str
    tool: str
    content: Any

    @property
    def text(self) -> str | None:
        """The result as plain text, or None when it holds anything else (images, documents)."""
        if isinstance(self.content, str):
            return self.content
        if isinstance(self.content, list) and all(
            isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str) for p in self.content
        ):
            return "\n".join(p["text"] for p in self.content)
        return None

    @cached_property
    def handle(self) -> str:
        """Content-addressed, so the same result gets the same handle on every turn and replica (hashed
        once: a result may be megabytes)."""
        return "ctx_" + digest([self.call_id, self.content])


class Layout(ABC):
    name: str

    @staticmethod
    def messages(body: dict[str, Any]) -> list[Message]:
        messages = body.get("messages")
        return messages if isinstance(messages, list) else []

    @abstractmethod
    def system(self, body: dict[str, Any]) -> Any:
        """The system prompt wherever this layout keeps it outside `messages` (None if inside)."""

    @abstractmethod
    def calls(self, message: Message) -> list[tuple[str, str]]:
        """(call id, tool name) of the tool calls an assistant message makes."""

    @abstractmethod
    def results(self, index: int, message: Message) -> list[ToolResult]:
        """Tool results carried by a message (tool names filled in later)."""

    @abstractmethod
    def with_contents(self, message: Message, contents: dict[int | None, Any]) -> Message:
        """A copy of the message with the given tool results' contents replaced (keys: block index)."""

    @abstractmethod
    def head_length(self, messages: list[Message], pin_first_user: bool) -> int:
        """Messages never summarized: leading system messages and (optionally) the first user message."""

    @abstractmethod
    def no_tool_use(self) -> Any:
        """The tool_choice that forbids tool use while keeping the tool list (and the cached prefix)."""

    @staticmethod
    def user_message(text: str) -> Message:
        return {"role": "user", "content": text}

    def tool_results(self, messages: list[Message], start: int = 0) -> list[ToolResult]:
        """Every tool result from `start` on, oldest first, with the name of the tool that produced it."""
        return finish(self.tool_result_steps(messages, start))

    def tool_result_steps(self, messages: list[Message], start: int = 0) -> Steps[list[ToolResult]]:
        """`tool_results` as steps (pausing every CHUNK messages): see compaction/pacing.py."""
        names: dict[str, str] = {}
        for first in range(0, len(messages), CHUNK):
            for m in messages[first : first + CHUNK]:
                if m.get("role") == "assistant":
                    names.update(self.calls(m))
            yield
        found: list[ToolResult] = []
        for first in range(start, len(messages), CHUNK):
            for i in range(first, min(first + CHUNK, len(messages))):
                found.extend(
                    ToolResult(r.message, r.block, r.call_id, names.get(r.call_id, "unknown"), r.content)
                    for r in self.results(i, messages[i])
                )
            yield
        return found


class OpenAILayout(Layout):
    name = "openai"

    def system(self, body: dict[str, Any]) -> Any:
        return None

    def calls(self, message: Message) -> list[tuple[str, str]]:
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        return [
            (str(c.get("id")), str((c.get("function") or {}).get("name", "unknown")))
            for c in calls or []
            if isinstance(c, dict)
        ]

    def results(self, index: int, message: Message) -> list[ToolResult]:
        if message.get("role") != "tool":
            return []
        return [ToolResult(index, None, str(message.get("tool_call_id")), "", message.get("content"))]

    def with_contents(self, message: Message, contents: dict[int | None, Any]) -> Message:
        return {**message, "content": contents[None]}

    def head_length(self, messages: list[Message], pin_first_user: bool) -> int:
        index = 0
        while index < len(messages) and messages[index].get("role") in ("system", "developer"):
            index += 1
        if pin_first_user and index < len(messages) and messages[index].get("role") == "user":
            index += 1
        return index

    def no_tool_use(self) -> Any:
        return "none"


class AnthropicLayout(Layout):
    name = "anthropic"

    def system(self, body: dict[str, Any]) -> Any:
        return body.get("system")

    @staticmethod
    def _blocks(message: Message) -> list[Any]:
        content = message.get("content")
        return content if isinstance(content, list) else []

    def calls(self, message: Message) -> list[tuple[str, str]]:
        if message.get("role") != "assistant":
            return []
        return [
            (str(b.get("id")), str(b.get("name", "unknown")))
            for b in self._blocks(message)
            if isinstance(b, dict) and b.get("type") == "tool_use"
        ]

    def results(self, index: int, message: Message) -> list[ToolResult]:
        if message.get("role") != "user":
            return []
        return [
            ToolResult(index, position, str(b.get("tool_use_id")), "", b.get("content", ""))
            for position, b in enumerate(self._blocks(message))
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]

    def with_contents(self, message: Message, contents: dict[int | None, Any]) -> Message:
        blocks = [
            {**block, "content": contents[position]} if position in contents else block
            for position, block in enumerate(self._blocks(message))
        ]
        return {**message, "content": blocks}

    def head_length(self, messages: list[Message], pin_first_user: bool) -> int:
        index = 1 if pin_first_user and messages and messages[0].get("role") == "user" else 0
        # `system` messages right after it (Claude Code's environment, per-turn-control beta) stay too.
        while index < len(messages) and messages[index].get("role") == "system":
            index += 1
        return index

    def no_tool_use(self) -> Any:
        return {"type": "none"}


LAYOUTS: dict[str, Layout] = {"openai": OpenAILayout(), "anthropic": AnthropicLayout()}
