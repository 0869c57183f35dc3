"""Token counts of prompt blocks, only as far as the cache minimum needs them."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from gateway.offline import apply_offline_defaults
from gateway.prompt_cache.layout import Block

apply_offline_defaults()

import tiktoken  # noqa: E402  (needs TIKTOKEN_CACHE_DIR from the offline defaults)

# Anthropic's tokenizer is not public; cl100k_base is the usual approximation.
ENCODING = "cl100k_base"


@lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING)


@lru_cache(maxsize=16384)
def count_tokens(text: str) -> int:
    """Blocks repeat on every turn of a session, so each is encoded once."""
    return len(_encoding().encode(text, disallowed_special=()))


def prefix_tokens(blocks: Sequence[Block], enough: int) -> list[int]:
    """Tokens of the prefix ending at each block; counting stops once `enough` is reached (later
    prefixes are only known to be at least that long, which is all a minimum check needs)."""
    ends: list[int] = []
    total = 0
    for block in blocks:
        if total < enough:
            total += count_tokens(block.text())
        ends.append(total)
    return ends
