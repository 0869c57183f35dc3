"""OpenAI's automatic prompt caching.

Rules simulated: prompts of 1024+ tokens are cached automatically; a hit covers the longest previously
seen prefix, counted in 128-token steps from 1024; each cached prefix expires after an idle TTL (the
in-memory default, or 24 h with `prompt_cache_retention: "24h"`), refreshed on use. The prefix is the
token sequence of the serialized request (tools, then messages in order, keys in the client's order),
so any change to an early message breaks every later prefix.
"""

from __future__ import annotations

import hashlib
import json
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gateway.sim.conversation import content_text

MIN_CACHED_TOKENS = 1024
STEP_TOKENS = 128


def _rendered_content(content: Any) -> str:
    """Text parts render as their text (a string and a one-part list are the same prompt); others as JSON."""
    if content is None or isinstance(content, str):
        return content or ""
    if all(isinstance(part, dict) and part.get("type") == "text" for part in content):
        return content_text(content)
    return json.dumps(content, ensure_ascii=False)


def render_prompt(body: dict[str, Any]) -> str:
    """The request prefix as the model would see it: tools first, then each message in order."""
    parts = []
    if body.get("tools"):
        parts.append("<|tools|>" + json.dumps(body["tools"], ensure_ascii=False))
    for message in body.get("messages", []):
        text = _rendered_content(message.get("content"))
        extras = {k: message[k] for k in ("name", "tool_calls", "tool_call_id") if message.get(k)}
        suffix = json.dumps(extras, ensure_ascii=False) if extras else ""
        parts.append(f"<|im_start|>{message.get('role')}\n{text}{suffix}<|im_end|>")
    return "\n".join(parts)


def _prefix_digests(tokens: list[int]) -> list[tuple[int, bytes]]:
    """(length, digest) for every cacheable prefix length: 1024, 1152, 1280, ... <= len(tokens)."""
    digests = []
    hasher = hashlib.blake2b(array("I", tokens[:MIN_CACHED_TOKENS]).tobytes(), digest_size=16)
    length = MIN_CACHED_TOKENS
    while length <= len(tokens):
        digests.append((length, hasher.digest()))
        hasher.update(array("I", tokens[length : length + STEP_TOKENS]).tobytes())
        length += STEP_TOKENS
    return digests


@dataclass
class OpenAICachePlan:
    """What a request reads, and the prefixes it stores once its response has started."""

    prompt_tokens: int
    cached_tokens: int
    ttl_s: float
    prefixes: list[bytes] = field(default_factory=list)


class OpenAIPromptCache:
    """Cached prefixes per namespace (API key and model), each with its own idle expiry."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._expiry: dict[tuple[str, str], dict[bytes, tuple[float, float]]] = {}

    def plan(self, namespace: tuple[str, str], tokens: list[int], ttl_s: float) -> OpenAICachePlan:
        """Find the longest cached prefix (refreshing it) and list the prefixes this prompt will store."""
        entries = self._expiry.setdefault(namespace, {})
        now = self._clock()
        digests = _prefix_digests(tokens)
        cached = 0
        for length, digest in reversed(digests):
            entry = entries.get(digest)
            if entry is not None and entry[0] > now:
                entries[digest] = (now + entry[1], entry[1])
                cached = length
                break
        return OpenAICachePlan(len(tokens), cached, ttl_s, [digest for _, digest in digests])

    def commit(self, namespace: tuple[str, str], plan: OpenAICachePlan) -> None:
        """Store the prompt's prefixes; called once the response has started (not readable before)."""
        entries = self._expiry.setdefault(namespace, {})
        now = self._clock()
        for digest in [d for d, (expires, _) in entries.items() if expires <= now]:
            del entries[digest]
        for digest in plan.prefixes:
            entries[digest] = (now + plan.ttl_s, plan.ttl_s)

    def clear(self) -> None:
        self._expiry.clear()
