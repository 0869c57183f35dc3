"""The survey of a request's prompt blocks for breakpoint planning, and placing the planned marks.

Breakpoint planning needs, per block in the provider's order (tools -> system -> messages): whether the
client marked it, whether it may carry a mark, whether it is part of the static prefix, whether the
previous request held it, and the prefix's tokens up to it (only until the cache minimum is reached).
What a message's blocks say depends only on its content: it is derived once per content and kept in the
message's shared facts (gateway/history/), so a request that repeats the previous one plus a new turn
builds blocks for the new turn (and for messages it changed) only; past the cache minimum, a message
already seen costs a few list operations. Placing a mark finds its block by position (the survey keeps
where each unit starts) and copies the message it lands on first (gateway/prompt_cache/work.py).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any, Literal

from gateway.history import MessageFacts
from gateway.pacing import CHUNK, Steps
from gateway.prompt_cache.layout import Block, message_blocks, system_blocks, tool_blocks
from gateway.prompt_cache.prefix import PrefixBreak
from gateway.prompt_cache.system_text import SYSTEM_ROLES
from gateway.prompt_cache.tokens import PrefixTokens
from gateway.prompt_cache.work import WorkingCopy

Unit = tuple[Literal["tools", "system", "message"], int]  # a group of blocks: the tools, the system, a message


@dataclass(frozen=True, slots=True, eq=False)
class MessageBlocks:
    """What one message content's blocks say (under one block layout: Anthropic's or OpenAI's)."""

    layout: str
    system: bool  # an OpenAI system/developer message: hoisted ahead of the conversation, static prefix
    markable: tuple[bool, ...]
    marks: tuple[tuple[int, Any], ...]  # (offset in the message, the client's mark)


def _layout(wire: str) -> str:
    return "anthropic" if wire == "anthropic" else "openai"


def blocks_facts(wire: str, index: int, message: Any, facts: MessageFacts) -> MessageBlocks:
    """The message's block facts (derived now if no request derived them yet)."""
    layout, known = _layout(wire), facts.prompt_blocks
    if known is not None and known.layout == layout:
        return known
    blocks = message_blocks(wire, index, message)
    system = layout == "openai" and isinstance(message, dict) and message.get("role") in SYSTEM_ROLES
    marks = tuple((offset, block.mark) for offset, block in enumerate(blocks) if block.mark is not None)
    known = facts.prompt_blocks = MessageBlocks(layout, system, tuple(b.markable for b in blocks), marks)
    return known


@dataclass(slots=True)
class Survey:
    """One pass over the blocks: what breakpoint planning needs from each (plain values, not blocks)."""

    tokens: PrefixTokens
    count: int = 0
    client: dict[int, Any] = field(default_factory=dict)  # position -> the client's mark
    markable: list[bool] = field(default_factory=list)
    static_end: int | None = None
    common: int = 0  # leading blocks the previous request shares with this one
    units: list[Unit] = field(default_factory=list)  # every unit with blocks, in order
    starts: list[int] = field(default_factory=list)  # the position of each unit's first block

    def add_blocks(self, blocks: list[Block], shared: bool) -> None:
        for block in blocks:
            mark = block.mark
            if mark is not None:
                self.client[self.count] = mark
            self.markable.append(block.markable)
            if block.section != "messages":
                self.static_end = self.count
            self.common += shared
            self.tokens.add(block)
            self.count += 1

    def add_known(self, known: MessageBlocks, shared: bool) -> None:
        """A message's blocks from its facts, once the prefix has reached the cache minimum."""
        for offset, mark in known.marks:
            self.client[self.count + offset] = mark
        count = len(known.markable)
        self.markable.extend(known.markable)
        if known.system:
            self.static_end = self.count + count - 1
        self.common += count if shared else 0
        self.tokens.add_reached(count)
        self.count += count


def _shared(section: str, message: int | None, found: PrefixBreak) -> bool:
    """Whether the previous request held a block of this section and message (blocks come tools ->
    system -> messages)."""
    if found.cause in ("first_request", "model_changed") or found.where == "tools":
        return False
    if found.where == "system":
        return section == "tools"
    return found.message_index is None or message is None or message < found.message_index


def _units(wire: str, work: WorkingCopy, known: list[MessageBlocks | None]) -> list[Unit]:
    """The units in the provider's order (OpenAI: LiteLLM hoists system messages ahead of the rest)."""
    messages: list[Unit] = [("message", index) for index in range(len(work.messages))]
    if wire == "anthropic":
        return [("tools", 0), ("system", 0), *messages]

    def is_system(index: int) -> bool:
        found = known[index] if index < len(known) else None
        if found is not None:
            return found.system
        message = work.messages[index]
        return isinstance(message, dict) and message.get("role") in SYSTEM_ROLES

    hoisted = [is_system(index) for index in range(len(work.messages))]
    return [("tools", 0), *(u for u in messages if hoisted[u[1]]), *(u for u in messages if not hoisted[u[1]])]


def unit_blocks(work: WorkingCopy, wire: str, unit: Unit, *, own: bool = False) -> list[Block]:
    """The blocks of a unit in the working copy (`own`: of the caller's message copied first)."""
    kind, index = unit
    if kind == "tools":
        return tool_blocks(work.body)
    if kind == "system":
        return system_blocks(work.body)
    return message_blocks(wire, index, work.own(index) if own else work.messages[index])


def survey_steps(
    work: WorkingCopy, wire: str, found: PrefixBreak, min_tokens: int, facts: list[MessageFacts] | None
) -> Steps[Survey]:
    """`facts`: the shared facts of the caller's messages (None: every block is built), valid for the
    working copy's messages it has not copied (`owned`: maybe changed)."""
    survey = Survey(PrefixTokens(min_tokens))
    known: list[MessageBlocks | None] = []
    if facts is not None:
        for index, message_facts in enumerate(facts[: len(work.messages)]):
            owned = index in work.owned  # the copy may differ: its facts are not the caller message's
            known.append(None if owned else blocks_facts(wire, index, work.messages[index], message_facts))
            if index % CHUNK == CHUNK - 1:
                yield
    for number, unit in enumerate(_units(wire, work, known)):
        kind, index = unit
        start = survey.count
        message = index if kind == "message" else None
        found_blocks = known[index] if message is not None and index < len(known) else None
        if found_blocks is not None and survey.tokens.reached:
            section = "system" if found_blocks.system else "messages"
            survey.add_known(found_blocks, _shared(section, message, found))
        else:
            blocks = unit_blocks(work, wire, unit)
            section = blocks[0].section if blocks else "messages"
            survey.add_blocks(blocks, _shared(section, message, found))
        if survey.count > start:
            survey.units.append(unit)
            survey.starts.append(start)
        if number % CHUNK == CHUNK - 1:
            yield
    return survey


def set_marks(work: WorkingCopy, wire: str, survey: Survey, marks: dict[int, dict[str, Any]]) -> None:
    """Put each mark on the block at its position; a message that gets one is copied first."""
    by_unit: dict[int, list[int]] = {}
    for position in marks:
        by_unit.setdefault(bisect_right(survey.starts, position) - 1, []).append(position)
    for unit, positions in by_unit.items():
        blocks = unit_blocks(work, wire, survey.units[unit], own=True)
        for position in positions:
            blocks[position - survey.starts[unit]].set_mark(marks[position])
