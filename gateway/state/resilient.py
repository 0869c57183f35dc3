"""Redis with a per-replica memory fallback, so a Redis outage degrades state instead of failing requests.

A hold or a place (`hold`, `admit`) is given back (`settle`, `leave`) where it may be: in Redis always, even
when Redis timed out while taking it (a timed-out call may still have run there), and also in the fallback
when it was taken there. A release Redis does not answer is queued and replayed there once it answers
again, so a slow moment never leaves a place or a hold in Redis until its lease ends.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

from gateway.state.base import Held, Meter, Op, Rider, StateStore, StateUnavailable, Window
from gateway.state.memory import MemoryStore

T = TypeVar("T")
Release = Callable[[StateStore], Awaitable[None]]
MAX_PENDING_RELEASES = 50_000  # beyond, the oldest are dropped: their leases still free them
MAX_FALLBACK_HOLDS = 100_000  # holds taken in the fallback and not yet settled (requests in flight)


class ResilientStore(StateStore):
    """Every call goes to the primary; when it fails, to the fallback, for `cooldown_s` before retrying.

    The cool-down keeps a dead Redis from adding its timeout to every request.
    """

    def __init__(
        self,
        primary: StateStore,
        on_fallback: Callable[[str], None],
        *,
        fallback: StateStore | None = None,
        cooldown_s: float = 2.0,
    ) -> None:
        self.primary = primary
        self.fallback = fallback or MemoryStore()
        self.on_fallback = on_fallback
        self.cooldown_s = cooldown_s
        self._down_until = 0.0
        self._pending: deque[Release] = deque(maxlen=MAX_PENDING_RELEASES)
        self._replaying: asyncio.Task[None] | None = None
        self._fallback_holds: dict[tuple[str, ...], None] = {}  # (holder, *holds keys), oldest first

    @property
    def backend(self) -> str:  # type: ignore[override]
        return self.primary.backend if self.healthy else f"{self.fallback.backend} (fallback)"

    @property
    def healthy(self) -> bool:
        return time.monotonic() >= self._down_until

    @property
    def pending_releases(self) -> int:
        """Releases waiting for Redis to answer again."""
        return len(self._pending)

    def _mark_down(self) -> None:
        self._down_until = time.monotonic() + self.cooldown_s

    async def _answer(self, operation: str, call: Callable[[StateStore], Awaitable[T]]) -> tuple[T, bool]:
        """The call's answer, and whether the fallback gave it."""
        if self.healthy:
            try:
                return await call(self.primary), False
            except StateUnavailable:
                self._mark_down()
        self.on_fallback(operation)
        return await call(self.fallback), True

    async def _route(self, operation: str, call: Callable[[StateStore], Awaitable[T]]) -> T:
        return (await self._answer(operation, call))[0]

    async def _release(self, operation: str, call: Release, replay: Release) -> bool:
        """Run a release in Redis; when Redis fails, queue `replay` for when it answers again (False)."""
        if self.healthy:
            try:
                await call(self.primary)
                return True
            except StateUnavailable:
                self._mark_down()
        self.on_fallback(operation)
        self._pending.append(replay)
        if self._replaying is None or self._replaying.done():
            self._replaying = asyncio.create_task(self._replay())
        return False

    async def _replay(self) -> None:
        """Replay the queued releases in Redis, oldest first, as soon as it answers again."""
        while self._pending:
            if not self.healthy:
                await asyncio.sleep(max(self._down_until - time.monotonic(), 0.0))
                continue
            replay = self._pending.popleft()
            try:
                await replay(self.primary)
            except StateUnavailable:
                self._pending.appendleft(replay)
                self._mark_down()

    def carries(self, client: object) -> bool:
        return self.healthy and self.primary.carries(client)

    async def batch(self, ops: Sequence[Op], riders: Sequence[Rider] = ()) -> list[Any]:
        if riders and not self.healthy:  # marked down since they boarded: each goes alone, under its owner's breaker
            for rider in riders:
                await _alone(rider)
            riders = ()
        # The fallback carries none: the primary told them how their trip went.
        return await self._route("batch", lambda s: s.batch(ops, riders if s is self.primary else ()))

    async def get(self, key: str) -> bytes | None:
        return await self._route("get", lambda s: s.get(key))

    async def set(self, key: str, value: bytes, ttl_s: float | None = None, *, only_new: bool = False) -> bool:
        return await self._route("set", lambda s: s.set(key, value, ttl_s, only_new=only_new))

    async def delete(self, *keys: str) -> int:
        return await self._route("delete", lambda s: s.delete(*keys))

    async def incr(self, key: str, amount: int = 1, ttl_s: float | None = None) -> int:
        return await self._route("incr", lambda s: s.incr(key, amount, ttl_s))

    async def incr_float(self, key: str, amount: float, ttl_s: float | None = None) -> float:
        return await self._route("incr_float", lambda s: s.incr_float(key, amount, ttl_s))

    async def push(self, key: str, *values: bytes, max_len: int | None = None, ttl_s: float | None = None) -> int:
        return await self._route("push", lambda s: s.push(key, *values, max_len=max_len, ttl_s=ttl_s))

    async def range(self, key: str, start: int = 0, end: int = -1) -> list[bytes]:
        return await self._route("range", lambda s: s.range(key, start, end))

    async def hset(self, key: str, mapping: dict[str, bytes], ttl_s: float | None = None) -> None:
        await self._route("hset", lambda s: s.hset(key, mapping, ttl_s))

    async def hgetall(self, key: str) -> dict[str, bytes]:
        return await self._route("hgetall", lambda s: s.hgetall(key))

    async def hswap(self, key: str, field: str, expected: bytes | None, value: bytes) -> bool:
        return await self._route("hswap", lambda s: s.hswap(key, field, expected, value))

    async def scan(self, prefix: str) -> AsyncIterator[str]:
        keys: list[str] = await self._route("scan", lambda s: _collect(s.scan(prefix)))
        for key in keys:
            yield key

    async def admit(self, windows: Sequence[Window], holder: str) -> float:
        return await self._route("admit", lambda s: s.admit(windows, holder))

    async def leave(self, keys: Sequence[str], holder: str) -> None:
        await self.fallback.leave(keys, holder)  # a place taken there while Redis was down; else nothing

        async def give_back(store: StateStore) -> None:  # idempotent: its own replay
            await store.leave(keys, holder)

        await self._release("leave", give_back, give_back)

    async def hold(self, meters: Sequence[Meter], holder: str, amounts: Sequence[float]) -> Held:
        held, in_fallback = await self._answer("hold", lambda s: s.hold(meters, holder, amounts))
        if in_fallback and held.refused is None:
            if len(self._fallback_holds) >= MAX_FALLBACK_HOLDS:
                del self._fallback_holds[next(iter(self._fallback_holds))]
            self._fallback_holds[_holding(meters, holder)] = None
        return held

    async def settle(
        self, meters: Sequence[Meter], holder: str, amounts: Sequence[float], *, replay: bool = False
    ) -> None:
        holding = _holding(meters, holder)
        taken_in_fallback = holding in self._fallback_holds
        self._fallback_holds.pop(holding, None)
        if taken_in_fallback:
            await self.fallback.settle(meters, holder, amounts)
        settled = await self._release(
            "settle",
            lambda s: s.settle(meters, holder, amounts, replay=replay),
            lambda s: s.settle(meters, holder, amounts, replay=True),
        )
        if not settled and not taken_in_fallback:
            await self.fallback.settle(meters, holder, amounts)  # counted here while Redis is down

    async def ping(self) -> bool:
        return await self.primary.ping()

    async def close(self) -> None:
        if self._replaying is not None:
            self._replaying.cancel()
        await self.primary.close()


def _holding(meters: Sequence[Meter], holder: str) -> tuple[str, ...]:
    return (holder, *(meter.holds for meter in meters))


async def _collect(keys: AsyncIterator[str]) -> list[Any]:
    return [key async for key in keys]


async def _alone(rider: Rider) -> None:
    """The rider's commands in a round trip of their own (its owner's breaker bounds it): stored or looked
    up before the request answers, as if it had ridden."""
    try:
        replies = await rider.alone()
    except Exception as error:  # its owner's breaker counted it
        rider.landed(error)
        return
    rider.landed(replies)
