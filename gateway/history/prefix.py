"""A session's previous request body, so that the messages a request repeats get their facts from bytes.

An agent resends its whole history each turn: finding each message's facts (gateway/history/facts.py)
serializes and hashes all of it, O(history) per request. The request's raw body mostly starts with the
previous body of its session byte for byte, and a message whose bytes lie wholly inside that common
prefix is the previous request's message at the same index (a JSON value is read from its bytes alone),
so it has the same facts: one C-speed prefix comparison replaces their serialization and hashing.

Each message's byte span is found without a JSON scanner: the gateway serializes a new message anyway
(orjson, compact) to key its facts, and clients send compact JSON (httpx, the OpenAI and Anthropic SDKs,
JSON.stringify), so a message's bytes are its serialization, at the offset where the array's grammar puts
the next element (after the previous one, a comma and white space). That the array is the body's history
field (not a nested copy of it, not a duplicate key the parser dropped) is proved once per body shape by
parsing the body with the array replaced by 0; a later body with the same bytes around the array has the
same shape. Those bytes are also every other top-level value of the body (its tools, its system prompt):
a body that follows its session's previous one has the same values there, so the facts the stages took
of them (`Body.parts`) hold for it too, again without a serialization. Anything else (another formatting,
a body shape not proved, an edited history) is `None`: the caller takes the ordinary path. Memory: the
previous body per session, bounded per tenant and in all.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from gateway.bounded import Caps, TenantLRU
from gateway.history.facts import MessageFacts

Lookup = Callable[[Any], tuple[bytes, MessageFacts]]  # a message's serialization and facts
WHITE = b" \t\n\r"
_COMMA = re.compile(rb"[ \t\n\r]*,[ \t\n\r]*")
_CLOSE = re.compile(rb"[ \t\n\r]*\]")
BODY_BYTES = 32 << 20  # bodies kept at most, in all (a 100-message SWE-bench body: ~120 kB); a quarter per tenant
CAPS = Caps(max_entries=4_000, max_bytes=BODY_BYTES, max_entries_per_tenant=1_000, max_bytes_per_tenant=BODY_BYTES // 4)
FACT_BYTES = 600  # a message's facts, counted whole: they are the memo's, but kept alive here too


@dataclass(slots=True, eq=False)
class Body:
    """A request body whose history array was located and proved: the field's value is raw[start:close]."""

    raw: bytes
    start: int  # offset of the array's '['
    ends: list[int]  # offset just past each message
    close: int  # offset just past the array's ']'
    facts: list[MessageFacts]
    # The facts of the body's other top-level values, by field (gateway/history/view.py `part_facts`): the
    # next body keeps them while the bytes around its history are these (so are those values).
    parts: dict[str, MessageFacts] = dataclasses.field(default_factory=dict)


class SessionBodies:
    def __init__(self, caps: Caps = CAPS) -> None:
        self._bodies: TenantLRU[Body] = TenantLRU(caps)

    def __len__(self) -> int:
        return len(self._bodies)

    def __contains__(self, session: object) -> bool:
        """Whether a body of `session` (tenant, id) is kept."""
        return isinstance(session, tuple) and session_key(*session) in self._bodies

    def body(
        self, tenant: str, session: str, field: str, raw: bytes, messages: Sequence[Any], lookup: Lookup
    ) -> Body | None:
        """`raw` located: the facts of `messages` (the history `field` parsed from it), reusing the session's
        previous body for the messages it repeats, and for its other values when the bytes around the
        history are the same; None when the bytes do not prove which message is which."""
        key = session_key(tenant, session)
        previous = self._bodies.get(key)
        body = _next_body(previous, raw, messages, lookup) if previous is not None else None
        if body is None:
            body = _first_body(raw, field, messages, lookup)
            if body is None:
                self._bodies.pop(key)
                return None
        self._bodies.put(key, tenant, body, len(raw) + FACT_BYTES * len(body.ends))
        return body


def session_key(tenant: str, session: str) -> str:
    """A session's key in the per-session memories of this package (ids are the caller's: the tenant first)."""
    return f"{tenant}\x00{session}"


def _next_body(previous: Body, raw: bytes, messages: Sequence[Any], lookup: Lookup) -> Body | None:
    """The body after `previous` in its session: its repeated messages' facts are the previous ones."""
    ends = previous.ends
    kept = _repeated(previous, raw, min(len(ends), len(messages)))
    if kept == 0:
        return None
    facts, new_ends = previous.facts[:kept], ends[:kept]
    if not _append(raw, new_ends, facts, messages[kept:], lookup):
        return None
    close = _closed(raw, new_ends[-1])
    # The bytes around the array are the previous body's: the same, proved, shape.
    if close is None or raw[close:] != previous.raw[previous.close :]:
        return None
    return Body(raw, previous.start, new_ends, close, facts, previous.parts)


def _repeated(previous: Body, raw: bytes, most: int) -> int:
    """How many of the previous body's first `most` messages lie wholly inside the common prefix."""
    old, ends = previous.raw, previous.ends
    if most and raw.startswith(old[: ends[most - 1]]):  # the usual case: all of them
        return most
    low, high = 0, most - 1  # the prefix comparison is monotonic in the offset: binary search
    while low < high:
        middle = (low + high + 1) // 2
        if raw.startswith(old[: ends[middle - 1]]):
            low = middle
        else:
            high = middle - 1
    return low


def _first_body(raw: bytes, field: str, messages: Sequence[Any], lookup: Lookup) -> Body | None:
    """Locate and prove the history array of a body with no usable previous one."""
    if not messages:
        return None
    data, facts = lookup(messages[0])
    at = raw.find(data)
    start = raw.rfind(b"[", 0, at)
    if at < 0 or start < 0 or raw[start + 1 : at].strip(WHITE):
        return None
    ends, found = [at + len(data)], [facts]
    if not _append(raw, ends, found, messages[1:], lookup):
        return None
    close = _closed(raw, ends[-1])
    if close is None or not _is_field(raw, start, close, field):
        return None
    return Body(raw, start, ends, close, found)


def _append(raw: bytes, ends: list[int], facts: list[MessageFacts], messages: Sequence[Any], lookup: Lookup) -> bool:
    """Follow the array past `ends[-1]` over `messages`, each its serialization after a comma: their
    ends and facts appended; False when the bytes are not so."""
    for message in messages:
        data, found = lookup(message)
        comma = _COMMA.match(raw, ends[-1])
        if comma is None or not raw.startswith(data, comma.end()):
            return False
        ends.append(comma.end() + len(data))
        facts.append(found)
    return True


def _closed(raw: bytes, end: int) -> int | None:
    close = _CLOSE.match(raw, end)
    return close.end() if close is not None else None


def _is_field(raw: bytes, start: int, close: int, field: str) -> bool:
    """Whether raw[start:close] is the value the parser gives the body's `field`: with it replaced by 0,
    the field reads 0 (a nested copy or a duplicate key the parser dropped leaves the field as it was)."""
    try:
        probe = orjson.loads(raw[:start] + b"0" + raw[close:])
    except orjson.JSONDecodeError:
        return False
    value = probe.get(field) if isinstance(probe, dict) else None
    return type(value) is int and value == 0
