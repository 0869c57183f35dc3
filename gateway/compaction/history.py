"""The history as it will be sent: the head, an optional summary, then the rest with some tool results
replaced by references. Rendering copies only the messages it changes.

Token counts come from per-message counts taken once per request (or their bounds, until a decision
needs them exact: compaction/bounds.py) and kept as prefix sums, so every span query is O(1) however
long the history: one request may hold 100,000 messages, and the engine asks for spans many times.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import accumulate
from typing import Any

from gateway.compaction.layout import Layout, Message
from gateway.compaction.results import Rendering, SentMessage
from gateway.compaction.tokens import TokenCounter
from gateway.history import MessageFacts

SCALARS = (str, int, float, bool, type(None))  # a message of only these is copied whole by `dict`


class History:
    def __init__(
        self, layout: Layout, messages: list[Message], head: int, counter: TokenCounter, counts: list[int]
    ) -> None:
        self.layout = layout
        self.messages = messages
        self.head = head
        self.counter = counter
        self.start = head  # raw index of the first message after the summary
        self.summary: Message | None = None
        self.summary_tokens = 0
        self.replaced: dict[tuple[int, int | None], Any] = {}
        self._contents: dict[int, dict[int | None, Any]] = {}  # replaced contents by message
        self._rendered: dict[int, Message] = {}  # messages as sent, where some content was replaced
        self._kept: dict[int, SentMessage] = {}  # of those, the copies of kept messages (`replace`)
        self._sent_counts = list(counts)  # tokens of each raw message as sent
        self._sums: list[int] | None = None  # prefix sums of _sent_counts (None: to recompute)

    async def replace(self, index: int, block: int | None, rendering: Rendering) -> None:
        """Send message `index` with `rendering` in place of its result at `block`. A message whose only
        replaced result is this one is the same on every request: rendered and counted once per result
        and form (kept with the rendering), then copied."""
        self.replaced[(index, block)] = rendering.text
        contents = self._contents.setdefault(index, {})
        contents[block] = rendering.text
        kept = rendering.sent if len(contents) == 1 else None
        if kept is None:
            message = self.layout.with_contents(self.messages[index], contents)
            tokens = await self.counter.message_off_loop(message)
            if len(contents) == 1 and all(type(value) in SCALARS for value in message.values()):
                kept = rendering.sent = SentMessage(message, tokens)
        if kept is not None:
            message, tokens = dict(kept.message), kept.tokens
            self._kept[index] = kept
        else:
            self._kept.pop(index, None)
        self._rendered[index] = message
        self._sent_counts[index] = tokens
        self._sums = None

    def sent_facts(self, raw: list[MessageFacts], facts_of: Callable[[Message], MessageFacts]) -> list[MessageFacts]:
        """The facts of `sent()`'s messages, in order: a raw message's from `raw` (the facts of `messages`),
        the others' from `facts_of`."""
        summary = [facts_of(self.summary)] if self.summary is not None else []
        out = [*raw[: self.head], *summary, *raw[self.start :]]
        offset = self.head + len(summary) - self.start
        for index, message in self._rendered.items():
            if self.start <= index:
                out[index + offset] = facts_of(message)
        return out

    def kept_messages(self) -> Iterator[tuple[Message, SentMessage]]:
        """The messages sent in place of results (as `sent` gives them) that are copies of kept ones."""
        for index, kept in self._kept.items():
            if index >= self.start:
                yield self._rendered[index], kept

    def settle(self, counts: list[int], changed: Iterable[int] | None = None) -> None:
        """Exact counts of the raw messages in place of the bounds it was made with (replaced messages
        keep the counts of what replaced them). `changed`: the only messages whose counts differ from
        those it was made with (the others are left as they are: O(changed))."""
        if changed is not None:
            for index in changed:
                if index not in self._rendered:
                    self._sent_counts[index] = counts[index]
        else:
            self._sent_counts = [
                sent if index in self._rendered else count
                for index, (sent, count) in enumerate(zip(self._sent_counts, counts, strict=True))
            ]
        self._sums = None

    def is_replaced(self, message: int, block: int | None) -> bool:
        return (message, block) in self.replaced

    def summarize(self, cut: int, summary: Message) -> None:
        """Replace messages[head:cut] by the summary message."""
        self.start, self.summary = cut, summary
        self.summary_tokens = self.counter.message(summary)
        self.replaced = {key: value for key, value in self.replaced.items() if key[0] >= cut}

    def sent(self, upto: int | None = None) -> list[Message]:
        """The messages as sent, up to raw index `upto` (slices, plus a copy of each changed message)."""
        end = len(self.messages) if upto is None else upto
        summary = [self.summary] if self.summary is not None else []
        out = [*self.messages[: self.head], *summary, *self.messages[self.start : end]]
        offset = self.head + len(summary) - self.start
        for index, message in self._rendered.items():
            if self.start <= index < end:
                out[index + offset] = message
        return out

    def sent_counts(self, upto: int | None = None) -> list[int]:
        """Tokens of each message of `sent(upto)`, in the same order."""
        end = len(self.messages) if upto is None else upto
        summary = [self.summary_tokens] if self.summary is not None else []
        return [*self._sent_counts[: self.head], *summary, *self._sent_counts[self.start : end]]

    def _span(self, first: int, end: int) -> int:
        """Tokens of raw messages [first, end) as sent (no summary involved)."""
        if end <= first:
            return 0
        if self._sums is None:
            self._sums = [0, *accumulate(self._sent_counts)]
        return self._sums[end] - self._sums[first]

    def tokens(self) -> int:
        return self.tokens_between(0, len(self.messages))

    def tokens_between(self, first: int, end: int) -> int:
        """Tokens of the messages as sent from raw index `first` (the summary counts when first <= start)
        up to raw index `end`: what a change at `first` takes out of the cached prefix."""
        total = self._span(first, min(self.head, end))
        if self.summary is not None and first <= self.start:
            total += self.summary_tokens
        return total + self._span(max(first, self.start), end)

    def kept_from(self, cut: int) -> int:
        """Tokens kept verbatim after a summary that ends at raw index `cut`."""
        return self._span(cut, len(self.messages))
