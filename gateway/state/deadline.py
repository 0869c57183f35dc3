"""A Redis call's deadline that does not count the time its own event loop was stalled.

A timer on a stalled loop fires late, in the same turn as the socket's readiness; asyncio.timeout then
cancels a call whose reply already sits in the socket, and the replica blames Redis: it falls back to its
own memory (security issue 11: a session the guard had blocked got served while another tenant's huge
request held the loop in slices). Here the deadline counts only the time the loop could run: when it
falls due it subtracts the stalls of its window (loop_stalls.py) and, if the loop ran for less than the
timeout, waits out the rest. Redis that does not answer still fails the call after the timeout of a
running loop, plus the stalls the rest of the replica waited out as well.
"""

from __future__ import annotations

import asyncio
from types import TracebackType

from gateway.state.loop_stalls import StallClock, stall_clock

# A loop stalled all the while still ends a call that is never answered: after this many timeouts of
# wall time (5 s at the default 0.25 s; a replica that busy has its answers late anyway).
MAX_WAIT_FACTOR = 20
# What is left of the timeout below this share is not waited for: the loop did run (nearly) all of it.
STALL_SHARE = 0.1


class StallTolerantDeadline:
    """`async with StallTolerantDeadline(0.25):` raises TimeoutError in the block after 0.25 s of a running
    loop. None: no deadline (the caller's own bounds the block)."""

    __slots__ = ("_clock", "_handle", "_stalled_before", "_started", "_timeout", "timeout_s")

    def __init__(self, timeout_s: float | None) -> None:
        self.timeout_s = timeout_s
        self._timeout: asyncio.Timeout | None = None
        self._handle: asyncio.TimerHandle | None = None

    async def __aenter__(self) -> StallTolerantDeadline:
        if self.timeout_s is None:
            return self
        self._timeout = asyncio.timeout(None)  # cancels the task, and says TimeoutError, when expired
        await self._timeout.__aenter__()
        self._clock: StallClock = stall_clock()
        self._clock.opened()
        self._stalled_before = self._clock.stalled()
        self._started = asyncio.get_running_loop().time()
        self._arm(self.timeout_s)
        return self

    def _arm(self, delay_s: float) -> None:
        loop = asyncio.get_running_loop()
        self._handle = loop.call_at(loop.time() + delay_s, self._due)

    def _due(self) -> None:
        assert self._timeout is not None and self.timeout_s is not None
        elapsed = asyncio.get_running_loop().time() - self._started
        left = self.timeout_s - (elapsed - (self._clock.stalled() - self._stalled_before))
        if left > self.timeout_s * STALL_SHARE and elapsed < self.timeout_s * MAX_WAIT_FACTOR:
            self._arm(left)
            return
        self._timeout.reschedule(-1.0)  # already past: expires in the loop's next turn (a reply read first)

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._timeout is None:
            return
        if self._handle is not None:
            self._handle.cancel()
        self._clock.closed()
        await self._timeout.__aexit__(kind, error, traceback)  # raises TimeoutError for its cancellation


def backstop_s(timeout_s: float) -> float:
    """A timeout for redis-py's own timers (asyncio's, which stalls do fail): past the longest a deadline
    waits, so only what runs outside one (a connection's clean-up, the client's close) meets it."""
    return timeout_s * (MAX_WAIT_FACTOR + 4)
