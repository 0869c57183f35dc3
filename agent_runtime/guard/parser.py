"""Conversation -> steps: pairs the parts of each message (``parts.py``) into steps, incrementally.

Every hash is taken from one message alone (``message_parts``), so the parser only pairs: a result with
its call (by id, else the oldest unanswered call of the turn), a user reply with the text step before it.
A consumer that remembers parts by message content (the ``parts`` argument of ``feed`` / ``sync``) pays
for each distinct message once; one that keeps a parser per conversation (``sync``) pays only for the
messages that are new.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from .parts import MessageParts, Result, message_parts, reply_text
from .steps import Step, digest

__all__ = ["PartsOf", "StepParser", "steps_from_anthropic_messages", "steps_from_openai_messages"]

Message = Mapping[str, Any]
PartsOf = Callable[[Message], MessageParts]  # a message's parts: ``message_parts`` or a memo of it


@dataclass(slots=True, eq=False)
class _Entry:
    """A step under construction: a call waits for its result, a text step for its reply."""

    said: Step  # the call without its result, or the text step without its reply
    call: bool
    result: Result | None = None
    replies: list[Message] = field(default_factory=list)  # the user messages that reply to a text step
    reply_hash: str | None = None
    built: Step | None = None  # the step as it stands (cleared when a result or reply arrives)

    def step(self) -> Step:
        if self.built is None:
            if self.result is not None:
                self.built = replace(self.said, result_hash=self.result.result_hash, is_error=self.result.is_error)
            elif self.reply_hash is not None:
                self.built = replace(self.said, result_hash=self.reply_hash)
            else:
                self.built = self.said
        return self.built


class StepParser:
    """Incremental conversation parser: ``feed`` messages as the history grows, read ``steps``.

    ``format`` is ``"openai"`` (Chat Completions) or ``"anthropic"`` (Messages). Steps before the newest
    assistant turn are final and built once, so a consumer that keeps one parser per session pays only
    for new messages: ``sync(messages)`` feeds what is new and starts over when the history does not
    extend what was fed. ``parts`` looks up a message's parts (default: computed each time).
    """

    def __init__(self, format: str = "openai") -> None:
        if format not in ("openai", "anthropic"):
            raise ValueError(f"unknown message format {format!r}")
        self.format = format
        self._own_parts: PartsOf = partial(message_parts, format)
        self.reset()

    def reset(self) -> None:
        """Forget everything fed so far."""
        self._entries: list[_Entry] = []
        self._final: list[Step] = []  # steps of self._entries[: len(self._final)]
        self._by_id: dict[str, _Entry] = {}
        self._pending: list[_Entry] = []
        self._fed: list[Message] = []
        self._keys: list[Any] | None = []  # ``feed``'s keys of the messages fed (None: some not given)
        self._keys_from = 0  # the keys before this index were never compared with the messages fed

    @property
    def messages_seen(self) -> int:
        return len(self._fed)

    @property
    def final_count(self) -> int:
        """Steps before the newest assistant turn: complete, they never change."""
        return len(self._final)

    def final_since(self, start: int) -> list[Step]:
        """The final steps from ``start`` on."""
        return self._final[start:]

    @property
    def steps(self) -> list[Step]:
        """All steps so far (a new list)."""
        return self._final + [entry.step() for entry in self._entries[len(self._final) :]]

    def feed(
        self, messages: Sequence[Message], parts: PartsOf | None = None, keys: Sequence[Any] | None = None
    ) -> None:
        """Parse the next messages of the conversation. ``keys``: a token per message whose equality
        implies the messages' (e.g. a digest of each one's bytes), so ``extends`` compares them instead
        of the messages."""
        parts_of = parts or self._own_parts
        for message in messages:
            self._apply(parts_of(message), message)
            self._fed.append(message)
        if keys is None or self._keys is None or len(keys) != len(messages):
            self._keys = None
        else:
            self._keys.extend(keys)

    def extends(self, messages: Sequence[Message], start: int = 0, keys: Sequence[Any] | None = None) -> bool:
        """Whether ``messages`` continues what was fed: at least as long, and equal to it from ``start`` on
        (deep equality). Steps from an assistant message on depend only on the messages from there, so
        a ``start`` at one vouches for every step from it (earlier ones may then be of an edited past).

        ``keys`` (``feed``'s, one per message of ``messages``): equal to those fed, they prove it with no
        look at the messages (one comparison of references, whatever their size); otherwise the
        messages are compared, and when equal their keys are kept for the next call."""
        seen = len(self._fed)
        if len(messages) < seen:
            return False
        if keys is not None and len(keys) != len(messages):
            keys = None
        own = self._keys
        if keys is not None and own is not None and start >= self._keys_from and keys[start:seen] == own[start:]:
            return True
        if messages[start:seen] != self._fed[start:]:
            return False
        if keys is not None:  # equal from ``start`` on: only those keys vouch for what was fed
            self._keys, self._keys_from = list(keys[:seen]), start
        return True

    def sync(self, messages: Sequence[Message], start: int = 0, parts: PartsOf | None = None) -> list[Step]:
        """The steps of ``messages``, a later version of the history fed so far (or a new one): what is
        new is fed when it ``extends`` what was fed (checked from ``start``), else it is parsed again."""
        if not self.extends(messages, start):
            self.reset()
        self.feed(messages[len(self._fed) :], parts)
        return self.steps

    def _apply(self, parts: MessageParts, message: Message) -> None:
        if parts.turn:  # every earlier step is complete (unanswered calls stay unanswered)
            self._final.extend(entry.step() for entry in self._entries[len(self._final) :])
            self._pending.clear()
            self._by_id.clear()
            if parts.said is not None:
                self._entries.append(_Entry(parts.said, call=False))
        for call in parts.calls:
            entry = _Entry(call.step, call=True)
            self._entries.append(entry)
            self._pending.append(entry)
            if call.call_id is not None:
                self._by_id[call.call_id] = entry
        for result in parts.results:
            self._result(result)
        if parts.reply is not None:
            self._reply(parts.reply, message)

    def _result(self, result: Result) -> None:
        entry = self._by_id.pop(result.call_id, None) if result.call_id is not None else None
        if entry is None or not any(entry is waiting for waiting in self._pending):
            # No usable id: results answer pending calls in order.
            if not self._pending:
                return
            entry = self._pending[0]
        self._pending = [waiting for waiting in self._pending if waiting is not entry]
        entry.result, entry.built = result, None

    def _reply(self, reply_hash: str, message: Message) -> None:
        """A user message: the reply to a preceding text step (consecutive user messages join)."""
        if not self._entries or self._entries[-1].call:
            return
        last = self._entries[-1]
        last.replies.append(message)
        if len(last.replies) > 1:  # the joined text's hash: rare, computed from the messages
            reply_hash = digest("\n".join(reply_text(self.format, reply) for reply in last.replies))
        last.reply_hash, last.built = reply_hash, None


def steps_from_openai_messages(messages: Sequence[Message]) -> list[Step]:
    """Steps of a Chat Completions conversation (see steps.py's docstring)."""
    parser = StepParser("openai")
    parser.feed(messages)
    return parser.steps


def steps_from_anthropic_messages(messages: Sequence[Message]) -> list[Step]:
    """Steps of an Anthropic Messages conversation (see steps.py's docstring)."""
    parser = StepParser("anthropic")
    parser.feed(messages)
    return parser.steps
