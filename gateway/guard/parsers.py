"""Per-replica incremental parsing: each session keeps a StepParser that only reads new messages.

Decisions never depend on how much of the history a replica parsed: detectors read the tail, and the
session's position is the number of messages in the request. So a replica that first sees a session
mid-way parses only the tail the detectors need (``tail_messages``), starting at an assistant turn so
no step is cut in half; later requests extend that parser. Bounded LRU: an evicted session is re-parsed
from its tail.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_runtime.guard import Step, StepKind, StepParser

Message = Mapping[str, Any]


def tail_start(messages: Sequence[Message], keep: int) -> int:
    """Index of the assistant message that starts the last ``keep`` messages (or 0)."""
    start = max(0, len(messages) - keep)
    while start > 0 and messages[start].get("role") != "assistant":
        start -= 1
    return start


def history_tool_calls(fmt: str, messages: Sequence[Message]) -> int:
    """Tool calls the assistant made in the whole history (cheap: no parsing, no hashing)."""
    count = 0
    for message in messages:
        if message.get("role") != "assistant":
            continue
        if fmt == "openai":
            count += len(message.get("tool_calls") or [])
        elif isinstance(content := message.get("content"), list):
            count += sum(1 for block in content if isinstance(block, Mapping) and block.get("type") == "tool_use")
    return count


def tail_steps(steps: Sequence[Step], tool_calls: int) -> list[Step]:
    """The shortest tail of ``steps`` holding ``tool_calls`` tool calls (all of them if fewer)."""
    seen = 0
    for index in range(len(steps) - 1, -1, -1):
        if steps[index].kind is StepKind.TOOL_CALL:
            seen += 1
            if seen >= tool_calls:
                return list(steps[index:])
    return list(steps)


@dataclass(eq=False)
class _Parsed:
    parser: StepParser
    offset: int  # index of the first message fed to the parser


class SessionParsers:
    """Steps of each session's history, parsed incrementally (one parser per session, LRU-bounded)."""

    def __init__(self, max_sessions: int) -> None:
        self.max_sessions = max_sessions
        self._parsed: OrderedDict[str, _Parsed] = OrderedDict()

    def steps(self, session: str, fmt: str, messages: Sequence[Message], keep: int) -> list[Step]:
        """The steps of (at least the last ``keep`` messages of) ``messages``."""
        parsed = self._parsed.get(session)
        if parsed is None or parsed.parser.format != fmt or len(messages) < parsed.offset + 1:
            parsed = _Parsed(StepParser(fmt), tail_start(messages, keep))
            self._parsed[session] = parsed
            if len(self._parsed) > self.max_sessions:
                self._parsed.popitem(last=False)
        else:
            self._parsed.move_to_end(session)
        return parsed.parser.sync(messages[parsed.offset :])

    def forget(self, session: str) -> None:
        self._parsed.pop(session, None)
