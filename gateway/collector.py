"""The garbage collector of a serving process, paced by the clock instead of by allocations.

A request's objects live as long as its provider takes to answer (seconds), and CPython starts a young
collection when *net* allocations pass a threshold: while the objects of finished requests die as fast
as new ones are made, that count barely grows, so young passes come seldom and each scans everything
made since the last one. Measured in the serving process at 500 req/s against a provider that answers
in 1.5 s (bench.production_load, `gc.callbacks` with thread CPU time): young passes of 10-30 ms and
middle-generation passes of 20-80 ms, with the event loop stopped; a fixed-latency provider then sends
the answers of the requests held up by a pause back together 1.5 s later, so one pause echoes. Together
they were most of the gateway's p99 above the provider's.

Paced, a young-and-middle pass runs every `YOUNG_EVERY_S`: it scans only what that much traffic left
alive (well under a millisecond) and moves the survivors to the old generation, which gets a full pass
every `FULL_EVERY_S` (for cycles that outlived a young pass), instead of whenever enough objects were
promoted, which under load is every few seconds. The startup heap is frozen out of every pass.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI

YOUNG_EVERY_S = 0.02
FULL_EVERY_S = 60.0
# CPython's own full passes off: the pacer runs them (a count of middle passes it never reaches).
NO_AUTOMATIC_FULL_PASS = 1 << 30


def freeze_startup_heap() -> None:
    """Keep what startup built (LiteLLM's price map, token encodings, config: ~370,000 objects) out of
    every pass: a full one would scan it all, ~0.1-0.2 s with the event loop stopped. Objects that live
    until the process ends are what freeze is for."""
    gc.collect()
    gc.freeze()


async def run_paced(young_every_s: float = YOUNG_EVERY_S, full_every_s: float = FULL_EVERY_S) -> None:
    """Young-and-middle passes on the clock and full passes on a longer one, until cancelled."""
    next_full = time.monotonic() + full_every_s
    while True:
        await asyncio.sleep(young_every_s)
        if time.monotonic() >= next_full:
            gc.collect(2)
            next_full = time.monotonic() + full_every_s
        else:
            gc.collect(1)


def take_over(app: FastAPI, young_every_s: float = YOUNG_EVERY_S, full_every_s: float = FULL_EVERY_S) -> None:
    """For the process that serves `app`: freeze the startup heap now and pace the collector for as long
    as the app runs (its lifespan)."""
    freeze_startup_heap()
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(served: Any) -> AsyncIterator[Any]:
        young, middle, full = gc.get_threshold()
        gc.set_threshold(young, middle, NO_AUTOMATIC_FULL_PASS)
        pacer = asyncio.create_task(run_paced(young_every_s, full_every_s))
        try:
            async with inner(served) as state:
                yield state
        finally:
            pacer.cancel()
            gc.set_threshold(young, middle, full)

    app.router.lifespan_context = lifespan
