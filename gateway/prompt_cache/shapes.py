"""Where each API shape keeps what the optimizer reads and rewrites: the conversation, the system prompt,
the place for the relocation note, and which cache controls its body can carry.

| shape | conversation | system prompt | breakpoints (`cache_control`) | `prompt_cache_key` |
|---|---|---|---|---|
| openai (Chat) | `messages` | system/developer messages | yes | yes |
| anthropic | `messages` | `system` | yes | no |
| responses | `input` items | `instructions` + system/developer message items | no (no such field) | yes |
| gemini | `contents` | `systemInstruction` parts | no (implicit caching) | no (no such field) |
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from itertools import compress, repeat
from operator import is_, methodcaller
from typing import Any

from gateway.pacing import CHUNK, Steps
from gateway.prompt_cache.system_text import SYSTEM_ROLES, SystemPrompt

# Gives the caller's own copy of the history's message at an index (the optimizer copies on write).
Own = Callable[[int], Any]


def _system_indexes(messages: list[Any]) -> list[int]:
    """The positions of the system/developer messages: in C when every message is a dict (as parsed
    JSON is), not a pass of Python over the whole history on every request."""
    if all(map(is_, map(type, messages), repeat(dict))):
        roles = map(methodcaller("get", "role"), messages)
        return list(compress(range(len(messages)), map(SYSTEM_ROLES.__contains__, roles)))
    return [index for index, m in enumerate(messages) if isinstance(m, dict) and m.get("role") in SYSTEM_ROLES]


def system_indexes(messages: list[Any], head: tuple[int, list[int]] | None = None) -> list[int]:
    """`_system_indexes`; `head` (count, their system indexes): the first `count` messages' positions,
    known (the same messages as a request of the session before: only the new ones are looked at)."""
    if head is None:
        return _system_indexes(messages)
    count, known = head
    found = _system_indexes(messages[count:])
    return [*known, *(count + index for index in found)] if found else list(known)


def _role_holders(indexes: list[int], own: Own) -> Steps[list[tuple[dict[str, Any], str]]]:
    """The content of every system/developer message (at `indexes`), each message taken through `own`:
    its text may be rewritten."""
    found: list[tuple[dict[str, Any], str]] = []
    for number, index in enumerate(indexes):
        found.append((own(index), "content"))
        if number % CHUNK == CHUNK - 1:
            yield
    return found


class Shape(ABC):
    name: str
    history_field = "messages"
    marks = False  # its body carries cache_control marks (placed for Anthropic-style providers)
    cache_key = False  # its body takes prompt_cache_key / prompt_cache_retention
    system_messages = False  # system/developer messages of its history are part of the system prompt
    reply_role = "assistant"

    def messages(self, body: dict[str, Any]) -> list[Any]:
        messages = body.get(self.history_field)
        return messages if isinstance(messages, list) else []

    @abstractmethod
    def system_steps(self, body: dict[str, Any], own: Own, indexes: list[int]) -> Steps[SystemPrompt]:
        """Where the system prompt's text is; history messages that hold it (at `indexes`, from
        `system_indexes`, when `system_messages`) are taken through `own`."""

    def ends_with_reply(self, body: dict[str, Any]) -> bool:
        """No note can follow the newest turn (an assistant prefill, or nothing at all)."""
        messages = self.messages(body)
        return not messages or not isinstance(messages[-1], dict) or messages[-1].get("role") == self.reply_role

    def append_note(self, body: dict[str, Any], note: str, own: Own) -> None:
        """Add `note` as the request's last block, after the newest (user or tool) turn (a message it
        changes is taken through `own`)."""
        body[self.history_field].append({"role": "user", "content": note})


class ChatShape(Shape):
    name = "openai"
    marks = cache_key = system_messages = True

    def system_steps(self, body: dict[str, Any], own: Own, indexes: list[int]) -> Steps[SystemPrompt]:
        holders = yield from _role_holders(indexes, own)
        return SystemPrompt(holders)


class AnthropicShape(Shape):
    name = "anthropic"
    marks = True

    def system_steps(self, body: dict[str, Any], own: Own, indexes: list[int]) -> Steps[SystemPrompt]:
        yield from ()  # nothing to walk: a step generator like the others
        return SystemPrompt([(body, "system")], whole=True)

    def append_note(self, body: dict[str, Any], note: str, own: Own) -> None:
        last = own(len(body["messages"]) - 1)
        content = last.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        last["content"] = [*blocks, {"type": "text", "text": note}]


class ResponsesShape(Shape):
    """`instructions` first, then developer/system message items, as OpenAI renders them."""

    name = "responses"
    history_field = "input"
    cache_key = system_messages = True

    def system_steps(self, body: dict[str, Any], own: Own, indexes: list[int]) -> Steps[SystemPrompt]:
        holders = yield from _role_holders(indexes, own)
        instructions = [(body, "instructions")] if isinstance(body.get("instructions"), str) else []
        return SystemPrompt([*instructions, *holders])

    def ends_with_reply(self, body: dict[str, Any]) -> bool:
        return not isinstance(body.get("input"), str) and super().ends_with_reply(body)

    def append_note(self, body: dict[str, Any], note: str, own: Own) -> None:
        if isinstance(body.get("input"), str):  # a string input is one user message
            body["input"] = [{"role": "user", "content": body["input"]}]
        super().append_note(body, note, own)


class GeminiShape(Shape):
    """`systemInstruction` is a string or a content whose text parts are the prompt."""

    name = "gemini"
    history_field = "contents"
    reply_role = "model"

    def system_steps(self, body: dict[str, Any], own: Own, indexes: list[int]) -> Steps[SystemPrompt]:
        yield from ()  # nothing to walk: a step generator like the others
        system = body.get("systemInstruction")
        if isinstance(system, str):
            return SystemPrompt([(body, "systemInstruction")])
        parts = system.get("parts") if isinstance(system, dict) else None
        return SystemPrompt([(part, "text") for part in parts or [] if isinstance(part, dict) and "text" in part])

    def append_note(self, body: dict[str, Any], note: str, own: Own) -> None:
        """A text part of the newest user content (a functionResponse turn takes text beside it)."""
        last = own(len(body["contents"]) - 1)
        last["parts"] = [*(last.get("parts") or []), {"text": note}]


SHAPES: dict[str, Shape] = {
    shape.name: shape for shape in (ChatShape(), AnthropicShape(), ResponsesShape(), GeminiShape())
}
