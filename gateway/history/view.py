"""One request's view of its history: each message serialized and looked up in the fact memo once.

Stages ask for the facts of the messages they hold (`facts_steps`). A message object already looked
up by this request is answered from the view without serializing it again; the view keeps a reference
to each message it answered for, so an id is never reused while the request lives. Stages must not
change a message in place after asking for its facts (none does: compaction builds new messages, the
prompt cache copies a message before changing it), nor the body's messages before (`RawHistory`).

A request of a session whose raw body is known (`RawHistory`) gets the facts of the messages it repeats
from the session's previous body (gateway/history/prefix.py) instead of serializing and hashing them.

The body's other top-level values (tools, a system prompt: an agent CLI's are tens of kilobytes, the same
on every request) have facts too (`part_facts`), so that each stage derives what it needs of them once
per content rather than once per request; the session's previous body vouches for them when the bytes
around its history are the same (no serialization at all).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from gateway.history.facts import FactMemo, MessageFacts, memo
from gateway.history.prefix import SessionBodies
from gateway.pacing import CHUNK, Steps

RAW_MESSAGES_MAX = 4 * CHUNK  # beyond, a history taken in one go (its facts, its lookups) would hold the loop


@dataclass(frozen=True, slots=True, eq=False)
class RawHistory:
    """A request body's bytes and the history parsed from them (`messages`: the parsed objects, taken
    when parsed: nothing changes them in place)."""

    raw: bytes
    field: str
    messages: tuple[Any, ...]
    parts: dict[str, Any]  # the body's top-level values as parsed (by field), the history's included

    @classmethod
    def of(cls, raw: bytes, body: Any, field: str) -> RawHistory | None:
        messages = body.get(field) if type(body) is dict else None
        return cls(raw, field, tuple(messages), dict(body)) if type(messages) is list else None


bodies = SessionBodies()  # one per process, like the memo


class HistoryView:
    def __init__(
        self,
        facts: FactMemo = memo,
        raw: RawHistory | None = None,
        session: tuple[str, str] | None = None,
        known: SessionBodies = bodies,
    ) -> None:
        """`raw`: the body's history and bytes, used with the previous body of `session` (tenant, id)."""
        self._memo = facts
        self._raw = raw if session is not None else None
        self._parsed = raw.parts if raw is not None else {}
        self._parts: dict[str, MessageFacts] | None = None  # the located body's (prefix.py `Body.parts`)
        self._session, self._bodies = session or ("", ""), known
        self._seen: dict[int, tuple[Any, MessageFacts]] = {}
        self._seen_parts: dict[tuple[str, int], tuple[Any, MessageFacts]] = {}  # `part_facts`'s: (field, id)
        # The last history asked for as a whole: (its messages then, their facts). Stages that keep the
        # body's history (most requests) get the list again without a lookup a message.
        self._last: tuple[tuple[Any, ...], list[MessageFacts]] | None = None

    def facts(self, message: Any) -> MessageFacts:
        return self._lookup(message)[1]

    def vouch(self, message: Any, facts: MessageFacts) -> None:
        """`facts` are those of `message`: a message a stage built as a copy of one whose facts it took
        (compaction's kept renderings), answered from the view with no serialization."""
        self._seen[id(message)] = (message, facts)

    def remember(self, messages: Sequence[Any], facts: list[MessageFacts]) -> None:
        """`facts` are those of `messages`, in order: a history a stage built of messages whose facts it
        holds (compaction's), asked for as a whole by the stages after it."""
        held = tuple(messages)
        self._seen.update(zip(map(id, held), zip(held, facts, strict=True), strict=True))
        self._last = (held, list(facts))

    def _lookup(self, message: Any) -> tuple[bytes, MessageFacts]:
        """The message's facts, and its serialization when this call made it (else b"")."""
        seen = self._seen.get(id(message))
        if seen is not None and seen[0] is message:
            return b"", seen[1]
        data = orjson.dumps(message)
        found = self._memo.facts(data)
        self._seen[id(message)] = (message, found)
        return data, found

    def _serialized(self, message: Any) -> tuple[bytes, MessageFacts]:
        data, found = self._lookup(message)
        return (data or orjson.dumps(message)), found

    def facts_steps(self, messages: Sequence[Any]) -> Steps[list[MessageFacts]]:
        """The facts of every message, as steps (pausing every CHUNK messages: gateway/pacing.py)."""
        held = tuple(messages)
        last = self._last
        # The same objects, by identity (equal content could still differ in key order or 1 vs 1.0).
        if last is not None and _same(last[0], held):
            return list(last[1])
        found = self._from_raw(held)
        if found is None:
            found = []
            for start in range(0, len(messages), CHUNK):
                found.extend(self.facts(message) for message in messages[start : start + CHUNK])
                yield
        self._last = (held, found)
        return list(found)

    def known_facts(self, messages: Sequence[Any]) -> list[MessageFacts] | None:
        """The facts of every message when they come with no serialization of the history: the list
        asked for last, or the session's previous body (None: only `facts_steps` has them). Not a copy:
        callers must not change it."""
        held = tuple(messages)
        last = self._last
        if last is not None and _same(last[0], held):
            return last[1]
        found = self._from_raw(held)
        if found is not None:
            self._last = (held, found)
        return found

    def _from_raw(self, held: tuple[Any, ...]) -> list[MessageFacts] | None:
        """The facts through the session's previous body, when `held` is the body's own history."""
        raw = self._raw
        if raw is None or len(held) > RAW_MESSAGES_MAX or not _same(raw.messages, held):
            return None
        self._raw = None  # once: a second history is another list
        tenant, session = self._session
        body = self._bodies.body(tenant, session, raw.field, raw.raw, held, self._serialized)
        if body is None:
            return None
        self._parts = body.parts
        # One C-level pass (map, zip), not a Python loop a message.
        self._seen.update(zip(map(id, held), zip(held, body.facts, strict=True), strict=True))
        return list(body.facts)

    def part_facts(self, field: str, value: Any) -> MessageFacts:
        """The facts of `value`, the body's top-level `field` other than its history (its tools, a system
        prompt), by content and field. The value as parsed from a body that follows its session's previous
        body (the same bytes around the history) has that body's facts of it, with no serialization; any
        other value (one a stage made) is serialized and looked up."""
        seen = self._seen_parts.get((field, id(value)))
        if seen is not None and seen[0] is value:
            return seen[1]
        parsed = field in self._parsed and self._parsed[field] is value
        if parsed and self._raw is not None:  # the body not located yet: now
            self.known_facts(self._raw.messages)
        parts = self._parts if parsed else None
        found = parts.get(field) if parts is not None else None
        if found is None:
            found = self._memo.facts(orjson.dumps(value), f"part:{field}".encode())
            if parts is not None:
                parts[field] = found
        self._seen_parts[field, id(value)] = (value, found)
        return found


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return len(a) == len(b) and all(map(operator.is_, a, b))
