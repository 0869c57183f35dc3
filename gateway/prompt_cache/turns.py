"""What a session line's previous request left in this process, so that the next request of the line
works on its new turn only (issue 28).

An agent resends its whole history on every turn. The previous request's messages are the new one's
first messages when its facts (gateway/history/: one object per message content) start with the same
objects, which one identity comparison of the two lists tells (pointer compares in C, no Python per
message). Their per-message results then hold as they were: the digests of the prefix record, where
the system messages are, and what their blocks added to the breakpoint survey (survey.py `SurveyHead`).
The state the previous request wrote is kept decoded beside its bytes: when the store hands those
bytes back, they are not parsed again.

Everything here only saves work: an entry that is missing (evicted, another replica answered the
previous turn) or that does not match (an edited or truncated history) means the request computes it
all, with the same results. Bounded per tenant and in all (gateway/bounded.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.bounded import Caps, TenantLRU
from gateway.history import MessageFacts, starts_with
from gateway.prompt_cache.session import SessionState
from gateway.prompt_cache.survey import SurveyHead

# A message counts its facts whole (they are the shared memo's, but kept alive here too, as in
# gateway/history/prefix.py) plus ~100 bytes of its own (two digests, the state's hex, survey entries):
# ~900 sessions of 100 messages fit in the byte cap; a tenant gets a quarter.
TURN_BYTES = 64 << 20
CAPS = Caps(
    max_entries=20_000, max_bytes=TURN_BYTES, max_entries_per_tenant=5_000, max_bytes_per_tenant=TURN_BYTES // 4
)
MESSAGE_BYTES = 700


@dataclass(frozen=True, slots=True, eq=False)
class Prefix:
    """Per-message results for the first `len(facts)` messages of a history (its messages' facts)."""

    facts: list[MessageFacts]
    plain: bytes  # their digests in the prefix record (gateway/prompt_cache/prefix.py)
    masked: bytes
    system: list[int]  # the positions of the system/developer messages among them (per shape)
    survey: SurveyHead | None = None  # what its block survey derived (Anthropic-style marks only)


@dataclass(frozen=True, slots=True, eq=False)
class Turn:
    """One line's previous request: its messages' prefix (None: its digests did not come from facts)
    and the state it wrote, decoded, with its bytes."""

    wire: str
    prefix: Prefix | None
    raw: bytes
    state: SessionState

    def state_for(self, raw: bytes) -> SessionState | None:
        """The decoded state, when `raw` is what this request wrote (nobody changes a state once written)."""
        return self.state if raw == self.raw else None

    def prefix_of(self, wire: str, facts: list[MessageFacts] | None) -> Prefix | None:
        """The kept prefix, when `facts` (the new request's messages') start with its messages."""
        prefix = self.prefix
        if prefix is None or facts is None or wire != self.wire:
            return None
        return prefix if starts_with(facts, prefix.facts) else None


class Turns:
    def __init__(self, caps: Caps = CAPS) -> None:
        self._turns: TenantLRU[Turn] = TenantLRU(caps)

    def __len__(self) -> int:
        return len(self._turns)

    def get(self, line: str) -> Turn | None:
        return self._turns.get(line)

    def put(self, line: str, tenant: str, turn: Turn) -> None:
        count = len(turn.prefix.facts) if turn.prefix is not None else 0
        self._turns.put(line, tenant, turn, len(turn.raw) + MESSAGE_BYTES * count)

    def pop(self, line: str) -> None:
        self._turns.pop(line)


turns = Turns()  # one per process, like the history's memo
