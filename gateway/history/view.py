"""One request's view of its history: each message serialized and looked up in the fact memo once.

Stages ask for the facts of the messages they hold (`facts_steps`). A message object already looked
up by this request is answered from the view without serializing it again; the view keeps a reference
to each message it answered for, so an id is never reused while the request lives. Stages must not
change a message in place after asking for its facts (none does: compaction builds new messages, the
prompt cache works on a copy).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from gateway.history.facts import FactMemo, MessageFacts, memo
from gateway.pacing import CHUNK, Steps


class HistoryView:
    def __init__(self, facts: FactMemo = memo) -> None:
        self._memo = facts
        self._seen: dict[int, tuple[Any, MessageFacts]] = {}

    def facts(self, message: Any) -> MessageFacts:
        seen = self._seen.get(id(message))
        if seen is not None and seen[0] is message:
            return seen[1]
        found = self._memo.facts(orjson.dumps(message))
        self._seen[id(message)] = (message, found)
        return found

    def facts_steps(self, messages: Sequence[Any]) -> Steps[list[MessageFacts]]:
        """The facts of every message, as steps (pausing every CHUNK messages: gateway/pacing.py)."""
        found: list[MessageFacts] = []
        for start in range(0, len(messages), CHUNK):
            found.extend(self.facts(message) for message in messages[start : start + CHUNK])
            yield
        return found
