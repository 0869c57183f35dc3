"""Running totals of a session's history, so that a request's bounds cost its new turn, not its history.

Agents resend the whole history each turn: summing every message's bytes and known token counts again
(bounds.py) is a walk over all of it on every request. A session's totals remember those sums for the
history its previous request carried, with that history's message facts (gateway/history/): a request
whose first messages are the very same facts objects (one C-speed identity comparison) adds only its
new messages. Anything else (another history, another layout or encoding, a session new to this
replica, an evicted entry) recomputes them from every message, as the engine did before.

A count that was only a bound when it was taken (`loose`) may have been counted since (by a turn of
another session with the same message): the totals keep such counts apart, so that the engine can
take their exact values again where a decision could depend on them (`refresh`). Kept per process,
bounded like the session bodies of gateway/history/prefix.py (the same facts, counted the same way).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field

from gateway.bounded import TenantLRU
from gateway.compaction.compactor import Reapplied
from gateway.compaction.layout import Layout, Message
from gateway.compaction.provider_count import ProviderCount
from gateway.compaction.results import ResultFacts, Results, message_results
from gateway.compaction.tokens import MESSAGE_OVERHEAD, message_bound
from gateway.history import MessageFacts, starts_with
from gateway.history.prefix import CAPS, FACT_BYTES
from gateway.pacing import CHUNK, Steps

REPLACED_BYTES = 120  # a replacement kept (compactor.py `Replaced`): its tuple; the rest is the facts'


@dataclass(slots=True, eq=False)
class Totals:
    """Sums over a history's messages, in one layout and one token encoding."""

    layout: str
    encoding: str
    facts: list[MessageFacts] = field(default_factory=list)  # the history's facts, in order
    size: int = 0  # their JSON bytes plus MESSAGE_OVERHEAD each: surely_small's bound without the commas
    marks: int = 0  # their image blocks (history/facts.py `image_marks`)
    tokens: int = 0  # their counts where known when taken, else their bounds (tokens.message_bound)
    counts: list[int] = field(default_factory=list)  # each one's part of `tokens` (0 while pending)
    loose: list[tuple[int, int]] = field(default_factory=list)  # (index, bound) of the bounds among them
    # Messages not counted when added, whose count or bound is not in `tokens` yet (`bound`: a request under
    # surely_small's limit never asks, and one that does may find them counted by then). All later than `loose`'s.
    pending: list[int] = field(default_factory=list)
    largest: int = 0  # bytes of the largest message
    # The tool results of the first `derived` messages, as results.tool_results finds them (taken only when
    # the engine asks for them: `results`), and the tool names their calls give.
    derived: int = 0
    found: list[tuple[int, ResultFacts]] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    provider: ProviderCount | None = None  # the provider's count of a history this one extends
    reapplied: Reapplied | None = None  # what the recorded compactions replaced in that history (compactor.py)

    @property
    def exact(self) -> bool:
        return not self.loose and not self.pending

    def byte_bound(self) -> int:
        """surely_small's lower bound of the body's bytes: the messages and the commas between them."""
        return self.size + len(self.facts) - 1

    def bound(self) -> int:
        """Add the pending messages' counts (known by now) or bounds to `tokens`; returns how many were
        bounds (those are loose now, as of now: the others in `loose` may have been counted since)."""
        added = len(self.loose)
        for index in self.pending:
            known = self.facts[index]
            count = known.tokens.get(self.encoding)
            if count is None:
                count = message_bound(known.size, known.image_marks)
                self.loose.append((index, count))
            self.tokens += count
            self.counts[index] = count
        self.pending = []
        return len(self.loose) - added

    def results(self, layout: Layout, messages: list[Message], start: int) -> Steps[Results]:
        """results.tool_results(layout, messages, facts, start): deriving only the messages not derived yet."""
        for first in range(self.derived, len(self.facts), CHUNK):
            for index in range(first, min(first + CHUNK, len(self.facts))):
                known = message_results(layout, messages[index], self.facts[index])
                if known.calls:
                    self.names.update(known.calls)
                self.found.extend((index, result) for result in known.results)
            self.derived = min(first + CHUNK, len(self.facts))
            yield
        # The names as of now: later turns add to the totals' own dict.
        found = self.found[bisect_left(self.found, start, key=_index) :] if start else list(self.found)
        return Results(layout, messages, dict(self.names), found)

    def newest_known(self) -> bool:
        """Whether the newest message that had only a bound is counted by now (else not all are: O(1))."""
        return self.facts[self.loose[-1][0]].tokens.get(self.encoding) is not None

    def refresh(self) -> list[int]:
        """Take the counts known now of the messages that had only a bound (O(loose)): the sums the engine
        would find by walking every message's facts. Returns the messages counted since."""
        loose, counted = [], []
        for index, bound in self.loose:
            count = self.facts[index].tokens.get(self.encoding)
            if count is None:
                loose.append((index, bound))
            else:
                self.tokens += count - bound
                self.counts[index] = count
                counted.append(index)
        self.loose = loose
        return counted

    def settle(self) -> None:
        """Every message is counted now (the engine counted the loose ones): their exact sum."""
        self.refresh()
        assert not self.loose, "settle: a message is still not counted"


def _index(pair: tuple[int, ResultFacts]) -> int:
    return pair[0]


def extend(
    totals: Totals, layout: Layout, messages: Sequence[Message], facts: Sequence[MessageFacts], start: int
) -> Steps[Totals]:
    """Add messages[start:] (whose facts are facts[start:]) to totals that cover facts[:start]; the bounds
    of those not counted yet are pending (`Totals.bound`)."""
    encoding = totals.encoding
    for first in range(start, len(facts), CHUNK):
        for index in range(first, min(first + CHUNK, len(facts))):
            known = facts[index]
            count = known.tokens.get(encoding)
            if count is None:
                totals.pending.append(index)
            else:
                totals.tokens += count
            totals.counts.append(count or 0)
            totals.size += known.size + MESSAGE_OVERHEAD
            totals.marks += known.image_marks
            if known.size > totals.largest:
                totals.largest = known.size
        yield
    totals.facts = list(facts)
    return totals


class SessionTotals:
    """The totals of each session's last history (per process, least recently used out first)."""

    def __init__(self) -> None:
        self._totals: TenantLRU[Totals] = TenantLRU(CAPS)

    def __len__(self) -> int:
        return len(self._totals)

    def of(
        self, session: str | None, layout: Layout, encoding: str, messages: Sequence[Message], facts: list[MessageFacts]
    ) -> Steps[Totals]:
        """The totals of `messages` (their facts: `facts`), from the session's previous ones where this
        history repeats that one's messages. The result is the caller's: `keep` it once settled."""
        previous = self._totals.get(session) if session is not None else None
        start = 0
        totals = Totals(layout.name, encoding)
        if previous is not None and previous.layout == layout.name and previous.encoding == encoding:
            kept = len(previous.facts)
            if starts_with(facts, previous.facts):
                start = kept
                totals.size, totals.tokens, totals.largest = previous.size, previous.tokens, previous.largest
                totals.marks = previous.marks
                totals.loose, totals.pending = list(previous.loose), list(previous.pending)
                totals.counts = previous.counts[:kept]
                # Derived results are those of the same messages (the previous history's first `derived`).
                totals.derived, totals.names = previous.derived, dict(previous.names)
                totals.found = list(previous.found)
                totals.provider = previous.provider
                totals.reapplied = previous.reapplied
        return (yield from extend(totals, layout, messages, facts, start))

    def keep(self, session: str | None, tenant: str, totals: Totals) -> None:
        if session is not None:
            replaced = len(totals.reapplied.replaced) if totals.reapplied is not None else 0
            self._totals.put(session, tenant, totals, FACT_BYTES * len(totals.facts) + REPLACED_BYTES * replaced)

    def forget(self, session: str) -> None:
        self._totals.pop(session)


sessions = SessionTotals()  # one per process, like the message facts
