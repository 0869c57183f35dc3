"""In-process state: the embedded default, and the per-replica fallback when Redis is down."""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import AsyncIterator, Sequence
from typing import Any

from gateway.state.base import Held, Meter, Op, Rider, StateStore, Window


class MemoryStore(StateStore):
    backend = "memory"

    def __init__(self, max_keys: int = 200_000) -> None:
        self._data: dict[str, Any] = {}
        self._expiry: dict[str, float] = {}
        self._max_keys = max_keys

    def _live(self, key: str) -> Any:
        deadline = self._expiry.get(key)
        if deadline is not None and deadline <= time.monotonic():
            self._data.pop(key, None)
            self._expiry.pop(key, None)
        return self._data.get(key)

    def _put(self, key: str, value: Any, ttl_s: float | None) -> None:
        if key not in self._data and len(self._data) >= self._max_keys:
            # Bounded memory: drop the oldest inserted key (dicts keep insertion order).
            oldest = next(iter(self._data))
            self._data.pop(oldest)
            self._expiry.pop(oldest, None)
        self._data[key] = value
        if ttl_s is not None:
            self._expiry[key] = time.monotonic() + ttl_s

    async def batch(self, ops: Sequence[Op], riders: Sequence[Rider] = ()) -> list[Any]:
        """Each op in turn, without a coroutine an op (a request's batches hold ~20 of them)."""
        if riders:
            raise ValueError("a memory store carries no commands of others")
        return [self._op(op) for op in ops]

    def _op(self, op: Op) -> Any:
        if op.kind == "get":
            return self._get(op.key)
        if op.kind == "range":
            return self._range(op.key, 0, -1)
        if op.kind == "incr":
            return self._incr(op.key, int(op.amount), op.ttl_s)
        if op.kind == "incr_float":
            return self._incr_float(op.key, op.amount, op.ttl_s)
        if op.kind == "set":
            return self._set(op.key, op.values[0], op.ttl_s)
        if op.kind == "incr_fields":
            return self._incr_fields(op.key, op.steps, op.ttl_s)
        return self._push(op.key, op.values, op.max_len, op.ttl_s)

    async def get(self, key: str) -> bytes | None:
        return self._get(key)

    def _get(self, key: str) -> bytes | None:
        value = self._live(key)
        if isinstance(value, int | float):  # counters read back as Redis returns them
            return str(value).encode()
        return value if isinstance(value, bytes) else None

    async def set(self, key: str, value: bytes, ttl_s: float | None = None, *, only_new: bool = False) -> bool:
        if only_new and self._live(key) is not None:
            return False
        return self._set(key, value, ttl_s)

    def _set(self, key: str, value: bytes, ttl_s: float | None) -> bool:
        self._expiry.pop(key, None)
        self._put(key, value, ttl_s)
        return True

    async def delete(self, *keys: str) -> int:
        removed = 0
        for key in keys:
            removed += self._live(key) is not None
            self._data.pop(key, None)
            self._expiry.pop(key, None)
        return removed

    async def incr(self, key: str, amount: int = 1, ttl_s: float | None = None) -> int:
        return self._incr(key, amount, ttl_s)

    def _incr(self, key: str, amount: int, ttl_s: float | None) -> int:
        value = int(self._live(key) or 0) + amount
        self._put(key, value, ttl_s if key not in self._expiry else None)
        return value

    async def incr_float(self, key: str, amount: float, ttl_s: float | None = None) -> float:
        return self._incr_float(key, amount, ttl_s)

    def _incr_float(self, key: str, amount: float, ttl_s: float | None) -> float:
        value = float(self._live(key) or 0.0) + amount
        self._put(key, value, ttl_s if key not in self._expiry else None)
        return value

    def _incr_fields(
        self, key: str, steps: Sequence[tuple[str, int | float]], ttl_s: float | None
    ) -> dict[str, int | float]:
        current: dict[str, int | float] = self._live(key) or {}
        after = {name: type(amount)(current.get(name, 0)) + amount for name, amount in steps}
        self._put(key, {**current, **after}, ttl_s if key not in self._expiry else None)
        return after

    async def push(self, key: str, *values: bytes, max_len: int | None = None, ttl_s: float | None = None) -> int:
        return self._push(key, values, max_len, ttl_s)

    def _push(self, key: str, values: Sequence[bytes], max_len: int | None, ttl_s: float | None) -> int:
        # A deque bounded at max_len: appending is O(1) however long the list (request records: 10,000).
        items: deque[bytes] | None = self._live(key)
        if items is None or items.maxlen != max_len:
            items = deque(items or (), maxlen=max_len)
        items.extend(values)
        self._put(key, items, ttl_s)
        return len(items)

    async def range(self, key: str, start: int = 0, end: int = -1) -> list[bytes]:
        return self._range(key, start, end)

    def _range(self, key: str, start: int, end: int) -> list[bytes]:
        items: deque[bytes] = self._live(key) or deque()
        size = len(items)
        first, last = (start + size if start < 0 else start), (end + size if end < 0 else end) + 1
        return list(itertools.islice(items, max(first, 0), max(last, 0)))

    async def hset(self, key: str, mapping: dict[str, bytes], ttl_s: float | None = None) -> None:
        current: dict[str, bytes] = dict(self._live(key) or {})
        current.update(mapping)
        self._put(key, current, ttl_s)

    async def hgetall(self, key: str) -> dict[str, bytes]:
        return dict(self._live(key) or {})

    async def hswap(self, key: str, field: str, expected: bytes | None, value: bytes) -> bool:
        if (await self.hgetall(key)).get(field) != expected:
            return False
        await self.hset(key, {field: value})
        return True

    async def scan(self, prefix: str) -> AsyncIterator[str]:
        for key in [k for k in self._data if k.startswith(prefix)]:
            if self._live(key) is not None:
                yield key

    def _holders(self, window: Window, now: float) -> dict[str, float]:
        """The window's holders (holder -> when its place frees), expired ones dropped."""
        holders: dict[str, float] = self._live(window.key) or {}
        live = {holder: until for holder, until in holders.items() if until > now}
        self._put(window.key, live, window.seconds)
        return live

    async def admit(self, windows: Sequence[Window], holder: str) -> float:
        now = time.monotonic()
        held = [(window, self._holders(window, now)) for window in windows]
        waits = [min(h.values()) - now for window, h in held if len(h) >= window.limit]
        if waits:
            return max(max(waits), 0.001)
        for window, holders in held:
            holders[holder] = now + window.seconds
        return 0.0

    async def leave(self, keys: Sequence[str], holder: str) -> None:
        for key in keys:
            holders = self._live(key)
            if holders is not None:
                holders.pop(holder, None)

    def _holds(self, meter: Meter, now: float) -> dict[str, tuple[float, float]]:
        """The meter's holds (holder -> (until, amount)), expired ones dropped."""
        holds: dict[str, tuple[float, float]] = self._live(meter.holds) or {}
        live = {holder: hold for holder, hold in holds.items() if hold[0] > now}
        self._put(meter.holds, live, meter.seconds)
        return live

    def _spent(self, meter: Meter) -> float:
        return float(self._live(meter.spent) or 0.0) if meter.spent is not None else 0.0

    async def hold(self, meters: Sequence[Meter], holder: str, amounts: Sequence[float]) -> Held:
        now = time.monotonic()
        held = [self._holds(meter, now) for meter in meters]
        spent = [self._spent(meter) for meter in meters]
        for index, (meter, holds) in enumerate(zip(meters, held, strict=True)):
            if spent[index] + sum(amount for _, amount in holds.values()) >= meter.limit:
                wait = min((until for until, _ in holds.values()), default=now) - now
                return Held(index, max(wait, 0.0), spent)
        for meter, holds, amount in zip(meters, held, amounts, strict=True):
            holds[holder] = (now + meter.seconds, amount)
        return Held(None, 0.0, spent)

    async def settle(
        self, meters: Sequence[Meter], holder: str, amounts: Sequence[float], *, replay: bool = False
    ) -> None:
        now = time.monotonic()
        for meter, amount in zip(meters, amounts, strict=True):
            holds = self._holds(meter, now)
            held = holds.pop(holder, None) is not None
            if amount <= 0 or (replay and not held):
                continue
            if meter.spent is not None:
                await self.incr_float(meter.spent, amount, meter.spent_ttl_s)
            else:
                holds[holder] = (now + meter.seconds, amount)

    async def ping(self) -> bool:
        return True
