"""Where entries live: in-process (the embedded default) or Redis (shared by every replica).

Both are bounded: past `max_entries` the oldest stored entries are evicted. Redis failures raise
CacheUnavailable and open a short circuit breaker, so while Redis is down or slow the cache is skipped
at once (counted by the caller) instead of adding a timeout to every request. The cache does not use
the state layer's per-replica memory fallback: a replica-local cache during an outage would serve
answers the other replicas cannot purge.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from gateway.state.deadline import StallTolerantDeadline
from gateway.state.exchange import Command, exchange
from gateway.state.redis import glob_escape, scanned

T = TypeVar("T")
Queued = Sequence[Command]  # Redis commands a write sends along, in its round trip
KEY_ROOT = "rc:"  # entry keys; bookkeeping keys live under META_ROOT so prefix scans skip them
META_ROOT = "rcmeta:"
MGET_CHUNK = 500


class CacheUnavailable(Exception):
    """The backend could not answer in time; the request goes on uncached."""


class EntryBackend(ABC):
    shared: bool  # entries are visible to other replicas (so vectors travel with them)

    @abstractmethod
    async def get(self, key: str) -> bytes | None: ...

    @abstractmethod
    async def get_many(self, keys: list[str]) -> list[bytes | None]: ...

    @abstractmethod
    async def put(self, key: str, value: bytes, ttl_s: float, also: Queued | None = None) -> list[str]:
        """Store a value; returns the keys evicted to stay within the size bound. `also`: more commands
        (Redis: sent in the same round trip, after the write)."""

    @abstractmethod
    async def delete(self, keys: list[str]) -> int: ...

    @abstractmethod
    async def keys(self, prefix: str) -> list[str]:
        """Every live key starting with prefix (admin purges and replica reloads only)."""


class MemoryBackend(EntryBackend):
    shared = False

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._data: OrderedDict[str, tuple[bytes, float]] = OrderedDict()

    def _live(self, key: str) -> bytes | None:
        found = self._data.get(key)
        if found is None:
            return None
        if found[1] <= time.monotonic():
            del self._data[key]
            return None
        return found[0]

    async def get(self, key: str) -> bytes | None:
        return self._live(key)

    async def get_many(self, keys: list[str]) -> list[bytes | None]:
        return [self._live(k) for k in keys]

    async def put(self, key: str, value: bytes, ttl_s: float, also: Queued | None = None) -> list[str]:
        self._data.pop(key, None)
        self._data[key] = (value, time.monotonic() + ttl_s)
        evicted = []
        while len(self._data) > self.max_entries:
            evicted.append(self._data.popitem(last=False)[0])
        return evicted

    async def delete(self, keys: list[str]) -> int:
        return sum(self._data.pop(k, None) is not None for k in keys)

    async def keys(self, prefix: str) -> list[str]:
        return [k for k in list(self._data) if k.startswith(prefix) and self._live(k) is not None]


class Breaker:
    """Bounds each call by `timeout_s` of a running event loop (deadline.py); fails fast for `cooldown_s`
    after a backend error."""

    def __init__(self, timeout_s: float = 0.25, cooldown_s: float = 2.0) -> None:
        self.timeout_s = timeout_s
        self.cooldown_s = cooldown_s
        self._down_until = 0.0

    @property
    def down(self) -> bool:
        return time.monotonic() < self._down_until

    def alone(self, client: aioredis.Redis, commands: Sequence[Command]) -> Callable[[], Awaitable[list[Any]]]:
        """A rider's `alone` (gateway/state/base.py): its commands in a round trip of their own, under this
        breaker, error replies in their places as a ridden trip gives them."""
        return lambda: self.call(lambda: exchange(client, commands, errors_in_place=True))

    def trip(self) -> None:
        """A write that went without `call` failed: fail fast from now on, as `call` would."""
        self._down_until = time.monotonic() + self.cooldown_s

    async def call(self, operation: Callable[[], Awaitable[T]], *, bounded: bool = True) -> T:
        """`bounded=False`: the operation bounds its own steps (a scan, page by page)."""
        if self.down:
            raise CacheUnavailable("redis marked down")
        try:
            async with StallTolerantDeadline(self.timeout_s if bounded else None):
                return await operation()
        except (RedisError, OSError, TimeoutError) as exc:
            self.trip()
            raise CacheUnavailable(f"redis: {type(exc).__name__}") from exc


class RedisBackend(EntryBackend):
    """Entries as Redis strings with a TTL; a sorted set of keys by write time bounds their number. Every
    call runs under its breaker's deadline."""

    shared = True

    def __init__(self, client: aioredis.Redis, prefix: str, max_entries: int, breaker: Breaker) -> None:
        self.client = client
        self.prefix = prefix
        self.max_entries = max_entries
        self.breaker = breaker
        self.order_key = f"{prefix}{META_ROOT}order"

    def _k(self, key: str) -> str:
        return self.prefix + key

    async def get(self, key: str) -> bytes | None:
        value: Any = await self.breaker.call(lambda: self.client.get(self._k(key)))
        return bytes(value) if value is not None else None

    async def get_many(self, keys: list[str]) -> list[bytes | None]:
        # Pipelined GETs, not MGET: in a Redis Cluster the entries live on many slots.
        found: list[bytes | None] = []
        for start in range(0, len(keys), MGET_CHUNK):
            chunk = [self._k(k) for k in keys[start : start + MGET_CHUNK]]
            values: Any = await self.breaker.call(lambda chunk=chunk: self._get_all(chunk))  # type: ignore[misc]
            found.extend(bytes(v) if v is not None else None for v in values)
        return found

    async def _get_all(self, keys: list[str]) -> list[Any]:
        return await exchange(self.client, [("GET", key) for key in keys])

    def write_commands(self, key: str, value: bytes, ttl_s: float) -> list[Command]:
        """A put's own commands: the entry, its place in the eviction order, then the entry count (`trim`)."""
        return [
            ("SET", self._k(key), value, "PX", max(int(ttl_s * 1000), 1)),
            ("ZADD", self.order_key, time.time(), key),
            ("ZCARD", self.order_key),
        ]

    async def put(self, key: str, value: bytes, ttl_s: float, also: Queued | None = None) -> list[str]:
        async def run() -> list[str]:
            write = self.write_commands(key, value, ttl_s)
            replies = await exchange(self.client, [*write, *(also or ())])
            return await self.trim(int(replies[2]))

        return await self.breaker.call(run)

    async def trim(self, size: int) -> list[str]:
        """Evict the oldest entries past `max_entries` (`size`: the count a write's ZCARD gave); their keys."""
        if size <= self.max_entries:
            return []
        popped: Any = await self.client.zpopmin(self.order_key, size - self.max_entries)
        evicted = [member.decode() for member, _ in popped]
        if evicted:  # one key per command: entries live on many slots
            await exchange(self.client, [("DEL", self._k(member)) for member in evicted])
        return evicted

    async def delete(self, keys: list[str]) -> int:
        if not keys:
            return 0

        async def run() -> int:
            commands: list[Command] = [("DEL", self._k(key)) for key in keys]  # entries live on many slots
            replies = await exchange(self.client, [*commands, ("ZREM", self.order_key, *keys)])
            return sum(int(deleted) for deleted in replies[:-1])

        return await self.breaker.call(run)

    async def keys(self, prefix: str) -> list[str]:
        async def run() -> list[str]:
            pattern = glob_escape(self._k(prefix)) + "*"
            found = scanned(self.client, pattern, 1000, self.breaker.timeout_s)
            return [raw.decode()[len(self.prefix) :] async for raw in found]

        return await self.breaker.call(run, bounded=False)
