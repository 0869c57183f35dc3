"""StreamChannel: a run's single-consumer projection queue (LangGraph's `langgraph.stream.StreamChannel`).

The consumer drives the run: when its buffer is empty, iterating asks the run's pump for one more
graph event (`_request_more` / `_arequest_more`, wired by the run stream), so memory stays bounded
by the consumer's pace and no background thread or task is needed. Items are kept only once someone
subscribed; a named channel also forwards every push to the mux's main log (`_wire_fn`)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Generic, Protocol, TypeVar

T = TypeVar("T")


class PushSequencer(Protocol):
    """What a channel needs of the StreamMux that registers it (agent_runtime.stream.mux): the order
    stamp of each push."""

    def _next_push_seq(self) -> int: ...


class StreamChannel(Generic[T]):
    """A drainable queue with one subscriber (`tee(n)` / `atee(n)` for more). Bound to the sync or
    the async lane by the mux that registers it; its lifecycle (`close` / `fail`) is the mux's."""

    def __init__(self, name: str | None = None, *, maxlen: int | None = None) -> None:
        if maxlen is not None and maxlen <= 0:
            raise ValueError("StreamChannel maxlen must be a positive int or None")
        self.name = name
        self._maxlen = maxlen  # accepted as LangGraph's; the caller-driven pump already bounds memory
        self._items: deque[tuple[int, T]] = deque()  # (arrival stamp, item): interleave orders by stamp
        self._closed = False
        self._error: BaseException | None = None
        self._is_async: bool | None = None
        self._subscribed = False
        self._request_more: Callable[[], bool] | None = None
        self._arequest_more: Callable[[], Awaitable[bool]] | None = None
        self._wire_fn: Callable[[T], None] | None = None
        self._mux: PushSequencer | None = None

    # -- wiring (by the mux) ---------------------------------------------------------------------------
    def _bind_mux(self, mux: PushSequencer) -> None:
        self._mux = mux

    def _bind(self, *, is_async: bool) -> None:
        if self._is_async is not None:
            raise RuntimeError("StreamChannel is already bound")
        self._is_async = is_async

    def _wire(self, fn: Callable[[T], None]) -> None:
        """Forward every push to `fn` (the mux's main log, for a named channel)."""
        self._wire_fn = fn

    # -- producing -------------------------------------------------------------------------------------
    def push(self, item: T) -> None:
        if self._subscribed:
            if self._closed:
                raise RuntimeError("Cannot push to a closed StreamChannel")
            stamp = self._mux._next_push_seq() if self._mux is not None else 0
            self._items.append((stamp, item))
        if self._wire_fn is not None:
            self._wire_fn(item)

    def close(self) -> None:
        self._closed = True

    def fail(self, err: BaseException) -> None:
        self._error = err
        self._closed = True

    # -- consuming -------------------------------------------------------------------------------------
    def _subscribe(self, is_async: bool) -> None:
        if self._is_async is None:
            raise TypeError("StreamChannel has not been bound yet. Register the transformer with a StreamMux first.")
        if self._is_async and not is_async:
            raise TypeError("This StreamChannel is bound to async mode — use 'async for' instead.")
        if is_async and not self._is_async:
            raise TypeError("This StreamChannel is bound to sync mode — use 'for' instead.")
        if self._subscribed:
            fan_out = ".atee(n)" if is_async else ".tee(n)"
            raise RuntimeError(f"StreamChannel already has a subscriber; use {fan_out} for fan-out.")
        self._subscribed = True

    def __iter__(self) -> Iterator[T]:
        self._subscribe(is_async=False)
        return self._sync_cursor()

    def _sync_cursor(self) -> Iterator[T]:
        while True:
            if self._items:
                yield self._items.popleft()[1]
            elif self._closed:
                if self._error is not None:
                    raise self._error
                return
            elif (self._request_more is None or not self._request_more()) and not self._items and not self._closed:
                return  # the run has nothing more for now

    def __aiter__(self) -> AsyncIterator[T]:
        self._subscribe(is_async=True)
        return self._async_cursor()

    async def _async_cursor(self) -> AsyncIterator[T]:
        while True:
            if self._items:
                yield self._items.popleft()[1]
            elif self._closed:
                if self._error is not None:
                    raise self._error
                return
            elif (
                (self._arequest_more is None or not await self._arequest_more())
                and not self._items
                and not self._closed
            ):
                return

    def tee(self, n: int = 2) -> tuple[Iterator[T], ...]:
        """`n` independent iterators over this channel (each item copied into every branch)."""
        if n < 1:
            raise ValueError("tee() requires n >= 1")
        source = iter(self)
        buffers: list[deque[T]] = [deque() for _ in range(n)]
        exhausted = False

        def branch(buffer: deque[T]) -> Iterator[T]:
            nonlocal exhausted
            while True:
                if buffer:
                    yield buffer.popleft()
                    continue
                if exhausted:
                    return
                try:
                    item = next(source)
                except StopIteration:
                    exhausted = True
                    return
                for other in buffers:
                    other.append(item)

        return tuple(branch(buffer) for buffer in buffers)

    def atee(self, n: int = 2) -> tuple[AsyncIterator[T], ...]:
        """`n` independent async iterators; one branch at a time pulls from the channel (a lock)."""
        if n < 1:
            raise ValueError("atee() requires n >= 1")
        source = self.__aiter__()
        buffers: list[deque[T]] = [deque() for _ in range(n)]
        exhausted = False
        error: BaseException | None = None
        lock = asyncio.Lock()

        async def branch(buffer: deque[T]) -> AsyncIterator[T]:
            nonlocal exhausted, error
            while True:
                if buffer:
                    yield buffer.popleft()
                    continue
                if exhausted:
                    if error is not None:
                        raise error
                    return
                async with lock:
                    if buffer or exhausted:
                        continue
                    try:
                        item = await source.__anext__()
                    except StopAsyncIteration:
                        exhausted = True
                        continue
                    except Exception as exc:
                        error, exhausted = exc, True
                        continue
                    for other in buffers:
                        other.append(item)

        return tuple(branch(buffer) for buffer in buffers)
