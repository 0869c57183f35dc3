"""Prefix stability: hashes of a request's prefix parts, and where a request diverged from the session's
previous one, and why.

Parts are hashed without cache_control marks (moving a mark changes nothing a provider caches). Each part
also has a 'masked' hash with volatile spans replaced by their kind: when the plain hashes differ but the
masked ones agree, the cause is volatile content rather than a real edit.

Work is bounded for long histories (up to 100,000 messages): the messages' digests are kept as two byte
strings (DIGEST_SIZE bytes a message), so the record stores and loads in a few C calls and the first
differing message is found by comparing byte ranges; a message whose plain digest equals the previous
request's at the same position takes its masked digest from there (only new or changed messages are
masked: the regex is the costly part), and the loop over them is a step generator the stage runs paced.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress, repeat
from operator import attrgetter, is_, itemgetter
from typing import Any, cast

import orjson

from gateway.history import MessageFacts
from gateway.pacing import CHUNK, Steps, finish
from gateway.prompt_cache.volatile import WINDOW, mask, mask_steps

MARK = b'"cache_control"'
DIGEST_SIZE = 8


def _without_marks(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_marks(item) for item in value]
    return value


def serialize(part: Any) -> bytes:
    raw = orjson.dumps(part)
    return orjson.dumps(_without_marks(part)) if MARK in raw else raw


def raw_digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=DIGEST_SIZE).digest()


def digest(data: bytes) -> str:
    return raw_digest(data).hex()


@lru_cache(maxsize=16384)
def _masked_short(data: bytes) -> bytes:
    """History messages repeat on every turn: each is masked once."""
    return raw_digest(mask(data.decode()).encode())


def masked_steps(data: bytes) -> Steps[bytes]:
    """The raw digest of the data with its volatile spans masked (long data a window at a time)."""
    if len(data) <= WINDOW:
        return _masked_short(data)
    masked = yield from mask_steps(data.decode())
    return raw_digest(masked.encode())


@dataclass(slots=True)
class PartHash:
    plain: str
    masked: str

    @classmethod
    def of(cls, part: Any) -> PartHash:
        return finish(cls.of_steps(part))

    @classmethod
    def of_steps(cls, part: Any) -> Steps[PartHash]:
        return (yield from cls.of_data_steps(serialize(part)))

    @classmethod
    def of_data_steps(cls, data: bytes) -> Steps[PartHash]:
        """The hash of a part already serialized (`serialize`)."""
        masked = yield from masked_steps(data)
        return cls(digest(data), masked.hex())

    @classmethod
    def of_known_steps(cls, part: Any, facts: MessageFacts) -> Steps[PartHash]:
        """The hash of a part whose facts are `facts` (gateway/history/view.py `part_facts`): taken once
        per content, kept there as the messages' digests are (`_message_digests`)."""
        known = facts.prompt_cache
        if known is None:
            data = serialize(part)
            masked = yield from masked_steps(data)
            known = facts.prompt_cache = (raw_digest(data), masked)
        return cls(known[0].hex(), known[1].hex())

    def to_list(self) -> list[str]:
        return [self.plain, self.masked]


@dataclass(slots=True)
class PrefixRecord:
    model: str
    tools: PartHash
    system: PartHash
    plain: bytes = b""  # DIGEST_SIZE bytes per message, in order
    masked: bytes = b""

    @property
    def message_count(self) -> int:
        return len(self.plain) // DIGEST_SIZE

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "tools": self.tools.to_list(),
            "system": self.system.to_list(),
            "message_digests": [self.plain.hex(), self.masked.hex()],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PrefixRecord:
        if "message_digests" in data:
            plain, masked = (bytes.fromhex(str(digests)) for digests in data["message_digests"])
        else:  # written before the byte-string layout: one [plain, masked] pair of hex strings a message
            plain = bytes.fromhex("".join(str(m[0]) for m in data["messages"]))
            masked = bytes.fromhex("".join(str(m[1]) for m in data["messages"]))
        if len(plain) != len(masked) or len(plain) % DIGEST_SIZE:
            raise ValueError("malformed prefix record")
        return cls(str(data["model"]), PartHash(*data["tools"]), PartHash(*data["system"]), plain, masked)


_PROMPT_CACHE = attrgetter("prompt_cache")


def _message_digests(
    messages: list[Any],
    previous: PrefixRecord | None,
    facts: list[MessageFacts] | None,
    head: tuple[int, bytes, bytes] | None = None,
) -> Steps[tuple[bytes, bytes]]:
    """(plain, masked) digests of every message. `facts` (the messages' shared facts, gateway/history/)
    keep them per message content: a message any earlier request carried is not serialized again, and
    its digests are joined with the others' in C (no pass of Python per message of the history). Else
    a message equal to the previous request's at the same position reuses its masked digest. `head`
    (count, their plain and masked digests): the first messages' digests, known (with `facts` only:
    the session's previous request had the same first messages, gateway/prompt_cache/turns.py), so
    only the messages after them are looked at."""
    before_plain, before_masked = (previous.plain, previous.masked) if previous else (b"", b"")
    offset, head_plain, head_masked = head if head is not None and facts is not None else (0, b"", b"")
    if facts is not None and offset:
        facts = facts[offset:]
    known: list[tuple[bytes, bytes] | None] = (
        list(map(_PROMPT_CACHE, facts)) if facts is not None else [None] * len(messages)
    )
    missing = list(compress(range(len(known)), map(is_, known, repeat(None))))  # in C, as the joins below
    for number, index in enumerate(missing):
        data = serialize(messages[offset + index])
        current = raw_digest(data)
        start = (offset + index) * DIGEST_SIZE
        if before_plain[start : start + DIGEST_SIZE] == current:
            hidden = before_masked[start : start + DIGEST_SIZE]
        elif len(data) <= WINDOW:
            hidden = _masked_short(data)
        else:
            hidden = yield from masked_steps(data)
        known[index] = (current, hidden)
        if facts is not None:
            facts[index].prompt_cache = (current, hidden)
        if number % CHUNK == CHUNK - 1:
            yield
    pairs = cast(list[tuple[bytes, bytes]], known)
    plain = b"".join(map(itemgetter(0), pairs))
    masked = b"".join(map(itemgetter(1), pairs))
    return (head_plain + plain, head_masked + masked) if offset else (plain, masked)


def record_prefix_steps(
    model: str,
    tools: Any,
    system: Any,
    messages: list[Any],
    previous: PrefixRecord | None = None,
    facts: list[MessageFacts] | None = None,
    *,
    tools_hash: PartHash | None = None,
    system_hash: PartHash | None = None,
    head: tuple[int, bytes, bytes] | None = None,
) -> Steps[PrefixRecord]:
    """The request's prefix record; `previous` (the session's last record), `facts` (the facts of
    `messages`, in order), `tools_hash` and `system_hash` (the hashes of `tools` and `system`, known)
    and `head` (the first messages' digests, known: `_message_digests`) only save work."""
    if tools_hash is None:
        tools_hash = yield from PartHash.of_steps(tools)
    if system_hash is None:
        system_hash = yield from PartHash.of_steps(system)
    plain, masked = yield from _message_digests(messages, previous, facts, head)
    return PrefixRecord(model, tools_hash, system_hash, plain, masked)


def record_prefix(model: str, tools: Any, system: Any, messages: list[Any]) -> PrefixRecord:
    return finish(record_prefix_steps(model, tools, system, messages))


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


def _first_difference(before: bytes, now: bytes) -> int | None:
    """Index of the first message whose digest differs among those both records hold (None: all agree);
    a binary search over byte ranges, each compared in one C call."""
    shared = min(len(before), len(now))
    if before[:shared] == now[:shared]:
        return None
    low, high = 0, shared // DIGEST_SIZE  # the first difference lies in [low, high)
    while high - low > 1:
        middle = (low + high) // 2
        start, end = low * DIGEST_SIZE, middle * DIGEST_SIZE
        if before[start:end] == now[start:end]:
            low = middle
        else:
            high = middle
    return low


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
    index = _first_difference(previous.plain, current.plain)
    if index is not None:
        start, end = index * DIGEST_SIZE, (index + 1) * DIGEST_SIZE
        cause = "volatile_content" if previous.masked[start:end] == current.masked[start:end] else "message_edited"
        return PrefixBreak(cause, f"messages.{index}", index)
    if current.message_count < previous.message_count:
        shared = current.message_count
        return PrefixBreak("history_truncated", f"messages.{shared}", shared)
    return PrefixBreak("none")
