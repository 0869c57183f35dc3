"""Redis with a per-replica memory fallback, so a Redis outage degrades state instead of failing requests."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

from gateway.state.base import Held, Meter, Op, StateStore, StateUnavailable, Window
from gateway.state.memory import MemoryStore

T = TypeVar("T")


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

    @property
    def backend(self) -> str:  # type: ignore[override]
        return self.primary.backend if self.healthy else f"{self.fallback.backend} (fallback)"

    @property
    def healthy(self) -> bool:
        return time.monotonic() >= self._down_until

    async def _route(self, operation: str, call: Callable[[StateStore], Awaitable[T]]) -> T:
        if self.healthy:
            try:
                return await call(self.primary)
            except StateUnavailable:
                self._down_until = time.monotonic() + self.cooldown_s
        self.on_fallback(operation)
        return await call(self.fallback)

    async def batch(self, ops: Sequence[Op]) -> list[Any]:
        return await self._route("batch", lambda s: s.batch(ops))

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

    async def scan(self, prefix: str) -> AsyncIterator[str]:
        keys: list[str] = await self._route("scan", lambda s: _collect(s.scan(prefix)))
        for key in keys:
            yield key

    async def admit(self, windows: Sequence[Window], holder: str) -> float:
        return await self._route("admit", lambda s: s.admit(windows, holder))

    async def leave(self, keys: Sequence[str], holder: str) -> None:
        await self._route("leave", lambda s: s.leave(keys, holder))

    async def hold(self, meters: Sequence[Meter], holder: str, amounts: Sequence[float]) -> Held:
        return await self._route("hold", lambda s: s.hold(meters, holder, amounts))

    async def settle(self, meters: Sequence[Meter], holder: str, amounts: Sequence[float]) -> None:
        await self._route("settle", lambda s: s.settle(meters, holder, amounts))

    async def ping(self) -> bool:
        return await self.primary.ping()

    async def close(self) -> None:
        await self.primary.close()


async def _collect(keys: AsyncIterator[str]) -> list[Any]:
    return [key async for key in keys]
