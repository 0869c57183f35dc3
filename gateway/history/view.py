"""One request's view of its history: each message serialized and looked up in the fact memo once.

Stages ask for the facts of the messages they hold (`facts_steps`). A message object already looked
up by this request is answered from the view without serializing it again; the view keeps a reference
to each message it answered for, so an id is never reused while the request lives. Stages must not
change a message in place after asking for its facts (none does: compaction builds new messages, the
prompt cache copies a message before changing it).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import orjson

from gateway.history.facts import FactMemo, MessageFacts, memo
from gateway.pacing import CHUNK, Steps


class HistoryView:
    def __init__(self, facts: FactMemo = memo) -> None:
        self._memo = facts
        self._seen: dict[int, tuple[Any, MessageFacts]] = {}
        # The last history asked for as a whole: (its messages then, their facts). Stages that keep the
        # body's history (most requests) get the list again without a lookup a message.
        self._last: tuple[tuple[Any, ...], list[MessageFacts]] | None = None

    def facts(self, message: Any) -> MessageFacts:
        seen = self._seen.get(id(message))
        if seen is not None and seen[0] is message:
            return seen[1]
        found = self._memo.facts(orjson.dumps(message))
        self._seen[id(message)] = (message, found)
        return found

    def facts_steps(self, messages: Sequence[Any]) -> Steps[list[MessageFacts]]:
        """The facts of every message, as steps (pausing every CHUNK messages: gateway/pacing.py)."""
        held = tuple(messages)
        last = self._last
        # The same objects, by identity (equal content could still differ in key order or 1 vs 1.0).
        if last is not None and len(last[0]) == len(held) and all(map(operator.is_, last[0], held)):
            return list(last[1])
        found: list[MessageFacts] = []
        for start in range(0, len(messages), CHUNK):
            found.extend(self.facts(message) for message in messages[start : start + CHUNK])
            yield
        self._last = (held, found)
        return list(found)
