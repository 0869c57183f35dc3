"""LiteLLM's own event loop, in a thread of its own.

LiteLLM (and the provider SDKs it drives) converts a request in pure Python on the loop that awaits it: the
OpenAI SDK alone walks every message of the body, about 1.5 s for an 8,000-message history. On the serving
loop that is 1.5 s in which no other request is served. On a loop of its own it still takes the interpreter
lock, but the interpreter hands the lock to the serving thread every switch interval (5 ms), so other
tenants' requests go on meanwhile.

Every LiteLLM call runs here, not only the large ones: LiteLLM caches its HTTP clients per process, and a
client must be used on the loop that made it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Ended:
    error: BaseException | None = None


class SideLoop:
    def __init__(self, name: str) -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name=self._name, daemon=True).start()
                self._loop = loop
            return self._loop

    async def run(self, work: Awaitable[T]) -> T:
        """`work` awaited on the side loop; cancelling the caller cancels it there."""
        future = asyncio.run_coroutine_threadsafe(_awaited(work), self.loop())
        return await asyncio.wrap_future(future)

    async def iterate(self, source: AsyncIterator[T]) -> AsyncIterator[T]:
        """The items of `source`, read on the side loop (ahead of the caller, as they arrive) and handed to
        the caller's loop one by one. A caller that stops early stops the reading and closes `source`."""
        here = asyncio.get_running_loop()
        items: asyncio.Queue[Any] = asyncio.Queue()

        async def pump() -> None:
            try:
                async for item in source:
                    here.call_soon_threadsafe(items.put_nowait, item)
                here.call_soon_threadsafe(items.put_nowait, _Ended())
            except BaseException as error:  # handed over to the reader, re-raised there
                here.call_soon_threadsafe(items.put_nowait, _Ended(error))
                if isinstance(error, asyncio.CancelledError):
                    raise
            finally:
                closing = getattr(source, "aclose", None)
                if closing is not None:
                    await closing()

        reading = asyncio.run_coroutine_threadsafe(pump(), self.loop())
        try:
            while True:
                item = await items.get()
                if isinstance(item, _Ended):
                    if item.error is not None and not isinstance(item.error, asyncio.CancelledError):
                        raise item.error
                    return
                yield item
        finally:
            reading.cancel()


async def _awaited(work: Awaitable[T]) -> T:
    return await work


LITELLM_LOOP = SideLoop("cachegate-litellm")
