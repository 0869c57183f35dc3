"""The survey of a request's prompt blocks for breakpoint planning, and placing the planned marks.

Breakpoint planning needs, per block in the provider's order (tools -> system -> messages): whether the
client marked it, whether it may carry a mark, whether it is part of the static prefix, whether the
previous request held it, and the prefix's tokens up to it (only until the cache minimum is reached).
What a message's blocks say depends only on its content: it is derived once per content and kept in the
message's shared facts (gateway/history/), so a request that repeats the previous one plus a new turn
builds blocks for the new turn (and for messages it changed) only; past the cache minimum, the messages
already seen are added a chunk at a time by list operations that run in C (`add_known_run`: a long history
costs ~0.1 us a message rather than a pass of Python per message). Placing a mark finds its block by
position (the survey keeps where each unit starts) and copies the message it lands on first
(gateway/prompt_cache/work.py).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from itertools import accumulate, chain, compress, repeat
from operator import attrgetter, lt, ne, not_
from typing import Any, cast

from gateway.bounded import Caps, TenantLRU
from gateway.history import MessageFacts
from gateway.pacing import CHUNK, Steps
from gateway.prompt_cache.layout import Block, message_blocks, system_blocks, tool_blocks
from gateway.prompt_cache.prefix import PrefixBreak
from gateway.prompt_cache.system_text import SYSTEM_ROLES
from gateway.prompt_cache.tokens import PrefixTokens
from gateway.prompt_cache.work import WorkingCopy

# A group of blocks: the tools, the system, or the message at that index (plain ints: a history's worth
# of units costs no allocations the garbage collector tracks).
Unit = int
TOOLS, SYSTEM = -2, -1


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


@dataclass(frozen=True, slots=True, eq=False)
class KnownRun:
    """The tail of a survey that message facts added in bulk (`add_known_run`), from unit number `start`
    (the survey then `count` blocks long) to its end: what the next request of the session adds for the
    same units, when its survey reaches them in the same state (gateway/prompt_cache/turns.py)."""

    min_tokens: int
    start: int
    count: int
    units: list[Unit]  # every unit of the run (`units[start:]` of its survey)
    counts: list[int]  # each unit's blocks
    client: dict[int, Any]  # the client's marks in the run, by position
    static_end: int | None  # the last system block in the run (None: none)
    markable: list[bool]
    marked_units: list[Unit]  # the run's units with blocks, and where each starts
    starts: list[int]


@dataclass(frozen=True, slots=True, eq=False)
class SurveyHead:
    """What a request's survey derived from its messages' facts, for the session's next request, whose
    messages start with these (gateway/prompt_cache/turns.py): each message's blocks, and the run."""

    blocks: list[MessageBlocks | None]  # None: built from the message (the optimizer had copied it)
    run: KnownRun | None


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
    head: SurveyHead | None = None  # for the session's next request (None: no message facts)

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

    def add_known_run(self, units: list[Unit], known: list[MessageBlocks], found: PrefixBreak) -> None:
        """Messages' blocks from their facts (`known[i]`: of `units[i]`, a message), once the prefix has
        reached the cache minimum: what adding each in turn would add, in bulk."""
        counts = list(map(len, map(_MARKABLE, known)))
        starts = list(accumulate(counts, initial=self.count))
        for blocks, start in compress(zip(known, starts, strict=False), map(_MARKS, known)):
            for offset, mark in blocks.marks:
                self.client[start + offset] = mark
        for blocks, start in compress(zip(known, starts, strict=False), map(_SYSTEM, known)):
            self.static_end = start + len(blocks.markable) - 1
        self.markable.extend(chain.from_iterable(map(_MARKABLE, known)))
        added = starts[-1] - self.count
        if found.message_index is None or found.where == "system":  # every message or none shared
            self.common += added if _shared("messages", 0, found) else 0
        else:
            self.common += sum(compress(counts, map(lt, units, repeat(found.message_index))))
        self.tokens.add_reached(added)
        self.units.extend(compress(units, counts))
        self.starts.extend(compress(starts, counts))
        self.count = starts[-1]

    def add_run(self, run: KnownRun, found: PrefixBreak) -> None:
        """`add_known_run` over the run's units, as the request that surveyed them added them (the survey
        is where that one's was: list copies in C, and no look at each unit's facts)."""
        added = sum(run.counts)
        self.client.update(run.client)
        if run.static_end is not None:
            self.static_end = run.static_end
        self.markable += run.markable
        if found.message_index is None or found.where == "system":
            self.common += added if _shared("messages", 0, found) else 0
        else:
            self.common += sum(compress(run.counts, map(lt, run.units, repeat(found.message_index))))
        self.tokens.add_reached(added)
        self.units += run.marked_units
        self.starts += run.starts
        self.count += added


_MARKABLE, _MARKS, _SYSTEM = attrgetter("markable"), attrgetter("marks"), attrgetter("system")
_PROMPT_BLOCKS = attrgetter("prompt_blocks")


def _shared(section: str, message: int | None, found: PrefixBreak) -> bool:
    """Whether the previous request held a block of this section and message (blocks come tools ->
    system -> messages)."""
    if found.cause in ("first_request", "model_changed") or found.where == "tools":
        return False
    if found.where == "system":
        return section == "tools"
    return found.message_index is None or message is None or message < found.message_index


def _units(wire: str, work: WorkingCopy, known: list[MessageBlocks | None], system: list[int] | None) -> list[Unit]:
    """The units in the provider's order (OpenAI: LiteLLM hoists system messages ahead of the rest);
    `system`: the system messages' positions, when known (gateway/prompt_cache/shapes.py)."""
    messages = range(len(work.messages))
    if wire == "anthropic":
        return [TOOLS, SYSTEM, *messages]
    if system is not None:  # in C but for each system message
        hoisted = [False] * len(messages)
        for index in system:
            hoisted[index] = True
        return [TOOLS, *system, *compress(messages, map(not_, hoisted))]

    def is_system(index: int) -> bool:
        found = known[index] if index < len(known) else None
        if found is not None:
            return found.system
        message = work.messages[index]
        return isinstance(message, dict) and message.get("role") in SYSTEM_ROLES

    hoisted = [is_system(index) for index in range(len(work.messages))]
    return [TOOLS, *(u for u in messages if hoisted[u]), *(u for u in messages if not hoisted[u])]


def unit_blocks(work: WorkingCopy, wire: str, unit: Unit, *, own: bool = False) -> list[Block]:
    """The blocks of a unit in the working copy (`own`: of the caller's message, or the shared tools, copied
    first)."""
    if unit == TOOLS:
        if own:
            work.own_tools()
        return tool_blocks(work.body)
    if unit == SYSTEM:
        if own:
            work.own_field("system")
        return system_blocks(work.body)
    return message_blocks(wire, unit, work.own(unit) if own else work.messages[unit])


def survey_steps(
    work: WorkingCopy,
    wire: str,
    found: PrefixBreak,
    min_tokens: int,
    facts: list[MessageFacts] | None,
    head: SurveyHead | None = None,
    system: list[int] | None = None,
    static: bytes | None = None,
) -> Steps[Survey]:
    """`facts`: the shared facts of the caller's messages (None: every block is built), valid for the
    working copy's messages it has not copied (`owned`: maybe changed). `head`: what the session's
    previous request derived, when this one's messages start with that one's, `system` the system
    messages' positions, and `static` a digest of the content of the units before the history (the tools;
    Anthropic's system prompt) as in the working copy: all only save work."""
    survey = Survey(PrefixTokens(min_tokens))
    known: list[MessageBlocks | None] = []
    if facts is not None:
        layout, facts = _layout(wire), facts[: len(work.messages)]
        # Derived by an earlier request: the history's messages (the head's, without a look at each).
        done = len(head.blocks) if head is not None and len(head.blocks) <= len(facts) else 0
        if done:
            known = [*cast(SurveyHead, head).blocks, *map(_PROMPT_BLOCKS, facts[done:])]
        else:
            known = list(map(_PROMPT_BLOCKS, facts))
        layouts = map(getattr, known[done:], repeat("layout"), repeat(None))  # None: none derived yet
        derive = list(compress(range(done, len(known)), map(ne, layouts, repeat(layout))))
        owned = work.owned  # the copy may differ: its facts are not the caller message's
        for number, index in enumerate(index for index in derive if index not in owned):
            known[index] = blocks_facts(wire, index, work.messages[index], facts[index])
            if number % CHUNK == CHUNK - 1:
                yield
        for index in owned:
            if index < len(known):
                known[index] = None
        # The copied messages' entries are None: the next request builds their blocks too.
        survey.head = SurveyHead(known, None)  # not changed below, nor by the next request
    units = _units(wire, work, known, system)
    unit_known = _unit_known(wire, units, known, len(work.messages))
    number = _add_static(survey, work, wire, found, static) if static is not None else 0
    tail, used = None, None  # tail: (unit number, blocks, client marks) where the run starts
    while number < len(units):
        if survey.tokens.reached and unit_known[number] is not None:
            if tail is None:
                tail = (number, survey.count, len(survey.client))
                run = head.run if head is not None else None
                if run is not None and _fits(run, survey, units, unit_known, number):
                    survey.add_run(run, found)
                    number, used = number + len(run.units), run
                    yield
                    continue
            end = _known_end(unit_known, number, min(number + CHUNK, len(units)))
            survey.add_known_run(units[number:end], cast(list[MessageBlocks], unit_known[number:end]), found)
            number = end
            yield
            continue
        tail = used = None  # a unit without facts: the run so far is not the survey's tail
        _add_unit(survey, work, wire, units[number], found)
        number += 1
        if number % CHUNK == 0:
            yield
    if tail is not None and survey.head is not None:
        survey.head = SurveyHead(survey.head.blocks, _tail(survey, units, unit_known, tail, used))
    return survey


def _add_unit(survey: Survey, work: WorkingCopy, wire: str, unit: Unit, found: PrefixBreak) -> None:
    """A unit's blocks, built from the working copy."""
    start = survey.count
    blocks = unit_blocks(work, wire, unit)
    section = blocks[0].section if blocks else "messages"
    survey.add_blocks(blocks, _shared(section, unit if unit >= 0 else None, found))
    if survey.count > start:
        survey.units.append(unit)
        survey.starts.append(start)


@dataclass(frozen=True, slots=True, eq=False)
class StaticHead:
    """What the units before the history (`STATIC`: the tools; Anthropic's system prompt) add to an empty
    survey: the same for every request that sends the same content, under the same layout and minimum.
    An agent's are tens of kilobytes of blocks (its tools), built and sized on each request otherwise."""

    count: int
    client: tuple[tuple[int, Any], ...]
    markable: tuple[bool, ...]
    static_end: int | None
    sections: tuple[tuple[str, int], ...]  # (section, blocks) of each unit that has blocks
    units: tuple[Unit, ...]
    starts: tuple[int, ...]
    tokens: PrefixTokens  # never fed: copied into each survey


STATIC = {"anthropic": (TOOLS, SYSTEM), "openai": (TOOLS,)}
STATIC_KNOWN = 256  # distinct (content, layout, minimum) remembered: a deployment's agents send a handful
# Callers choose the tools: what one entry holds is bounded (its blocks; the texts its token bound holds,
# up to the minimum's bytes), so that 256 entries stay small. Beyond, the units are built each time.
STATIC_MAX_BLOCKS = 1024
STATIC_MAX_CHARS = 64 << 10
SHARED = ""  # the one "tenant" of the map: an entry is content any caller may send
_ENTRY_BYTES = 16  # what an entry holds a block, counted (its markable flag, start and position)
# The entries' own bounds bound the total: the byte cap only counts (STATIC_KNOWN of the largest, ~20 MB).
_STATIC_BYTES = STATIC_KNOWN * (STATIC_MAX_CHARS + _ENTRY_BYTES * STATIC_MAX_BLOCKS)
_static: TenantLRU[StaticHead] = TenantLRU(Caps(STATIC_KNOWN, _STATIC_BYTES, STATIC_KNOWN, _STATIC_BYTES))


def _add_static(survey: Survey, work: WorkingCopy, wire: str, found: PrefixBreak, content: bytes) -> int:
    """The units before the history added to `survey` (still empty), from what a request with the same
    `content` (digest) under the same wire and minimum added; how many units that is."""
    static = STATIC[_layout(wire)]
    key = f"{content.hex()}:{wire}:{survey.tokens.enough}"
    known = _static.get(key)
    if known is None:
        sections = []
        for unit in static:
            before = survey.count
            _add_unit(survey, work, wire, unit, found)
            if survey.count > before:
                sections.append(("tools" if unit == TOOLS else "system", survey.count - before))
        known = StaticHead(
            survey.count, tuple(survey.client.items()), tuple(survey.markable), survey.static_end, tuple(sections),
            tuple(survey.units), tuple(survey.starts), survey.tokens.copy(),
        )  # fmt: skip
        held = known.tokens.held_chars()
        if known.count <= STATIC_MAX_BLOCKS and held <= STATIC_MAX_CHARS:
            _static.put(key, SHARED, known, held + _ENTRY_BYTES * known.count)
        return len(static)
    survey.count, survey.static_end = known.count, known.static_end
    survey.client.update(known.client)
    survey.markable.extend(known.markable)
    survey.common = sum(blocks for section, blocks in known.sections if _shared(section, None, found))
    survey.units.extend(known.units)
    survey.starts.extend(known.starts)
    survey.tokens = known.tokens.copy()
    return len(static)


def _fits(
    head: KnownRun, survey: Survey, units: list[Unit], unit_known: list[MessageBlocks | None], number: int
) -> bool:
    """Whether `head` is what adding units from `number` on would add first: the same units, with
    facts (hence the same blocks: the caller checked the messages are the same), from the same state."""
    if head.start != number or head.count != survey.count or head.min_tokens != survey.tokens.enough:
        return False
    end = number + len(head.units)
    return units[number:end] == head.units and None not in unit_known[number:end]


def _tail(
    survey: Survey,
    units: list[Unit],
    unit_known: list[MessageBlocks | None],
    tail: tuple[int, int, int],
    head: KnownRun | None,
) -> KnownRun:
    """The survey's known run from `tail` (unit number, blocks and client marks there) to its end; its
    first units `head`'s (their blocks are not looked at again)."""
    start, count, marks = tail
    rest = cast(list[MessageBlocks], unit_known[start + len(head.units) if head is not None else start :])
    counts = list(map(len, map(_MARKABLE, rest)))
    first = bisect_left(survey.starts, count)
    static_end = survey.static_end
    return KnownRun(
        min_tokens=survey.tokens.enough,
        start=start,
        count=count,
        units=units[start:],
        counts=head.counts + counts if head is not None else counts,
        client=dict(list(survey.client.items())[marks:]),  # added in order: the run's are the last
        static_end=static_end if static_end is not None and static_end >= count else None,
        markable=survey.markable[count:],
        marked_units=survey.units[first:],
        starts=survey.starts[first:],
    )


def _unit_known(
    wire: str, units: list[Unit], known: list[MessageBlocks | None], messages: int
) -> list[MessageBlocks | None]:
    """Each unit's block facts (None: the tools, the system, a message without them)."""
    if wire == "anthropic":  # the tools, the system, then the messages in order
        return [None, None, *known, *repeat(None, messages - len(known))]
    padded = [*known, *repeat(None, messages - len(known))]
    return [None, *map(padded.__getitem__, units[1:])]  # the tools, then messages


def _known_end(unit_known: list[MessageBlocks | None], start: int, stop: int) -> int:
    """The end of the run of units with block facts from `start` (at most `stop`)."""
    try:
        return unit_known.index(None, start, stop)
    except ValueError:
        return stop


def set_marks(work: WorkingCopy, wire: str, survey: Survey, marks: dict[int, dict[str, Any]]) -> None:
    """Put each mark on the block at its position; a message that gets one is copied first."""
    by_unit: dict[int, list[int]] = {}
    for position in marks:
        by_unit.setdefault(bisect_right(survey.starts, position) - 1, []).append(position)
    for unit, positions in by_unit.items():
        blocks = unit_blocks(work, wire, survey.units[unit], own=True)
        for position in positions:
            blocks[position - survey.starts[unit]].set_mark(marks[position])
