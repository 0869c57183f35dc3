"""What a request's tokens can be at most, from its messages' shared facts, without counting them.

Agents resend the whole history each turn: its messages were counted on earlier turns (the counts are
kept in their facts, gateway/history/) and only the new turn is not. Most requests are far under every
threshold, which the known counts plus the new turn's bytes already show: the engine counts exactly only
once that bound reaches a threshold, so a turn's counting work follows its new messages, not the history.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from gateway.compaction.layout import Layout, Message
from gateway.compaction.results import message_results
from gateway.compaction.tokens import IMAGE_TOKENS, MESSAGE_OVERHEAD, TokenCounter, message_bound
from gateway.history import MessageFacts
from gateway.pacing import CHUNK, Steps


def surely_small(layout: Layout, body: dict[str, Any], facts: Sequence[MessageFacts], limit: int) -> Steps[bool]:
    """Whether the body's bytes (plus each message's overhead and a flat count per image) are under `limit`:
    byte-level BPE never makes more tokens than bytes, so such a request can have nothing recorded or to
    do. The messages' bytes are known from their facts: the body is serialized only when they leave it
    possible, so a long history costs no serialization here."""
    if isinstance(body.get(layout.history_field), list):  # the messages are parts of the body's JSON
        lower = len(facts) - 1  # the commas between them
        for start in range(0, len(facts), CHUNK):
            lower += sum(f.size + MESSAGE_OVERHEAD for f in facts[start : start + CHUNK])
            if lower >= limit:
                return False
            yield
    data = orjson.dumps(body)
    bound = len(data) + MESSAGE_OVERHEAD * len(facts) + IMAGE_TOKENS * data.count(b'"type":"image')
    return bound < limit


@dataclass(slots=True)
class Counts:
    """A request's messages' tokens as far as their facts know them."""

    tokens: list[int]  # each message's count in the counter's encoding where known, else its bound
    exact: bool  # every one was known
    largest: int  # bytes of its largest message: no tool result is larger


def counts_or_bounds(
    counter: TokenCounter, layout: Layout, messages: list[Message], facts: Sequence[MessageFacts]
) -> Steps[Counts]:
    """What the messages' facts know of their tokens (tokens.message_bound where they know nothing)."""
    found = Counts([], True, 0)
    for start in range(0, len(messages), CHUNK):
        for index in range(start, min(start + CHUNK, len(messages))):
            known = facts[index]
            count = known.tokens.get(counter.name)
            if count is None:
                found.exact = False
                count = message_bound(known.size, message_results(layout, messages[index], known).images)
            found.tokens.append(count)
            found.largest = max(found.largest, known.size)
        yield
    return found
