"""Prefix stability: hashes of a request's prefix parts, and where a request diverged from the session's
previous one, and why.

Parts are hashed without cache_control marks (moving a mark changes nothing a provider caches). Each part
also has a 'masked' hash with volatile spans replaced by their kind: when the plain hashes differ but the
masked ones agree, the cause is volatile content rather than a real edit.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import orjson

from gateway.prompt_cache.volatile import mask

MARK = b'"cache_control"'


def _without_marks(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_marks(item) for item in value]
    return value


def serialize(part: Any) -> bytes:
    raw = orjson.dumps(part)
    return orjson.dumps(_without_marks(part)) if MARK in raw else raw


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=8).hexdigest()


@lru_cache(maxsize=16384)
def masked_digest(data: bytes) -> str:
    """History messages repeat on every turn: each is masked once."""
    return digest(mask(data.decode()).encode())


@dataclass(slots=True)
class PartHash:
    plain: str
    masked: str

    @classmethod
    def of(cls, part: Any) -> PartHash:
        data = serialize(part)
        return cls(digest(data), masked_digest(data))

    def to_list(self) -> list[str]:
        return [self.plain, self.masked]


@dataclass(slots=True)
class PrefixRecord:
    model: str
    tools: PartHash
    system: PartHash
    messages: list[PartHash] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "tools": self.tools.to_list(),
            "system": self.system.to_list(),
            "messages": [m.to_list() for m in self.messages],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PrefixRecord:
        return cls(
            model=str(data["model"]),
            tools=PartHash(*data["tools"]),
            system=PartHash(*data["system"]),
            messages=[PartHash(*m) for m in data["messages"]],
        )


def record_prefix(model: str, tools: Any, system: Any, messages: list[Any]) -> PrefixRecord:
    return PrefixRecord(model, PartHash.of(tools), PartHash.of(system), [PartHash.of(m) for m in messages])


@dataclass(frozen=True, slots=True)
class PrefixBreak:
    cause: str  # none | first_request | no_session | model_changed | tools_changed | system_changed
    #             | message_edited | history_truncated | volatile_content
    where: str | None = None  # model | tools | system | messages.<i>
    message_index: int | None = None  # first message that differs (None: all shared messages match)

    @property
    def is_break(self) -> bool:
        return self.cause not in ("none", "first_request", "no_session")

    def header(self) -> str:
        return f"{self.cause}; at={self.where}" if self.where else self.cause


def _changed(previous: PartHash, current: PartHash, cause: str) -> str | None:
    if previous.plain == current.plain:
        return None
    return "volatile_content" if previous.masked == current.masked else cause


def diagnose(previous: PrefixRecord | None, current: PrefixRecord) -> PrefixBreak:
    """The first position where `current` stops repeating `previous`, and why."""
    if previous is None:
        return PrefixBreak("first_request")
    if previous.model != current.model:
        return PrefixBreak("model_changed", "model", 0)
    for name in ("tools", "system"):
        cause = _changed(getattr(previous, name), getattr(current, name), f"{name}_changed")
        if cause:
            return PrefixBreak(cause, name, 0)
    for index, (before, now) in enumerate(zip(previous.messages, current.messages, strict=False)):
        cause = _changed(before, now, "message_edited")
        if cause:
            return PrefixBreak(cause, f"messages.{index}", index)
    if len(current.messages) < len(previous.messages):
        shared = len(current.messages)
        return PrefixBreak("history_truncated", f"messages.{shared}", shared)
    return PrefixBreak("none")
