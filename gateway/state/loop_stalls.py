"""How long an event loop has been unable to run its callbacks, measured while someone needs to know.

A tick every TICK_S that wakes up late saw the loop held by a long synchronous step (another request's
huge body, a GC pass). Deadlines (deadline.py) subtract the stalls of their window from the time they
judge a Redis call by. The tick runs only while a deadline is open, so an idle replica does not wake
for it.
"""

from __future__ import annotations

import asyncio
import weakref

from gateway.pacing import SLICE_S

BUSY_S = 0.002  # a turn this slow is another task's long step, not the loop's own overhead
# Shorter than a paced slice by more than BUSY_S: a tick is always due inside a slice that holds the loop,
# so it wakes late enough to count it. A tick as long as a slice locks in phase with slices resumed
# behind it (through a future, as `asyncio.to_thread` resumes): each tick finds the loop just free, and a
# loop busy with slices all the time counted no stall at all.
TICK_S = SLICE_S / 2


class StallClock:
    """One event loop's stalls, summed while at least one deadline is open. Used from that loop only (it
    holds no reference to it: the registry below is keyed by the loop, weakly)."""

    __slots__ = ("_tick_when", "open", "stalled_s")

    def __init__(self) -> None:
        self._tick_when: float | None = None
        self.open = 0
        self.stalled_s = 0.0

    def opened(self) -> None:
        self.open += 1
        if self._tick_when is None:
            self._schedule()

    def closed(self) -> None:
        self.open -= 1  # the tick stops itself once none is open

    def stalled(self) -> float:
        """The stalls so far, the one the loop is just waking from included (its tick not yet run)."""
        if self._tick_when is None:
            return self.stalled_s
        return self.stalled_s + _stall(asyncio.get_running_loop().time() - self._tick_when)

    def _schedule(self) -> None:
        loop = asyncio.get_running_loop()
        when = loop.time() + TICK_S
        self._tick_when = when
        loop.call_at(when, self._ticked, when)

    def _ticked(self, when: float) -> None:
        self.stalled_s += _stall(asyncio.get_running_loop().time() - when)
        if self.open > 0:
            self._schedule()
        else:
            self._tick_when = None


def _stall(late_s: float) -> float:
    """A tick late by more than BUSY_S found the loop held for its whole wait, not just the lateness: the
    step that held it may have begun right after the tick was set (a loop running another request's
    slices holds it for each slice, and one tick in a slice sees only the slice's end). Over-counting only
    lengthens a deadline that stalls did hit; under-counting fails calls Redis answered."""
    return late_s + TICK_S if late_s > BUSY_S else 0.0


_CLOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, StallClock] = weakref.WeakKeyDictionary()


def stall_clock() -> StallClock:
    """The running loop's clock."""
    loop = asyncio.get_running_loop()
    clock = _CLOCKS.get(loop)
    if clock is None:
        clock = _CLOCKS[loop] = StallClock()
    return clock
