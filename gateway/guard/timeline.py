"""When each tool call's result came back, from the times of the session's requests.

The history says what an agent did, not when. The session's answers are recorded (``Turn``: which tool
calls the answer made, when the request started and the answer ended); the first request after an
answer carries those calls' results. A long pause in between (``wait_gap_s``) means the agent waited
before looking again (a poll with a sleep in the harness, a slow check): its calls are marked
``Step.waits``, so repeating them is polling, not a loop, and timed (``Step.at``) for the wall-clock
cap on polling (``detect_long_polling``).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, replace

import orjson

from agent_runtime.guard import Step

TURNS_KEPT = 64  # the detectors look back a few dozen calls at most


@dataclass(frozen=True, slots=True)
class Turn:
    first_call: int  # the ordinal (in the history) of the first tool call the answer made
    calls: int  # tool calls the answer made
    start: float  # wall clock: the request arrived
    end: float  # the answer was complete

    def encode(self) -> bytes:
        return orjson.dumps([self.first_call, self.calls, self.start, self.end])


def decode(items: Sequence[bytes]) -> list[Turn]:
    turns = []
    for item in items:
        try:
            first_call, calls, start, end = orjson.loads(item)
            turns.append(Turn(int(first_call), int(calls), float(start), float(end)))
        except (ValueError, TypeError):  # a record of another version: that turn is simply unknown
            continue
    return turns


def timed_steps(
    steps: Sequence[Step], tool_calls: int, turns: Sequence[Turn], now: float, wait_gap_s: float | None
) -> list[Step]:
    """``steps`` (the tail of a history holding ``tool_calls`` calls) with the recorded calls timed, and
    marked as waiting after a pause of ``wait_gap_s`` or more before the request that carried their
    results (``now``: this request, for the newest answer)."""
    starts = sorted(turn.start for turn in turns)
    results: dict[int, tuple[float, bool]] = {}
    for turn in turns:
        following = bisect.bisect_left(starts, turn.end)
        returned = starts[following] if following < len(starts) else now
        waited = wait_gap_s is not None and returned - turn.end >= wait_gap_s
        for ordinal in range(turn.first_call, turn.first_call + turn.calls):
            results[ordinal] = (returned, waited)
    timed, ordinal = list(steps), tool_calls
    for index in range(len(timed) - 1, -1, -1):
        step = timed[index]
        if step.args_hash is None:  # not a tool call (text, an empty answer)
            continue
        ordinal -= 1
        found = results.get(ordinal)
        if found is not None:
            timed[index] = replace(step, at=found[0], waits=step.waits or found[1])
    return timed
