"""Token counts of messages with tiktoken: the model's encoding where known, cl100k_base otherwise.

OpenAI models use their own encoding (o200k_base for current models, cl100k_base for the GPT-4/3.5
family). Anthropic's tokenizer is not public, and other providers differ: cl100k_base is the stated
approximation for them (within ~10-20% on English and code). Images count as a flat IMAGE_TOKENS.
Counts are memoised by content digest: clients resend the same history every turn.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import orjson

from gateway.offline import apply_offline_defaults

apply_offline_defaults()

import tiktoken  # noqa: E402  (needs TIKTOKEN_CACHE_DIR from the offline defaults)

APPROXIMATE_ENCODING = "cl100k_base"
MESSAGE_OVERHEAD = 4  # role and separators, as OpenAI documents for chat messages
IMAGE_TOKENS = 1000  # between OpenAI high detail (765 for 1024x1024) and Claude's ~1,600 at most
IMAGE_TYPES = frozenset({"image", "image_url", "input_image", "document"})
MEMO_SIZE = 50_000


@lru_cache(maxsize=8)
def _encoding(name: str) -> tiktoken.Encoding:
    return tiktoken.get_encoding(name)


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
    if value.get("type") in IMAGE_TYPES:
        return 1
    images = 0
    for key in ("text", "thinking", "name", "content", "function", "arguments"):
        if key in value:
            images += _collect(value[key], texts)
    if "input" in value:
        texts.append(orjson.dumps(value["input"]).decode())
    return images


class TokenCounter:
    """Counts tokens of messages, system prompts and tool lists in one encoding."""

    def __init__(self, encoding_name: str) -> None:
        self.name = encoding_name
        self.encoding = _encoding(encoding_name)
        self._memo: OrderedDict[bytes, int] = OrderedDict()

    def text(self, text: str) -> int:
        return len(self.encoding.encode(text, disallowed_special=()))

    def _memoised(self, kind: bytes, value: Any, count: Callable[[Any], int]) -> int:
        digest = hashlib.blake2b(kind + orjson.dumps(value), digest_size=16).digest()
        cached = self._memo.get(digest)
        if cached is None:
            cached = self._memo[digest] = count(value)
            if len(self._memo) > MEMO_SIZE:
                self._memo.popitem(last=False)
        else:
            self._memo.move_to_end(digest)
        return cached

    def _content_now(self, value: Any) -> int:
        texts: list[str] = []
        images = _collect(value, texts)
        return self.text("\n".join(texts)) + images * IMAGE_TOKENS

    def content(self, value: Any) -> int:
        """A message content, a tool result's content or a system prompt."""
        return self._memoised(b"c", value, self._content_now)

    def message(self, message: dict[str, Any]) -> int:
        def count(m: dict[str, Any]) -> int:
            calls = m.get("tool_calls") or []
            return self._content_now([m.get("role", ""), m.get("content"), *calls]) + MESSAGE_OVERHEAD

        return self._memoised(b"m", message, count)

    def messages(self, messages: list[dict[str, Any]]) -> int:
        return sum(self.message(m) for m in messages)

    def json(self, value: Any) -> int:
        """Tool definitions and the like, counted as the JSON the provider renders."""
        return self._memoised(b"j", value, lambda v: self.text(orjson.dumps(v).decode()))


_counters: dict[str, TokenCounter] = {}


def counter_for(provider: str, model: str) -> TokenCounter:
    """One counter (and memo) per encoding, shared by every request of the process."""
    name = encoding_name(provider, model)
    if name not in _counters:
        _counters[name] = TokenCounter(name)
    return _counters[name]
