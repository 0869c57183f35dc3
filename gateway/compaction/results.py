"""A request's tool results, read from its messages' shared facts (gateway/history/).

What compaction needs of a tool result (its handle, whether it is plain text, its tokens) and the tool
calls a message makes depend only on that message's content: they are derived once per content and kept
in the message's facts, valid on every later request and replica. Agents resend the whole history, so a
request that repeats the previous one plus a new turn derives the new turn's results only; for the rest
the walk reads a few fields a message (the handle used to cost a serialization and a hash of every
result on every request, its token count another). A result's tokens are counted only when a decision
needs them: most results are far under every threshold, which their message's size already shows.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from gateway.compaction.layout import Layout, Message, parts_text, result_handle
from gateway.compaction.tokens import LARGE_MESSAGE_BYTES, TokenCounter
from gateway.history import MessageFacts
from gateway.pacing import CHUNK, Pacer


@dataclass(slots=True, eq=False)
class ResultFacts:
    """One tool result of a message content, by its place in the message."""

    block: int | None
    call_id: str
    handle: str
    plain: bool  # its content is plain text: only those are compacted
    bound: int  # its message's JSON bytes: more than its tokens (a token is at least a byte)
    encoding: str = ""  # the encoding `tokens` was counted in ("": not counted yet)
    tokens: int = 0
    # Its references, by (encoding, its tokens, preview characters, retrieval tool offered, tool name): every
    # request over the trigger weighs every older result again, and a compacted session's requests send the
    # same references again (compactor.py `rendering`).
    references: dict[tuple[str, int, int, bool, str], Rendering] | None = None


@dataclass(slots=True, eq=False)
class SentMessage:
    """A result's message as sent with one of its references (history.py `replace`): a template, copied for
    each request (a stage that changes its copy changes no other request's), with its facts."""

    message: Message  # its values are scalars: a shallow copy shares nothing anyone may change
    tokens: int  # in the reference's encoding
    facts: MessageFacts | None = None  # once a request took them (gateway/history/)


@dataclass(slots=True, eq=False)
class Rendering:
    """A result's reference in one form, derived once per form."""

    text: str
    tokens: int | None = None  # the text's, in the form's encoding (None: not counted yet)
    sent: SentMessage | None = None  # its message as sent, where the reference replaced its whole content


@dataclass(frozen=True, slots=True, eq=False)
class MessageResults:
    """What compaction reads from one message content (under one layout)."""

    layout: str
    calls: tuple[tuple[str, str], ...]  # (call id, tool name) of the tool calls it makes
    results: tuple[ResultFacts, ...]


_NONE = {name: MessageResults(name, (), ()) for name in ("openai", "anthropic", "responses", "gemini")}


def message_results(layout: Layout, message: Message, facts: MessageFacts) -> MessageResults:
    """The message's calls and results, from its facts (derived now if no request derived them yet)."""
    known = facts.compaction
    if known is not None and known.layout == layout.name:
        return known
    calls, found = tuple(layout.calls(message)), layout.results(message)
    if not calls and not found and layout.name in _NONE:  # most messages: one shared entry
        known = _NONE[layout.name]
    else:
        results = tuple(
            ResultFacts(
                r.block, r.call_id, result_handle(r.call_id, r.content), parts_text(r.content) is not None, facts.size
            )
            for r in found
        )
        known = MessageResults(layout.name, calls, results)
    facts.compaction = known
    return known


@dataclass(slots=True, eq=False)
class ToolResult:
    """One tool result in the history: the raw index and the object of the message that carries it, its
    facts, and the name of the tool that produced it."""

    message: int
    owner: Message
    facts: ResultFacts
    tool: str
    layout: Layout

    @property
    def block(self) -> int | None:
        return self.facts.block

    @property
    def call_id(self) -> str:
        return self.facts.call_id

    @property
    def handle(self) -> str:
        return self.facts.handle

    @property
    def plain(self) -> bool:
        return self.facts.plain

    @property
    def content(self) -> Any:
        return self.layout.result_content(self.owner, self.facts.block)

    @property
    def text(self) -> str | None:
        """The result as plain text, or None when it holds anything else (images, documents)."""
        return parts_text(self.content)

    async def tokens(self, counter: TokenCounter) -> int:
        """Tokens of its content in `counter`'s encoding (counted once per content and encoding, off the
        event loop when its message is large)."""
        facts = self.facts
        if facts.encoding != counter.name:
            content, count = self.content, counter.content_now
            tokens = await asyncio.to_thread(count, content) if facts.bound > LARGE_MESSAGE_BYTES else count(content)
            facts.tokens, facts.encoding = tokens, counter.name
        return facts.tokens


@dataclass(slots=True, eq=False)
class Results:
    """A request's tool results from a raw index on, oldest first, as (raw message index, facts) pairs: a
    ToolResult is made only for a result compaction acts on."""

    layout: Layout
    messages: list[Message]
    names: dict[str, str]  # tool name by call id, from every message's calls
    found: list[tuple[int, ResultFacts]]

    def tool(self, facts: ResultFacts) -> str:
        return self.names.get(facts.call_id, "unknown")

    def result(self, index: int, facts: ResultFacts) -> ToolResult:
        return ToolResult(index, self.messages[index], facts, self.tool(facts), self.layout)


async def tool_results(
    layout: Layout, messages: list[Message], facts: list[MessageFacts], start: int, pacer: Pacer
) -> Results:
    """Every tool result from raw index `start` on, with the names of the tools (calls are looked up from
    the first message on)."""
    names: dict[str, str] = {}
    known: list[MessageResults] = []
    for index, message in enumerate(messages):
        results = message_results(layout, message, facts[index])
        if results.calls:
            names.update(results.calls)
        known.append(results)
        if index % CHUNK == CHUNK - 1:
            await pacer.tick()
    found = [(index, result) for index in range(start, len(messages)) for result in known[index].results]
    return Results(layout, messages, names, found)
