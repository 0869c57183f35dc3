"""Token counts of messages with tiktoken: the model's encoding where known, cl100k_base otherwise.

OpenAI models use their own encoding (o200k_base for current models, cl100k_base for the GPT-4/3.5
family). Anthropic's tokenizer is not public, and other providers differ: cl100k_base is the stated
approximation for them (within ~10-20% on English and code). Images count as a flat IMAGE_TOKENS.
Counts are memoised by content digest: clients resend the same history every turn. A request's counts
are taken in short paced slices (`count_messages`), and messages larger than LARGE_MESSAGE_BYTES are
counted in a worker thread (tiktoken encodes without the GIL): one 8 MB message would otherwise hold
the event loop for half a second. Text is encoded in bounded pieces (gateway/tokenizer.py), so the work
stays linear in its size even for a hostile run of letters.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import orjson

from gateway.history import HistoryView, MessageFacts
from gateway.history.facts import IMAGE_TYPES
from gateway.offline import apply_offline_defaults
from gateway.pacing import CHUNK, Pacer, Steps, finish_paced
from gateway.tokenizer import count_text

apply_offline_defaults()

import tiktoken  # noqa: E402  (needs TIKTOKEN_CACHE_DIR from the offline defaults)

APPROXIMATE_ENCODING = "cl100k_base"
MESSAGE_OVERHEAD = 4  # role and separators, as OpenAI documents for chat messages
IMAGE_TOKENS = 1000  # between OpenAI high detail (765 for 1024x1024) and Claude's ~1,600 at most
# Keys whose values are read as text (recursively), and keys whose values are objects the provider renders
# as JSON: Chat and Messages fields, Responses items (`output`, `summary`), Gemini parts.
TEXT_KEYS = (
    *("text", "thinking", "name", "content", "function", "arguments"),
    *("output", "summary", "parts", "functionCall", "functionResponse"),
)
JSON_KEYS = ("input", "args", "response")
# Message fields counted besides role and content (Responses items, Gemini contents).
MESSAGE_FIELDS = ("tool_calls", "parts", "output", "arguments", "name", "summary")
MEMO_SIZE = 50_000
LARGE_MESSAGE_BYTES = 64 * 1024  # ~5 ms of encoding: larger messages are counted off the event loop
# How a body part (gateway/history/view.py `part_facts`) is counted: a tool list as the JSON the provider
# renders, a system prompt as message content.
JSON, CONTENT = "json", "content"


@lru_cache(maxsize=8)
def _encoding(name: str) -> tiktoken.Encoding:
    return tiktoken.get_encoding(name)


@lru_cache(maxsize=256)  # looked up on every request (tiktoken matches the model's name by prefixes)
def encoding_name(provider: str, model: str) -> str:
    if provider in ("openai", "azure"):
        try:
            return tiktoken.encoding_name_for_model(model)
        except KeyError:
            return "o200k_base"
    return APPROXIMATE_ENCODING


def _collect(value: Any, texts: list[str]) -> int:
    """Append the readable text of a content value (text, thinking, tool input...); returns images seen."""
    if isinstance(value, str):
        texts.append(value)
        return 0
    if isinstance(value, list):
        return sum(_collect(item, texts) for item in value)
    if not isinstance(value, dict):
        return 0
    if isinstance(kind := value.get("type"), str) and kind in IMAGE_TYPES:  # callers send any JSON here
        return 1
    images = 0
    for key in TEXT_KEYS:
        if key in value:
            images += _collect(value[key], texts)
    for key in JSON_KEYS:
        if key in value:
            texts.append(orjson.dumps(value[key]).decode())
    return images


def message_bound(size: int, images: int) -> int:
    """More tokens than a message can count, from its JSON bytes and image blocks: byte-level BPE never
    makes more tokens than bytes, and the text counted is a part of the JSON (images count flat)."""
    return size + MESSAGE_OVERHEAD + IMAGE_TOKENS * images


class TokenCounter:
    """Counts tokens of messages, system prompts and tool lists in one encoding."""

    def __init__(self, encoding_name: str) -> None:
        self.name = encoding_name
        self.encoding = _encoding(encoding_name)
        self._memo: OrderedDict[bytes, int] = OrderedDict()

    def text(self, text: str) -> int:
        return count_text(self.encoding, text)

    @staticmethod
    def _key(kind: bytes, value: Any) -> tuple[bytes, int]:
        """The memo key of a value, and its size in bytes."""
        data = orjson.dumps(value)
        return hashlib.blake2b(kind + data, digest_size=16).digest(), len(data)

    def _cached(self, digest: bytes) -> int | None:
        cached = self._memo.get(digest)
        if cached is not None:
            self._memo.move_to_end(digest)
        return cached

    def _remember(self, digest: bytes, count: int) -> int:
        self._memo[digest] = count
        if len(self._memo) > MEMO_SIZE:
            self._memo.popitem(last=False)
        return count

    def _memoised(self, kind: bytes, value: Any, count: Callable[[Any], int]) -> int:
        digest, _ = self._key(kind, value)
        cached = self._cached(digest)
        return self._remember(digest, count(value)) if cached is None else cached

    async def _memoised_off_loop(self, kind: bytes, value: Any, count: Callable[[Any], int]) -> int:
        """Like `_memoised`, but a large value is counted in a worker thread (the memo stays on the loop)."""
        digest, size = self._key(kind, value)
        cached = self._cached(digest)
        if cached is not None:
            return cached
        found = await asyncio.to_thread(count, value) if size > LARGE_MESSAGE_BYTES else count(value)
        return self._remember(digest, found)

    def content_now(self, value: Any) -> int:
        """`content` without the memo (for callers that keep counts themselves)."""
        texts: list[str] = []
        images = _collect(value, texts)
        return self.text("\n".join(texts)) + images * IMAGE_TOKENS

    def content(self, value: Any) -> int:
        """A message content, a tool result's content or a system prompt."""
        return self._memoised(b"c", value, self.content_now)

    async def content_off_loop(self, value: Any) -> int:
        """`content`, counted off the event loop when large."""
        return await self._memoised_off_loop(b"c", value, self.content_now)

    async def message_off_loop(self, message: dict[str, Any]) -> int:
        """`message`, counted off the event loop when large."""
        return await self._memoised_off_loop(b"m", message, self._message_now)

    async def json_off_loop(self, value: Any) -> int:
        """`json`, counted off the event loop when large."""
        return await self._memoised_off_loop(b"j", value, self._json_now)

    async def part_off_loop(self, facts: MessageFacts, how: str, value: Any) -> int:
        """A body part's tokens (`how`: JSON for a tool list, CONTENT for a system prompt), kept in its
        facts (gateway/history/view.py `part_facts`), counted off the event loop when large."""
        key = f"{how}:{self.name}"
        known = facts.tokens.get(key)
        if known is None:
            count = self._json_now if how == JSON else self.content_now
            found = await asyncio.to_thread(count, value) if facts.size > LARGE_MESSAGE_BYTES else count(value)
            known = facts.tokens.setdefault(key, found)
        return known

    def _message_now(self, m: dict[str, Any]) -> int:
        fields = [m[key] for key in MESSAGE_FIELDS if m.get(key)]
        return self.content_now([m.get("role", ""), m.get("content"), *fields]) + MESSAGE_OVERHEAD

    def message(self, message: dict[str, Any]) -> int:
        return self._memoised(b"m", message, self._message_now)

    async def count_messages(
        self, messages: list[dict[str, Any]], pacer: Pacer, known: list[MessageFacts] | None = None
    ) -> list[int]:
        """Tokens of every message: paced on the event loop, the large ones counted in a worker thread.
        Counts are kept in the message facts (gateway/history/), per encoding, so a message is counted
        once whatever request carries it; `known`: the messages' facts, from the request's view (its
        digests are shared with the other stages). The facts are only touched here, on the loop: the
        thread counts, the loop remembers."""
        if known is None:
            known = await finish_paced(HistoryView().facts_steps(messages), pacer)
        counts: list[int] = []
        large: list[tuple[int, MessageFacts, dict[str, Any]]] = []
        for index, message in enumerate(messages):
            facts = known[index]
            cached = facts.tokens.get(self.name)
            if cached is not None:
                counts.append(cached)
                if index % CHUNK == CHUNK - 1:
                    await pacer.tick()
            elif facts.size > LARGE_MESSAGE_BYTES:
                counts.append(0)  # filled in below
                large.append((index, facts, message))
            else:
                counts.append(facts.tokens.setdefault(self.name, self._message_now(message)))
                await pacer.tick()  # encoded on the loop: the slice may be used up
        if large:
            found = await asyncio.to_thread(lambda: [self._message_now(m) for _, _, m in large])
            for (index, facts, _), count in zip(large, found, strict=True):
                counts[index] = facts.tokens.setdefault(self.name, count)
        return counts

    def messages(self, messages: list[dict[str, Any]]) -> int:
        return sum(self.message(m) for m in messages)

    def each_message(self, messages: list[dict[str, Any]]) -> Steps[list[int]]:
        """Tokens of every message, as steps (pausing every CHUNK messages): see compaction/pacing.py."""
        counts: list[int] = []
        for start in range(0, len(messages), CHUNK):
            counts.extend(self.message(m) for m in messages[start : start + CHUNK])
            yield
        return counts

    def json(self, value: Any) -> int:
        """Tool definitions and the like, counted as the JSON the provider renders."""
        return self._memoised(b"j", value, self._json_now)

    def _json_now(self, value: Any) -> int:
        return self.text(orjson.dumps(value).decode())


_counters: dict[str, TokenCounter] = {}


def counter_for(provider: str, model: str) -> TokenCounter:
    """One counter (and memo) per encoding, shared by every request of the process."""
    name = encoding_name(provider, model)
    if name not in _counters:
        _counters[name] = TokenCounter(name)
    return _counters[name]
