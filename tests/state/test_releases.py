"""Releases (`leave`, `settle`) reach the backend that may hold what they give back: when Redis times out,
they are replayed there once it answers again, never only given to the per-replica fallback (issue 26,
finding 6: a slow Redis left places and budget holds there until their 15-minute leases ended)."""

from __future__ import annotations

import asyncio
import os
import signal
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from gateway.state import MemoryStore, RedisStore, ResilientStore, StateStore
from gateway.state.base import Meter, Window
from tests.deploy.processes import Spawned, redis_server
from tests.redis_target import redis_url

LEASE_S = 900.0  # the gateway's leases (CONCURRENCY_LEASE_S, HOLD_LEASE_S): a leak lasts this long


@contextmanager
def stopped(server: Spawned) -> Iterator[None]:
    """Redis frozen (SIGSTOP): calls time out, and what they sent runs when it resumes."""
    os.kill(server.process.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(server.process.pid, signal.SIGCONT)


async def until(check: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "not within the time allowed"
        await asyncio.sleep(0.05)


async def test_releases_redis_timed_out_are_replayed_there_when_it_answers() -> None:
    with tempfile.TemporaryDirectory() as logs, redis_server(Path(logs)) as (server, url):
        fallbacks: list[str] = []
        store = ResilientStore(RedisStore(url, timeout_s=0.25), fallbacks.append, cooldown_s=1.5)
        redis_only = RedisStore(url)  # what every other replica sees
        slots = Window("{acme}:concurrent", 3, LEASE_S)
        budget = Meter("{acme}:usd:holds", 50.0, LEASE_S, spent="{acme}:usd", spent_ttl_s=3600.0)
        try:
            assert [await store.admit([slots], f"r{i}") for i in range(3)] == [0.0, 0.0, 0.0]
            assert (await store.hold([budget], "r0", [49.0])).refused is None
            with stopped(server):
                # Times out: the fallback admits it, and its script still runs in Redis when it resumes.
                assert await store.admit([slots], "late") == 0.0
                for holder in ("r0", "r1", "r2", "late"):  # the requests end while Redis is slow
                    await store.leave([slots.key], holder)
                await store.settle([budget], "r0", [10.0])  # r0 cost 10 of its hold of 49
                assert store.pending_releases == 5
            await until(lambda: store.pending_releases == 0)
            # Nothing in flight: every place is free again in Redis, and the budget holds only what was spent.
            assert [await redis_only.admit([slots], f"n{i}") for i in range(3)] == [0.0, 0.0, 0.0]
            held = await redis_only.hold([budget], "n0", [39.0])
            assert held.refused is None and held.spent == [10.0]
            assert {"admit", "leave", "settle"} <= set(fallbacks)
        finally:
            await redis_only.close()
            await store.close()


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[StateStore]:
    if request.param == "memory":
        yield MemoryStore()
        return
    redis_store = RedisStore(redis_url(15), prefix=f"test-{uuid.uuid4().hex[:8]}:")
    yield redis_store
    await redis_store.delete(*[key async for key in redis_store.scan("")])
    await redis_store.close()


async def test_a_replayed_settle_counts_only_what_is_still_held(store: StateStore) -> None:
    budget = Meter("{b}usd:holds", 100.0, 60.0, spent="{b}usd", spent_ttl_s=60.0)
    assert (await store.hold([budget], "a", [20.0])).refused is None
    await store.settle([budget], "a", [5.0])
    await store.settle([budget], "a", [5.0], replay=True)  # its first answer was lost, but it had run
    assert (await store.hold([budget], "b", [20.0])).spent == [5.0]
    await store.settle([budget], "b", [7.0], replay=True)  # the first never reached the store
    assert (await store.hold([budget], "c", [1.0])).spent == [12.0]
