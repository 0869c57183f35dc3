"""One request's view of the shared store, so that its stages' state operations travel together.

On Redis every call is a round trip, and a round trip costs the gateway a socket write and read (tens of
microseconds of CPU) whatever it carries. So a request's stages declare ahead the reads they will make
(`expect`: the guard's session state, the prompt cache's previous request, ...) and the first `batch` the
request sends carries them all; a stage's later read of one of them is answered from there (once: a
second read goes to the store again). Writes whose answer nobody waits for (`defer`) go out with the
request's next batch, or with `flush` when the response stages are done (and at the request's end
however it ends). Another user of the store's Redis client (the response cache's store) can `ride` that
round trip with commands of its own. Results, atomicity of each op and the fallback when Redis fails are
the shared store's own: this view only changes how many round trips carry them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

from gateway.state.base import Held, Meter, Op, Rider, StateStore, Window

READS = ("get", "range")  # the ops without side effects: safe to send before their stage runs


class RequestStore(StateStore):
    def __init__(self, store: StateStore) -> None:
        self.store = store
        self._expected: dict[Op, None] = {}  # declared reads not sent yet (ordered, no duplicates)
        self._answers: dict[Op, Any] = {}  # reads sent ahead whose answer no stage took yet
        self._deferred: list[Op] = []
        self._riders: list[Rider] = []

    @property
    def backend(self) -> str:  # type: ignore[override]
        return self.store.backend

    def expect(self, ops: Iterable[Op]) -> None:
        """Reads a stage will make: sent with the request's next batch."""
        for op in ops:
            if op.kind not in READS:
                raise ValueError(f"only reads are sent ahead, not {op.kind}")
            if op not in self._answers:
                self._expected[op] = None

    def defer(self, ops: Iterable[Op]) -> None:
        """Writes whose answers nobody needs: sent with the request's next batch, or by `flush`."""
        ops = list(ops)
        self._deferred.extend(ops)
        self._forget(*(op.key for op in ops))

    def carries(self, client: object) -> bool:
        return self.store.carries(client)

    def ride(self, rider: Rider) -> None:
        """Commands for the store's Redis client (`carries`), sent with the request's next batch or `flush`;
        their replies go to `rider.landed` (on a failed trip, its error: they are not sent again)."""
        self._riders.append(rider)

    @property
    def pending(self) -> int:
        """Ops waiting for a round trip (declared reads, deferred writes and riders)."""
        return len(self._expected) + len(self._deferred) + len(self._riders)

    async def flush(self) -> None:
        """Send the deferred writes and riders now (declared reads no stage asked for are dropped)."""
        self._expected.clear()
        if self._deferred or self._riders:
            await self.batch([])

    async def batch(self, ops: Sequence[Op], riders: Sequence[Rider] = ()) -> list[Any]:
        """The ops' results, in order, in at most one round trip that also carries the deferred writes
        (first, so they apply before), the declared reads and the riders."""
        if not (self._answers or self._expected or self._deferred or self._riders or riders):
            # Most batches after a request's first: nothing read ahead, deferred or riding, so the ops go
            # alone (and, no read being kept, a write makes none stale).
            return await self.store.batch(ops) if ops else []
        self._riders.extend(riders)
        answered = [op.kind in READS and op in self._answers for op in ops]
        own = [op for op, ready in zip(ops, answered, strict=True) if not ready]
        ahead = [op for op in self._expected if op not in own]
        deferred, self._deferred = self._deferred, []
        riders, self._riders = self._riders, []
        self._expected = {}
        sent = [*deferred, *own, *ahead]
        try:
            replies = await self.store.batch(sent, riders) if sent or riders else []
        except BaseException:
            self._deferred = deferred + self._deferred  # kept for the next try (a failure or the request's end)
            raise
        for op in own:
            if op.kind not in READS:
                self._forget(op.key)
        self._answers.update(zip(ahead, replies[len(deferred) + len(own) :], strict=True))
        fresh = iter(replies[len(deferred) : len(deferred) + len(own)])
        results = [self._answers[op] if ready else next(fresh) for op, ready in zip(ops, answered, strict=True)]
        for op, ready in zip(ops, answered, strict=True):
            if ready:
                self._answers.pop(op, None)
        return results

    def _forget(self, *keys: str) -> None:
        """A write to these keys makes what was read of them ahead stale."""
        for op in [op for op in self._answers if op.key in keys]:
            del self._answers[op]

    async def _direct(self, *keys: str) -> StateStore:
        """The shared store for an op that is not batched: deferred writes first (their order kept)."""
        if self._deferred:
            await self.batch([])
        self._forget(*keys)
        return self.store

    async def get(self, key: str) -> bytes | None:
        result: bytes | None = (await self.batch([Op("get", key)]))[0]
        return result

    async def range(self, key: str, start: int = 0, end: int = -1) -> list[bytes]:
        if (start, end) == (0, -1):
            result: list[bytes] = (await self.batch([Op("range", key)]))[0]
            return result
        return await (await self._direct(key)).range(key, start, end)

    async def set(self, key: str, value: bytes, ttl_s: float | None = None, *, only_new: bool = False) -> bool:
        return await (await self._direct(key)).set(key, value, ttl_s, only_new=only_new)

    async def delete(self, *keys: str) -> int:
        return await (await self._direct(*keys)).delete(*keys)

    async def incr(self, key: str, amount: int = 1, ttl_s: float | None = None) -> int:
        return await (await self._direct(key)).incr(key, amount, ttl_s)

    async def incr_float(self, key: str, amount: float, ttl_s: float | None = None) -> float:
        return await (await self._direct(key)).incr_float(key, amount, ttl_s)

    async def push(self, key: str, *values: bytes, max_len: int | None = None, ttl_s: float | None = None) -> int:
        return await (await self._direct(key)).push(key, *values, max_len=max_len, ttl_s=ttl_s)

    async def hset(self, key: str, mapping: dict[str, bytes], ttl_s: float | None = None) -> None:
        await (await self._direct(key)).hset(key, mapping, ttl_s)

    async def hgetall(self, key: str) -> dict[str, bytes]:
        return await (await self._direct()).hgetall(key)

    async def hswap(self, key: str, field: str, expected: bytes | None, value: bytes) -> bool:
        return await (await self._direct(key)).hswap(key, field, expected, value)

    async def scan(self, prefix: str) -> AsyncIterator[str]:
        async for key in (await self._direct()).scan(prefix):
            yield key

    async def admit(self, windows: Sequence[Window], holder: str) -> float:
        return await (await self._direct()).admit(windows, holder)

    async def leave(self, keys: Sequence[str], holder: str) -> None:
        await (await self._direct()).leave(keys, holder)

    async def hold(self, meters: Sequence[Meter], holder: str, amounts: Sequence[float]) -> Held:
        return await (await self._direct()).hold(meters, holder, amounts)

    async def settle(
        self, meters: Sequence[Meter], holder: str, amounts: Sequence[float], *, replay: bool = False
    ) -> None:
        await (await self._direct()).settle(meters, holder, amounts, replay=replay)

    async def ping(self) -> bool:
        return await self.store.ping()
