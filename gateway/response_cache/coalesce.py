"""Request coalescing: identical in-flight cacheable requests wait for one upstream call.

The first request to miss the exact tier leads a *flight* under its exact-cache key (tenant-scoped, so
tenants never wait on each other). Identical requests arriving on this replica while it is in flight
wait for it; across replicas sharing Redis the leader also holds a short lock (SET NX PX with a random
token) and other replicas' followers poll it with backoff. When the flight ends, followers read the
cache: the leader's stored answer serves them (replayed as a stream to streaming callers, like any
hit); no entry (the leader failed, was cut off, or its answer was not storable: an error, a guard's
answer) and each follower makes its own call. Only stored answers are ever served, and nothing waits
longer than the flight's lease (the route's upstream time budget): no deadlock, no stranded follower.

A flight ends when its leader's request task ends, whatever the outcome (answer sent, error, client
gone), so a failure never leaves followers waiting out the lease. Redis trouble degrades to per-replica
coalescing (counted), never to an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis
from prometheus_client import CollectorRegistry, Counter

from gateway.config import ModelConfig
from gateway.response_cache.store import META_ROOT, Breaker, CacheUnavailable, EntryBackend, RedisBackend
from gateway.state.base import Rider
from gateway.state.exchange import Command, exchange
from gateway.state.request import RequestStore

MAX_LEASE_S = 300.0
FIRST_POLL_S, MAX_POLL_S = 0.01, 0.25
# Compare-and-delete: a leader whose lease expired must not delete the next leader's lock.
RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
# A lookup and a lead in one round trip, atomically (so no answer can be stored between the two): the
# entry (KEYS[1]) if there is one, else the lock (KEYS[2], the same hash slot: keys.py) taken with the
# token ARGV[1] for ARGV[2] ms if free. Returns {1, entry}, {0, 1} (led) or {0, 0} (another leads).
FIND_OR_LEAD = """
local found = redis.call('get', KEYS[1])
if found then return {1, found} end
if redis.call('set', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {0, 1} end
return {0, 0}
"""


def lease_s(route: ModelConfig) -> float:
    """How long a flight may last: the route's upstream time budget, retries included."""
    return min(route.timeout_s * (route.retries + 1), MAX_LEASE_S)


class CoalesceMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.coalesced = Counter(
            "cachegate_response_cache_coalesced",
            "Requests answered by an identical request's upstream call instead of their own",
            registry=registry,
        )
        self.fallthroughs = Counter(
            "cachegate_response_cache_coalesce_fallthroughs",
            "Followers that made their own call: leader_failed (no stored answer), timeout, unavailable",
            ["reason"],
            registry=registry,
        )


class FlightLock:
    """The cross-replica half: one Redis key per flight, owned by the leader's token."""

    def __init__(self, client: aioredis.Redis, prefix: str, breaker: Breaker) -> None:
        self.client, self.entries, self.breaker = client, prefix, breaker
        self.prefix = f"{prefix}{META_ROOT}flight:"  # + the entry's key: its hash tag puts both on one slot

    async def acquire(self, key: str, lease: float) -> str | None:
        token = secrets.token_hex(16)
        won = await self.breaker.call(lambda: self.client.set(self.prefix + key, token, nx=True, px=_ms(lease)))
        return token if won else None

    async def find_or_acquire(self, key: str, lease: float) -> tuple[bytes | None, str | None]:
        """The entry stored under `key` (no lock taken), else the lock's token when this call took it."""
        token = secrets.token_hex(16)
        replies = await self.breaker.call(lambda: exchange(self.client, [self.find_or_lead_command(key, token, lease)]))
        return _found_or_led(replies[0], token)

    def find_or_lead_command(self, key: str, token: str, lease: float) -> Command:
        # EVAL with the script's text (a few hundred bytes; Redis keeps it compiled): no NOSCRIPT retry.
        return ("EVAL", FIND_OR_LEAD, 2, self.entries + key, self.prefix + key, token, _ms(lease))

    async def held(self, key: str) -> bool:
        return bool(await self.breaker.call(lambda: self.client.exists(self.prefix + key)))

    async def release(self, key: str, token: str) -> None:
        await self.breaker.call(lambda: self.client.eval(RELEASE, 1, self.prefix + key, token))  # type: ignore[misc]

    def release_command(self, key: str, token: str) -> Command:
        """The release as one command of another round trip (the entry's write: same slot)."""
        return ("EVAL", RELEASE, 1, self.prefix + key, token)


def _ms(seconds: float) -> int:
    return max(int(seconds * 1000), 1)


def _found_or_led(reply: Any, token: str) -> tuple[bytes | None, str | None]:
    """FIND_OR_LEAD's reply: the entry, else the token when the lock was taken with it."""
    found, value = reply
    if int(found):
        return bytes(value), None
    return None, token if int(value) else None


@dataclass(eq=False)
class Flight:
    """A leader's hold on a key; `release` is idempotent and never raises."""

    coalescer: Coalescer
    key: str
    done: asyncio.Event = field(default_factory=asyncio.Event)
    token: str | None = None

    async def release(self) -> None:
        if self.done.is_set():
            return
        self.done.set()
        if self.coalescer.flights.get(self.key) is self:
            del self.coalescer.flights[self.key]
        await self.release_lock()

    async def release_lock(self) -> None:
        """The cross-replica lock's half of `release`."""
        lock, token, self.token = self.coalescer.lock, self.token, None
        if lock is not None and token is not None:
            with contextlib.suppress(CacheUnavailable):  # the lease ends it
                await lock.release(self.key, token)

    def release_with(self) -> list[Command] | None:
        """The cross-replica lock's release, as commands for the round trip that stores the flight's answer,
        so one round trip does both (the lock is then released, and `release` only wakes this replica's
        followers: call `released_remotely` once the pipeline ran); None when no lock is held."""
        lock, token = self.coalescer.lock, self.token
        if lock is None or token is None or self.done.is_set():
            return None
        return [lock.release_command(self.key, token)]

    def released_remotely(self) -> None:
        self.token = None

    def end_with(self, task: asyncio.Task[object] | None) -> None:
        """Release when the leader's request task ends, whatever the outcome."""
        if task is None:
            return
        task.add_done_callback(lambda _: self.coalescer.later(self.release()))


@dataclass(eq=False)
class Boarding:
    """A lookup-and-lead that rides a request's state round trip (`Coalescer.board`)."""

    coalescer: Coalescer
    lock: FlightLock
    flight: Flight
    lease: float
    token: str
    reply: Any = None  # FIND_OR_LEAD's reply, or the error that kept it from Redis; None: not sent yet
    found: bytes | None = None

    def landed(self, replies: list[Any] | BaseException) -> None:
        self.reply = replies if isinstance(replies, BaseException) else replies[0]
        if isinstance(self.reply, BaseException):
            return
        self.found, self.flight.token = _found_or_led(self.reply, self.token)
        if self.flight.token is not None and self.flight.done.is_set():
            # The request ended before its trip went (sent by its last flush): the lock goes at once.
            self.coalescer.later(self.flight.release_lock())

    async def outcome(self, state: RequestStore) -> tuple[bytes | None, Flight | None]:
        """What `find_or_lead` returns; sends the request's round trip when no stage has sent it yet.
        CacheUnavailable (the flight released) when the trip failed."""
        if self.reply is None:
            with contextlib.suppress(Exception):  # its error reaches `landed`
                await state.batch([])
        reply = self.reply
        if reply is None or isinstance(reply, BaseException):
            self.lock.breaker.trip()
            await self.flight.release()
            raise CacheUnavailable(f"redis: {type(reply).__name__}")
        return await self.coalescer.settle(self.flight, self.found, self.lease)


class Coalescer:
    def __init__(self, lock: FlightLock | None, metrics: CoalesceMetrics) -> None:
        self.lock, self.metrics = lock, metrics
        self.flights: dict[str, Flight] = {}
        self._background: set[asyncio.Task[None]] = set()

    @classmethod
    def create(cls, backend: EntryBackend, registry: CollectorRegistry) -> Coalescer:
        """Cross-replica when the cache entries live in Redis (so followers elsewhere can read them)."""
        if isinstance(backend, RedisBackend):
            lock = FlightLock(backend.client, backend.prefix, backend.breaker)
            return cls(lock, CoalesceMetrics(registry))
        return cls(None, CoalesceMetrics(registry))

    def later(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def following(self, key: str) -> bool:
        """Whether an identical request leads a flight on this replica (then `join` follows it)."""
        return key in self.flights

    async def find_or_lead(self, key: str, lease: float) -> tuple[bytes | None, Flight | None]:
        """`join` and the lookup before it in one round trip (cross-replica only, with no flight on this
        replica: see `following`): the stored value of `key` (no flight led; decode it, and `join` when it
        is unusable), else the flight this request leads (release it or bind it to its task), else
        (None, None) once the other replica's flight ended: then read the cache."""
        flight = self._open(key)
        try:
            found, flight.token = await self._locked().find_or_acquire(key, lease)
        except BaseException:
            await flight.release()
            raise
        return await self.settle(flight, found, lease)

    def board(self, key: str, lease: float, state: RequestStore) -> Boarding:
        """`find_or_lead`'s round trip as a rider of the request's next state round trip (the state's Redis
        client is the cache's: `state.carries`), so that it costs no round trip of its own. The flight is
        this replica's from now on; `Boarding.outcome` is what `find_or_lead` returns."""
        lock = self._locked()
        boarding = Boarding(self, lock, self._open(key), lease, secrets.token_hex(16))
        commands = [lock.find_or_lead_command(key, boarding.token, lease)]
        state.ride(Rider(lock.client, commands, boarding.landed, lock.breaker.alone(lock.client, commands)))
        return boarding

    def _locked(self) -> FlightLock:
        assert self.lock is not None
        return self.lock

    def _open(self, key: str) -> Flight:
        assert key not in self.flights
        flight = Flight(self, key)
        self.flights[key] = flight  # before any await: the next identical request on this replica follows
        return flight

    async def settle(self, flight: Flight, found: bytes | None, lease: float) -> tuple[bytes | None, Flight | None]:
        """After the lookup: the flight led, or released once the entry was found or another replica's
        flight ended."""
        if found is not None or flight.token is None:
            try:
                if found is None:  # another replica leads: wait for it (this replica's followers too)
                    await self._poll(flight.key, lease)
            finally:
                await flight.release()
            return found, None
        return None, flight

    async def join(self, key: str, lease: float) -> Flight | None:
        """Lead the flight for `key` (the caller must release it, or bind it to its task), or wait for
        the identical request in flight to end and return None: then read the cache."""
        local = self.flights.get(key)
        if local is not None:
            await self._wait(local.done, lease)
            return None
        flight = Flight(self, key)
        self.flights[key] = flight  # before any await: the next identical request on this replica follows
        if self.lock is None:
            return flight
        try:
            flight.token = await self.lock.acquire(key, lease)
        except CacheUnavailable:
            self.metrics.fallthroughs.labels("unavailable").inc()
            return flight  # coalesce on this replica only
        if flight.token is not None:
            return flight
        try:  # another replica leads: wait for it, then this replica's followers read the cache too
            await self._poll(key, lease)
        finally:
            await flight.release()
        return None

    async def _wait(self, done: asyncio.Event, lease: float) -> None:
        try:
            await asyncio.wait_for(done.wait(), lease)
        except TimeoutError:
            self.metrics.fallthroughs.labels("timeout").inc()

    async def _poll(self, key: str, lease: float) -> None:
        assert self.lock is not None
        loop = asyncio.get_running_loop()
        deadline, delay = loop.time() + lease, FIRST_POLL_S
        while loop.time() < deadline:
            await asyncio.sleep(min(delay, max(deadline - loop.time(), 0.0)))
            try:
                if not await self.lock.held(key):
                    return
            except CacheUnavailable:
                self.metrics.fallthroughs.labels("unavailable").inc()
                return
            delay = min(delay * 2, MAX_POLL_S)
        self.metrics.fallthroughs.labels("timeout").inc()
