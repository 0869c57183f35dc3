"""The provider's count of a session's last turn, as a bound on its next turn's tokens (issue 28).

An agent's next request is its last one plus the model's reply and the new results. The provider said
how many input tokens the last one was (its usage): the count the context window is about. That count,
plus a bound on each message the session added since (its count where known, else its bytes), bounds the
next request without counting its history. Without it, a history past the trigger's byte bound (a byte
is at most a token; agent JSON is about 0.24 tokens a byte) has every message counted once, most of
compaction's CPU on long sessions that are nowhere near the trigger.

Where the bounds of the messages since (bytes: ~4 times their tokens) take it past PROVIDER_SHARE, those
messages are counted first, the new turn's work, and their counts decide (engine.py
`_provider_shows_under`). The engine still counts the history exactly where this bound comes within
PROVIDER_SHARE of the trigger: below it, its own count could pass the trigger only by running more than
1/PROVIDER_SHARE times the provider's, so decisions near the trigger stay those of its own count. A count is
used only for the history it was taken for (the session's totals carry it while the history extends that
one) and only while the request's tools and system prompt count what they did then. A count far below the
history's size is not believed (a server that reports a token per message, or none of its prompt): under one
token per PLAUSIBLE_BYTES_A_TOKEN bytes of messages, text of any language and code counts more (runs of
whitespace can count less: those histories are counted, as before).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

PROVIDER_SHARE = 0.8
PLAUSIBLE_BYTES_A_TOKEN = 16


@dataclass(frozen=True, slots=True)
class ProviderCount:
    messages: int  # the length of the history the provider counted
    fixed: int  # that request's tools and system prompt, in the engine's count: another value voids it
    tokens: int  # the provider's input tokens for that request


def shows_under(seen: ProviderCount | None, counts: Sequence[int], fixed: int, limit: int) -> bool:
    """Whether the provider's count of the last turn, with `counts` (each message's count or bound) of the
    messages since, is under PROVIDER_SHARE of `limit`. Work: the messages since, not the history."""
    if seen is None or seen.fixed != fixed or seen.messages > len(counts):
        return False
    return seen.tokens + sum(counts[seen.messages :]) <= PROVIDER_SHARE * limit


def plausible(tokens: int, history_bytes: int) -> bool:
    """Whether a provider's count of a history of `history_bytes` bytes is believed."""
    return tokens * PLAUSIBLE_BYTES_A_TOKEN >= history_bytes
