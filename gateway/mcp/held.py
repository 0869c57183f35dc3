"""An async context held open by a task of its own: the MCP SDK's clients and session manager live in
anyio task groups, which one task must both enter and leave, while requests come and go in others."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Generic, TypeVar

T = TypeVar("T")
OPEN_TIMEOUT_S = 30.0
CLOSE_TIMEOUT_S = 5.0
RETRY_AFTER_S = 5.0  # after a failed opening, callers fail at once this long: a dead upstream slows no one


class NotOpen(Exception):
    """The context could not be opened (or failed to open less than RETRY_AFTER_S ago)."""


class Held(Generic[T]):
    """Opened on first use, shared by every caller, opened again after it failed or was dropped."""

    def __init__(self, opener: Callable[[], AbstractAsyncContextManager[T]], name: str) -> None:
        self._opener, self._name = opener, name
        self._value: T | None = None
        self._open = False  # a value was handed over (it may be None: a context that yields nothing)
        self._holder: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()
        self._lock = asyncio.Lock()
        self._retry_at = 0.0

    async def get(self, timeout_s: float = OPEN_TIMEOUT_S) -> T:
        async with self._lock:  # concurrent first callers share one opening
            if self._open and self._holder is not None and not self._holder.done():
                return self._value  # type: ignore[return-value]
            if time.monotonic() < self._retry_at:
                raise NotOpen(self._name)
            ready: asyncio.Future[T] = asyncio.get_running_loop().create_future()
            self._closing = asyncio.Event()
            self._holder = holder = asyncio.create_task(self._hold(ready, self._closing), name=self._name)
            try:
                value = await asyncio.wait_for(asyncio.shield(ready), min(timeout_s, OPEN_TIMEOUT_S))
            except Exception:
                self._retry_at = time.monotonic() + RETRY_AFTER_S
                holder.cancel()  # an opening still under way (a silent host) ends here
                raise NotOpen(self._name) from None
            except BaseException:  # this caller was cancelled, and with it the opening (the next caller retries)
                holder.cancel()
                raise
            self._value, self._open = value, True
            return value

    async def _hold(self, ready: asyncio.Future[T], closing: asyncio.Event) -> None:
        try:
            async with self._opener() as value:
                ready.set_result(value)
                await closing.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)

    def drop(self, value: T) -> None:
        """Close a value that failed (the next `get` opens a new one), unless it was replaced already."""
        if self._open and self._value is value:
            self._value, self._open = None, False
            self._closing.set()

    async def aclose(self) -> None:
        self._closing.set()
        holder = self._holder
        if holder is not None and not holder.done():
            with contextlib.suppress(TimeoutError):  # wait_for cancelled the stuck holder
                await asyncio.wait_for(holder, CLOSE_TIMEOUT_S)
