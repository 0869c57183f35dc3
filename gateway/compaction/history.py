"""The history as it will be sent: the head, an optional summary, then the rest with some tool results
replaced by references. Rendering copies only the messages it changes."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from gateway.compaction.layout import Layout, Message, ToolResult
from gateway.compaction.tokens import TokenCounter

SUMMARY_POSITION = -1  # the raw index reported for the summary message


class History:
    def __init__(self, layout: Layout, messages: list[Message], head: int) -> None:
        self.layout = layout
        self.messages = messages
        self.head = head
        self.start = head  # raw index of the first message after the summary
        self.summary: Message | None = None
        self.replaced: dict[tuple[int, int | None], Any] = {}

    def replace(self, result: ToolResult, content: Any) -> None:
        self.replaced[(result.message, result.block)] = content

    def is_replaced(self, result: ToolResult) -> bool:
        return (result.message, result.block) in self.replaced

    def summarize(self, cut: int, summary: Message) -> None:
        """Replace messages[head:cut] by the summary message."""
        self.start, self.summary = cut, summary
        self.replaced = {key: value for key, value in self.replaced.items() if key[0] >= cut}

    def rendered(self, upto: int | None = None) -> list[tuple[int, Message]]:
        """(raw index, message as sent) up to raw index `upto`; the summary has SUMMARY_POSITION."""
        end = len(self.messages) if upto is None else upto
        by_message: defaultdict[int, dict[int | None, Any]] = defaultdict(dict)
        for (index, block), content in self.replaced.items():
            by_message[index][block] = content
        out = list(enumerate(self.messages[: self.head]))
        if self.summary is not None:
            out.append((SUMMARY_POSITION, self.summary))
        for index in range(self.start, end):
            message = self.messages[index]
            contents = by_message.get(index)
            out.append((index, self.layout.with_contents(message, contents) if contents else message))
        return out

    def sent(self, upto: int | None = None) -> list[Message]:
        return [message for _, message in self.rendered(upto)]

    def tokens(self, counter: TokenCounter) -> int:
        return counter.messages(self.sent())

    def tokens_between(self, counter: TokenCounter, first: int, end: int) -> int:
        """Tokens of the messages as sent from raw index `first` (the summary counts when first <= start)
        up to raw index `end`: what a change at `first` takes out of the cached prefix."""
        total = 0
        for index, message in self.rendered(end):
            position = self.start if index == SUMMARY_POSITION else index
            if position >= first:
                total += counter.message(message)
        return total
