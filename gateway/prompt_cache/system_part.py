"""A system prompt held by values of its own (Chat's system and developer messages, Responses'
instructions and message items): its hash and the kinds of volatile content in it, remembered by the
content digests of the values that hold it.

An agent sends the same system prompt on every request, an agent CLI's tens of kilobytes. Its hash (the
prompt serialized, hashed, its volatile spans masked and hashed again) and its volatile kinds cost about
1 M instructions a Chat request when taken again each time (issue 28): most of the prompt cache stage's
work there. A prompt that is one body field (Anthropic's `system`) keeps them in that field's facts
(optimizer.py). One held by messages is remembered here, keyed by its holders' facts (one per content:
gateway/history/facts.py), so a prompt is hashed and scanned once per process, not once per request.
Bounded: entries, and only prompts of at most HOLDERS_KEPT values (a key is that many digests at most).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gateway.bounded import Caps, TenantLRU
from gateway.history import MessageFacts
from gateway.pacing import Steps
from gateway.prompt_cache.prefix import PartHash
from gateway.prompt_cache.system_text import SystemPrompt
from gateway.prompt_cache.volatile import spans_steps

KNOWN = 4096
HOLDERS_KEPT = 8
ENTRY_BYTES = 512  # an entry: its key (up to HOLDERS_KEPT digests, in hex) and two hashes
SHARED = ""  # the one "tenant" of the map: an entry is content any caller may send (as tools_part.py's)


@dataclass(frozen=True, slots=True)
class SystemFacts:
    plain: str  # the prompt's PartHash
    masked: str
    kinds: frozenset[str]  # volatile kinds in its text

    @property
    def hash(self) -> PartHash:
        return PartHash(self.plain, self.masked)


def kinds_steps(system: SystemPrompt) -> Steps[frozenset[str]]:
    """The kinds of volatile content in the prompt's text."""
    kinds: set[str] = set()
    for text_field in system.fields():
        kinds |= {span.kind for span in (yield from spans_steps(text_field.text))}
    return frozenset(kinds)


class HeldPrompts:
    """System prompts' facts by their holders' digests (least recently used out first)."""

    def __init__(self, size: int = KNOWN) -> None:
        bound = size * ENTRY_BYTES
        self._known: TenantLRU[SystemFacts] = TenantLRU(Caps(size, bound, size, bound))

    def __len__(self) -> int:
        return len(self._known)

    def facts_steps(self, system: SystemPrompt, holders: Sequence[MessageFacts]) -> Steps[SystemFacts]:
        """The facts of `system`, whose holders' values have the facts `holders` (in a fixed order)."""
        key = b"".join(facts.digest for facts in holders).hex() if len(holders) <= HOLDERS_KEPT else None
        if key is not None and (known := self._known.get(key)) is not None:
            return known
        kinds = yield from kinds_steps(system)
        part_hash = yield from PartHash.of_steps(system.part())
        known = SystemFacts(part_hash.plain, part_hash.masked, kinds)
        if key is not None:
            self._known.put(key, SHARED, known, ENTRY_BYTES)
        return known


held = HeldPrompts()  # one per process, like the message facts
