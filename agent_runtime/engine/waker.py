"""Waking the step of a run that streams as it goes (engine/runner.py) when an event arrives."""

from __future__ import annotations

import asyncio
import threading


class Waker:
    """Wakes the step of a run streaming as it goes when an event arrives (from any thread: a graph
    invoked inside a sync node runs on a pool thread). A plain future, awaited by the step's wait
    itself: the event reaches the reader two loop iterations after it was written (an Event would
    take three), so a task call's update goes out before its async caller's next call starts (as
    LangGraph's)."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()
        self.future: asyncio.Future[None] | None = None

    def wake(self) -> None:
        if threading.get_ident() == self.thread:
            self._set()
        else:
            self.loop.call_soon_threadsafe(self._set)

    def _set(self) -> None:
        future = self.future
        if future is not None and not future.done():
            future.set_result(None)

    def arm(self) -> asyncio.Future[None]:
        """A new future for the next wait (an event written before it is seen by `StepRun.advance`)."""
        self.future = self.loop.create_future()
        return self.future
