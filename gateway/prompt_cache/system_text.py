"""The system prompt's text fields, wherever an API shape keeps them (gateway/prompt_cache/shapes.py),
for volatile detection and relocation."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

SYSTEM_ROLES = ("system", "developer")
TEXT_PARTS = ("text", "input_text")  # Chat/Messages text parts, Responses input_text parts


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
            if isinstance(part, dict) and part.get("type") in TEXT_PARTS and isinstance(part.get("text"), str):
                yield TextField(part, "text")


@dataclass(frozen=True, slots=True)
class SystemPrompt:
    """Where a body keeps its system prompt: (dict, key) pairs whose values hold its text (a string or a
    list of text parts), found once per request. `whole`: the prompt is one body field, whose value is
    the prompt as hashed (Anthropic's `system`); else the list of the holders' values is."""

    holders: list[tuple[dict[str, Any], str]]
    whole: bool = False

    def fields(self) -> list[TextField]:
        return [field for holder, key in self.holders for field in _fields(holder, key)]

    def part(self) -> Any:
        """The system prompt as one hashable value (read when asked: relocation rewrites the text)."""
        values = [holder.get(key) for holder, key in self.holders]
        if self.whole:
            return values[0] if values else None
        return values
