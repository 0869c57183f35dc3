"""Cooperative pacing: long loops over a request's history give the event loop back every few ms.

One request may carry 100,000 messages; walking them is linear work that, done in one go, would stall
every other request on the replica for seconds. Loops written as step generators (``yield`` every few
hundred items) run to completion either at once (``finish``, for small inputs and tests) or paced
(``finish_paced``), which returns to the event loop whenever a time slice is used up.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Generator
from typing import TypeVar

T = TypeVar("T")
Steps = Generator[None, None, T]  # yields between chunks of work, returns the result

SLICE_S = 0.01  # longest stretch of work before the loop gets control back
CHUNK = 256  # items a step generator handles between two yields


class Pacer:
    """Shares one time slice among every paced loop of a request."""

    def __init__(self, slice_s: float = SLICE_S) -> None:
        self.slice_s = slice_s
        self._since = time.perf_counter()

    async def tick(self) -> None:
        now = time.perf_counter()
        if now - self._since >= self.slice_s:
            await asyncio.sleep(0)
            self._since = time.perf_counter()


def finish(steps: Steps[T]) -> T:
    """Run a step generator to its result without pausing."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: T = done.value
            return result


async def finish_paced(steps: Steps[T], pacer: Pacer) -> T:
    """Run a step generator to its result, giving the event loop back whenever the pacer's slice is used."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: T = done.value
            return result
        await pacer.tick()
