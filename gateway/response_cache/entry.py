"""One cached answer and its byte format.

An entry is `rc1:` + a 16-hex-digit checksum of the payload + `:` + the JSON payload. Decoding checks
the checksum, the shape, and that the entry names the key it is read under, so a truncated, edited or
misplaced value raises CorruptEntry (the cache drops it) instead of being served.
"""

from __future__ import annotations

import base64
import hashlib
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

MAGIC = b"rc1:"
_CHECKSUM_LEN = 16
# What a complete answer of each API holds; anything else is not a response we stored.
RESPONSE_LIST_FIELD = {"openai": "choices", "anthropic": "content", "responses": "output", "gemini": "candidates"}


class CorruptEntry(Exception):
    """A stored value that cannot be trusted."""


@dataclass(frozen=True, slots=True)
class Entry:
    key: str  # the storage key it was written under
    wire: str
    response: dict[str, Any]
    cost_usd: float  # what the original answer cost: saved by every hit
    created: float  # unix seconds
    expires: float  # unix seconds
    prompt: str | None = None  # semantic entries: the last user turn it answered
    scope: str | None = None  # semantic entries: the index scope
    vector: np.ndarray | None = None  # semantic entries on a shared backend (replicas rebuild from it)

    def age_s(self, now: float | None = None) -> float:
        return max((now or time.time()) - self.created, 0.0)

    def expired(self, now: float | None = None) -> bool:
        return (now or time.time()) >= self.expires


def _checksum(payload: bytes) -> bytes:
    return hashlib.blake2b(payload, digest_size=_CHECKSUM_LEN // 2).hexdigest().encode()


def encode_vector(vector: np.ndarray) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()


def decode_vector(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text, validate=True), dtype="<f4").astype(np.float32)


def encode_entry(entry: Entry) -> bytes:
    data: dict[str, Any] = {
        "key": entry.key,
        "wire": entry.wire,
        "response": entry.response,
        "cost": entry.cost_usd,
        "created": entry.created,
        "expires": entry.expires,
    }
    if entry.prompt is not None:
        data.update(prompt=entry.prompt, scope=entry.scope)
    if entry.vector is not None:
        data["vector"] = encode_vector(entry.vector)
    payload = orjson.dumps(data)
    return MAGIC + _checksum(payload) + b":" + payload


def decode_entry(raw: bytes, key: str) -> Entry:
    """The entry stored under `key`, or CorruptEntry."""
    head = len(MAGIC) + _CHECKSUM_LEN + 1
    payload = raw[head:]
    if not raw.startswith(MAGIC) or raw[head - 1 : head] != b":" or raw[len(MAGIC) : head - 1] != _checksum(payload):
        raise CorruptEntry("bad header or checksum")
    try:
        data = orjson.loads(payload)
        wire, response = data["wire"], data["response"]
        if data["key"] != key or not isinstance(response, dict):
            raise CorruptEntry("entry does not belong to this key")
        if not isinstance(response.get(RESPONSE_LIST_FIELD[wire]), list):
            raise CorruptEntry("not a complete response")
        vector = decode_vector(data["vector"]) if "vector" in data else None
        return Entry(
            key=key,
            wire=wire,
            response=response,
            cost_usd=float(data["cost"]),
            created=float(data["created"]),
            expires=float(data["expires"]),
            prompt=data.get("prompt"),
            scope=data.get("scope"),
            vector=vector,
        )
    except (KeyError, TypeError, ValueError, orjson.JSONDecodeError) as exc:
        raise CorruptEntry(f"unreadable entry: {type(exc).__name__}") from exc
