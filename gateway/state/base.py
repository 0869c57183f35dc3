"""The state layer every stage uses: counters, per-session state and cached objects.

Two backends share this interface: in-process memory (the embedded default) and Redis (shared by all
replicas; one server or a Redis Cluster). Values are bytes; callers serialise. Keys are namespaced by the
caller (tenant first). The keys one call takes together (`admit`'s windows, `hold`'s meters) share a hash
tag (`{tenant}`), so that in a Redis Cluster they live on one slot and the call stays one atomic script.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple


class StateUnavailable(Exception):
    """The backend could not answer (Redis down or slow)."""


@dataclass(frozen=True, slots=True)
class Window:
    """At most `limit` holders in any `seconds`: a sliding-window rate (holders expire) or, when the holder
    releases its place at the end of its request, a concurrency limit (`seconds` is then a lease that frees
    the places of requests whose replica died)."""

    key: str
    limit: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Meter:
    """An amount limit (USD, tokens): what was spent (the counter `spent`; None: a sliding window, where
    only the held amounts count) plus what requests in flight hold (`holds`), against `limit`. A request
    holds its worst case before it runs (for at most `seconds`, so the holds of a replica that died free
    themselves) and settles it when done: its actual amount goes into the counter (kept `spent_ttl_s`),
    or, without one, stays held for `seconds` from then (tokens per minute)."""

    holds: str
    limit: float
    seconds: float
    spent: str | None = None
    spent_ttl_s: float | None = None


@dataclass(frozen=True, slots=True)
class Held:
    """The answer to `hold`: whether the holds were taken, else the first meter that refused (its index)
    and the seconds until its oldest hold frees; and each meter's spent counter (0 without one)."""

    refused: int | None
    wait_s: float
    spent: list[float]


class Op(NamedTuple):
    """One operation of a `batch`, as its single-op method takes it: a read (get, range), a counter step
    (incr, incr_float: an amount of 0 reads the counter; `ttl_s` set on its first write), a set (`values`
    holds the one value) or a push (of `values`, keeping the newest `max_len`). `incr_fields`, which has
    no single-op method, steps several counters kept as the fields of one hash, each atomically, by
    `steps` (name, amount: an int counts in ints, a float in floats; 0 reads it), and answers a dict of
    their values after it: a record a request updates in one command (a session's totals), not one
    key and command per counter. A named tuple: a request builds, hashes and compares ~20 of them
    (its batches key the reads sent ahead by op), each in C."""

    kind: Literal["get", "range", "incr", "incr_float", "set", "push", "incr_fields"]
    key: str
    amount: float = 0
    ttl_s: float | None = None
    values: tuple[bytes, ...] = ()
    max_len: int | None = None
    steps: tuple[tuple[str, int | float], ...] = ()


def incr_fields(key: str, steps: dict[str, int | float], ttl_s: float | None = None) -> Op:
    """The `incr_fields` op of `steps` (a field's amount of 0 reads it)."""
    return Op("incr_fields", key, ttl_s=ttl_s, steps=tuple(steps.items()))


@dataclass(frozen=True, slots=True, eq=False)
class Rider:
    """Commands for the store's own Redis client from another user of that client (the response cache's
        store), sent in a request's next round trip (gateway/state/request.py `ride`). `landed` is called with
        their replies, in order, an error reply as its exception in its place (on a Redis Cluster an error reply
        fails the whole trip: gateway/state/exchange.py); or with the exception that kept the trip from Redis.
    `alone` sends the commands in a round trip of their own, under their owner's breaker (their replies, as
    above, or it raises): for a trip that never leaves, the store having marked Redis down since they boarded."""

    client: object
    commands: Sequence[Sequence[bytes | str | int | float]]
    landed: Callable[[list[Any] | BaseException], None]
    alone: Callable[[], Awaitable[list[Any]]]


class StateStore(ABC):
    backend: str

    def carries(self, client: object) -> bool:
        """Whether this store's batches can carry riders for `client` (its own Redis client, while up)."""
        return False

    @abstractmethod
    async def batch(self, ops: Sequence[Op], riders: Sequence[Rider] = ()) -> list[Any]:
        """Each op's result, in order: what the single-op methods return. One round trip on Redis (not a
        transaction: each op is atomic on its own, as when called alone), which also carries `riders`
        (only where `carries` said so; a store that carries none refuses them)."""

    @abstractmethod
    async def get(self, key: str) -> bytes | None: ...

    @abstractmethod
    async def set(self, key: str, value: bytes, ttl_s: float | None = None, *, only_new: bool = False) -> bool:
        """Store a value; with only_new, only if the key does not exist (returns whether it was set)."""

    @abstractmethod
    async def delete(self, *keys: str) -> int: ...

    @abstractmethod
    async def incr(self, key: str, amount: int = 1, ttl_s: float | None = None) -> int: ...

    @abstractmethod
    async def incr_float(self, key: str, amount: float, ttl_s: float | None = None) -> float: ...

    @abstractmethod
    async def push(self, key: str, *values: bytes, max_len: int | None = None, ttl_s: float | None = None) -> int:
        """Append to a list (keeping the newest max_len); returns the list length."""

    @abstractmethod
    async def range(self, key: str, start: int = 0, end: int = -1) -> list[bytes]: ...

    @abstractmethod
    async def hset(self, key: str, mapping: dict[str, bytes], ttl_s: float | None = None) -> None: ...

    @abstractmethod
    async def hgetall(self, key: str) -> dict[str, bytes]: ...

    @abstractmethod
    async def hswap(self, key: str, field: str, expected: bytes | None, value: bytes) -> bool:
        """Compare-and-set a hash field: set it to `value` only if it holds `expected` (None: only if it
        does not exist), atomically; returns whether it was set."""

    @abstractmethod
    def scan(self, prefix: str) -> AsyncIterator[str]:
        """Keys that start with prefix."""

    @abstractmethod
    async def admit(self, windows: Sequence[Window], holder: str) -> float:
        """Take a place for `holder` in every window, all or none, atomically: 0.0 when taken, else the
        seconds until the fullest window frees a place (nothing is taken)."""

    @abstractmethod
    async def leave(self, keys: Sequence[str], holder: str) -> None:
        """Give back `holder`'s places in the windows `keys` (concurrency limits)."""

    @abstractmethod
    async def hold(self, meters: Sequence[Meter], holder: str, amounts: Sequence[float]) -> Held:
        """Hold `amounts` for `holder` on every meter, all or none, atomically: refused on the first
        meter whose spent plus held amounts reached its limit (a request that fits in what is left runs,
        so the limit is overshot by at most one request's difference between its hold and its cost)."""

    @abstractmethod
    async def settle(
        self, meters: Sequence[Meter], holder: str, amounts: Sequence[float], *, replay: bool = False
    ) -> None:
        """Replace `holder`'s holds by what it really used (0: nothing, e.g. a failed request). A `replay`
        repeats a settle whose answer was lost (it may have run): it settles only the holds still held."""

    @abstractmethod
    async def ping(self) -> bool: ...

    async def close(self) -> None:
        return None
