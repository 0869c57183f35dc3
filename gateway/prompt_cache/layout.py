"""The request as the provider's sequence of prompt blocks (tools -> system -> messages), for both shapes.

Anthropic-shaped bodies map one to one onto Anthropic's blocks. OpenAI-shaped bodies are counted the way
LiteLLM converts them for an Anthropic-style provider: each system/user content part, an assistant's
text and each of its tool calls, and each tool message is one block. Every block knows where a
`cache_control` mark goes so that LiteLLM forwards it (content part, tool call, tool message).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from gateway.prompt_cache.system_text import SYSTEM_ROLES

Section = Literal["tools", "system", "messages"]
MARK = "cache_control"
UNMARKABLE_TYPES = {"thinking", "redacted_thinking"}


@dataclass(slots=True)
class Block:
    section: Section
    message: int | None  # index into body["messages"]
    holder: dict[str, Any]  # the dict that carries (or would carry) the mark
    field: str | None = None  # set: holder[field] is a string that becomes one marked text part
    inherited_mark: Any = None  # a message-level mark the client put on this block's message

    @property
    def mark(self) -> Any:
        """The client's mark on this block (None: unmarked); may be malformed."""
        if self.field is None and MARK in self.holder:
            return self.holder[MARK]
        return self.inherited_mark

    @property
    def markable(self) -> bool:
        """Anthropic refuses marks on thinking blocks and on empty text blocks."""
        if self.field is not None:
            return bool(self.holder[self.field])
        kind = self.holder.get("type")
        if kind in UNMARKABLE_TYPES:
            return False
        return kind != "text" or bool(self.holder.get("text"))

    def text(self) -> str:
        """What the provider reads for this block, without marks (for token counts)."""
        if self.field is not None:
            return str(self.holder[self.field])
        if "role" in self.holder:  # an OpenAI tool or assistant message: its content is the block
            content = self.holder.get("content")
            return content if isinstance(content, str) else orjson.dumps(content).decode()
        return orjson.dumps({k: v for k, v in self.holder.items() if k != MARK}).decode()

    def set_mark(self, mark: dict[str, Any]) -> None:
        if self.field is None:
            self.holder[MARK] = mark
        else:
            self.holder[self.field] = [{"type": "text", "text": self.holder[self.field], MARK: mark}]

    def clear_mark(self) -> None:
        self.holder.pop(MARK, None)


def _parts(section: Section, index: int | None, owner: dict[str, Any], key: str) -> Iterator[Block]:
    content = owner.get(key)
    if isinstance(content, str):
        if content:
            yield Block(section, index, owner, key)
    elif isinstance(content, list):
        yield from (Block(section, index, part) for part in content if isinstance(part, dict))


def tool_blocks(body: dict[str, Any]) -> list[Block]:
    return [Block("tools", None, tool) for tool in body.get("tools") or [] if isinstance(tool, dict)]


def _openai_message_blocks(index: int, message: dict[str, Any]) -> list[Block]:
    role = message.get("role")
    if role in ("system", "developer", "user"):
        blocks = list(_parts("system" if role != "user" else "messages", index, message, "content"))
        if blocks and MARK in message:
            blocks[-1].inherited_mark = message[MARK]
        return blocks
    if role == "tool":
        return [Block("messages", index, message)]
    if role == "assistant":
        content = message.get("content")
        blocks = (
            [Block("messages", index, message)]
            if isinstance(content, str) and content
            else list(_parts("messages", index, message, "content"))
        )
        calls = message.get("tool_calls") or []
        return blocks + [Block("messages", index, call) for call in calls if isinstance(call, dict)]
    return []


def system_blocks(body: dict[str, Any]) -> list[Block]:
    """The blocks of Anthropic's `system` field."""
    return list(_parts("system", None, body, "system"))


def message_blocks(wire: str, index: int, message: Any) -> list[Block]:
    """The blocks of the history's message at `index` (Anthropic: its content parts; OpenAI: see above)."""
    if wire == "anthropic":
        return list(_parts("messages", index, message, "content"))
    return _openai_message_blocks(index, message) if isinstance(message, dict) else []


def _anthropic_groups(body: dict[str, Any]) -> Iterator[list[Block]]:
    yield tool_blocks(body)
    yield system_blocks(body)
    for index, message in enumerate(body.get("messages") or []):
        yield message_blocks("anthropic", index, message)


def _openai_groups(body: dict[str, Any]) -> Iterator[list[Block]]:
    yield tool_blocks(body)
    messages = body.get("messages") or []
    # LiteLLM hoists every system message into Anthropic's `system`, ahead of the conversation.
    for hoisted in (True, False):
        for index, message in enumerate(messages):
            is_system = isinstance(message, dict) and message.get("role") in SYSTEM_ROLES
            yield _openai_message_blocks(index, message) if is_system is hoisted and isinstance(message, dict) else []


def block_groups(body: dict[str, Any], wire: str) -> Iterator[list[Block]]:
    """The blocks in the provider's order, a group at a time (the tools, the system prompt, then a group
    per message, possibly empty; OpenAI shapes walk the messages twice, system ones first). Lazy: a long
    history is never held as Block objects at once (each is tracked by the garbage collector, and
    100,000 new ones trigger a full collection of the whole heap: ~200 ms)."""
    return _anthropic_groups(body) if wire == "anthropic" else _openai_groups(body)


def prompt_blocks(body: dict[str, Any], wire: str) -> list[Block]:
    return [block for group in block_groups(body, wire) for block in group]


def anthropic_blocks(body: dict[str, Any]) -> list[Block]:
    return prompt_blocks(body, "anthropic")
