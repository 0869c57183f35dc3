"""Token counts of prompt blocks, only as far as the cache minimum needs them."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from gateway.offline import apply_offline_defaults
from gateway.prompt_cache.layout import Block
from gateway.tokenizer import count_text

apply_offline_defaults()

import tiktoken  # noqa: E402  (needs TIKTOKEN_CACHE_DIR from the offline defaults)

# Anthropic's tokenizer is not public; cl100k_base is the usual approximation.
ENCODING = "cl100k_base"
# Encoding runs ~0.1-1 us a character: a longer block is counted piece by piece only until the count
# passes what the minimum still needs (the rest only adds tokens). That bounds the work on the event
# loop even for text of many characters a token (no token is longer than 128 characters).
LARGE_BLOCK_CHARS = 65_536


@lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING)


@lru_cache(maxsize=16384)
def count_tokens(text: str) -> int:
    """Blocks repeat on every turn of a session, so each is encoded once."""
    return count_text(_encoding(), text)


def _block_tokens(text: str, needed: int) -> int:
    return count_text(_encoding(), text, enough=needed) if len(text) > LARGE_BLOCK_CHARS else count_tokens(text)


@dataclass(slots=True)
class PrefixTokens:
    """Tokens of the prefix ending at each block, fed one block at a time; counting stops once `enough`
    is reached (later prefixes are only known to be at least that long, which is all a minimum check
    needs).

    Blocks are encoded only once their prefix could reach `enough`: before that, the prefix's UTF-8 size
    stands in for its count (every token is at least one byte, so a prefix under `enough` bytes is under
    `enough` tokens: the same answer to the minimum check). Most agent requests are below the minimum,
    or reach it in their first blocks."""

    enough: int
    total: int = 0  # tokens of the prefix so far (its byte size while `bounded`)
    ends: list[int] = field(default_factory=list)
    bounded: bool = True
    _texts: list[str] = field(default_factory=list)  # the bounded blocks, encoded if the bound gives out

    def copy(self) -> PrefixTokens:
        """An independent copy (its lists copied: the texts in them are immutable)."""
        return PrefixTokens(self.enough, self.total, list(self.ends), self.bounded, list(self._texts))

    def held_chars(self) -> int:
        """Characters of the texts held while bounded."""
        return sum(map(len, self._texts))

    @property
    def reached(self) -> bool:
        """The prefix has reached `enough`: later blocks need no text (`add_reached`)."""
        return self.total >= self.enough

    def add_reached(self, count: int) -> None:
        """`count` blocks after `enough` was reached (each prefix is only known to be at least that)."""
        self.ends.extend([self.total] * count)

    def add(self, block: Block) -> None:
        if self.total < self.enough:
            text = block.text()
            if self.bounded:
                # Characters never outnumber bytes: a block as long as `enough` ends the bound unencoded.
                size = self.total + (len(text) if len(text) >= self.enough else len(text.encode()))
                if size < self.enough:
                    self.total = size
                    self._texts.append(text)
                    self.ends.append(size)
                    return
                self.bounded = False  # earlier ends stay: their bound is under `enough`, as their count
                self.total = sum(count_tokens(earlier) for earlier in self._texts)
                self._texts.clear()
            self.total += _block_tokens(text, self.enough - self.total)
        self.ends.append(self.total)
