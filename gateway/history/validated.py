"""Each session's last history that passed validation, so that a request validates its new messages only.

An agent resends its whole history each turn, and validating it (each message's shape, the pairing of tool
calls with their results, the nesting depth) walked all of it on every request (issue 28). A request's
repeated messages are known by their facts (one object per message content, found from the bytes of the
session's previous body without serializing them: prefix.py). When the history starts with the facts of
the session's last history that passed, in the same wire, those messages passed too: a message's shape
and depth depend on its content alone, and the pairing of that prefix was checked (the wire resumes it at
a message before which nothing is pending). Memory: a list of references per session, bounded per tenant
and in all.
"""

from __future__ import annotations

from collections.abc import Sequence

from gateway.bounded import Caps, TenantLRU
from gateway.history.facts import MessageFacts, starts_with
from gateway.history.prefix import CAPS, FACT_BYTES, session_key

ENTRY_BYTES = 200


class ValidatedHistories:
    def __init__(self, caps: Caps = CAPS) -> None:
        self._passed: TenantLRU[tuple[str, list[MessageFacts]]] = TenantLRU(caps)

    def __len__(self) -> int:
        return len(self._passed)

    def known(self, tenant: str, session: str, wire: str, facts: Sequence[MessageFacts]) -> int:
        """How many of the history's first messages are the session's last history that passed in `wire`
        (all of that history, or 0)."""
        entry = self._passed.get(session_key(tenant, session))
        if entry is None or entry[0] != wire or not starts_with(facts, entry[1]):
            return 0
        return len(entry[1])

    def passed(self, tenant: str, session: str, wire: str, facts: Sequence[MessageFacts]) -> None:
        """The history with these facts passed validation in `wire`."""
        # Each fact counted whole, as prefix.py counts it: an entry keeps its facts alive (the session's
        # body usually holds the same ones), so the bound holds even when both outlive the memo's.
        size = ENTRY_BYTES + FACT_BYTES * len(facts)
        self._passed.put(session_key(tenant, session), tenant, (wire, list(facts)), size)


validated = ValidatedHistories()  # one per process, like the facts memo
