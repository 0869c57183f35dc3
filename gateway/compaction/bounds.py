"""What a request's tokens can be at most, from its messages' shared facts, without counting them.

Agents resend the whole history each turn: its messages were counted on earlier turns (the counts are
kept in their facts, gateway/history/) and only the new turn is not. Most requests are far under every
threshold, which the known counts plus the new turn's bytes already show: the engine counts exactly only
once that bound reaches a threshold, so a turn's counting work follows its new messages, not the history.
The sums themselves are kept per session (totals.py): a request adds only its new messages to them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from gateway.compaction.layout import Layout
from gateway.compaction.tokens import IMAGE_TOKENS, MESSAGE_OVERHEAD
from gateway.compaction.totals import Totals
from gateway.history import MessageFacts
from gateway.history.facts import image_marks
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
    return serialized_small(body, len(facts), limit)


def serialized_small(body: dict[str, Any], messages: int, limit: int) -> bool:
    """surely_small's answer once the messages' bytes leave it possible: from the body's serialization."""
    data = orjson.dumps(body)
    bound = len(data) + MESSAGE_OVERHEAD * messages + IMAGE_TOKENS * image_marks(data)
    return bound < limit


def assembled_small(body: dict[str, Any], field: str, totals: Totals, limit: int) -> bool:
    """serialized_small's answer for a body whose `field` holds the messages of `totals`: their bytes and
    image marks are the totals' (each message's serialization, taken once per content), so only the rest
    of the body is serialized (the history's bytes would be most of it, on every request)."""
    rest = orjson.dumps({**body, field: []})  # the same keys in the same order: "field":[] in its place
    messages = len(totals.facts)
    data = len(rest) + max(totals.size - MESSAGE_OVERHEAD * messages + messages - 1, 0)
    bound = data + MESSAGE_OVERHEAD * messages + IMAGE_TOKENS * (image_marks(rest) + totals.marks)
    return bound < limit
