"""Redis calls are judged on time the event loop could run (gateway/state/deadline.py).

A stall of the replica's own loop (another tenant's huge request, security issue 11) must not fail a call
whose reply came in time: before, the state store fell back to per-replica memory and a session the
guard had blocked got served. A server that never answers still fails the call, stalls or not.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator

import pytest

from gateway.pacing import SLICE_S
from gateway.response_cache.store import Breaker
from gateway.state import Op, RedisStore, ResilientStore, StateUnavailable
from gateway.state.deadline import MAX_WAIT_FACTOR, StallTolerantDeadline
from gateway.state.loop_stalls import stall_clock
from tests.gateway_harness import REDIS_TEST_URL

TIMEOUT_S = 0.1
STALL_S = 0.4  # four timeouts: the deadline falls inside it


def stall_next_turn(seconds: float = STALL_S) -> None:
    """Holds the loop in its next turn, as a huge request's synchronous step would (after the caller's
    command is on the wire: the caller does not yield before writing it)."""
    asyncio.get_running_loop().call_soon(time.sleep, seconds)


@pytest.fixture
async def silent_server() -> AsyncIterator[str]:
    """A loopback server that takes connections and never answers: Redis hung, or a black hole."""
    connections: list[asyncio.StreamWriter] = []

    async def hold(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"redis://127.0.0.1:{port}"
    finally:
        for writer in connections:
            writer.close()
        server.close()


async def test_a_stall_past_the_deadline_does_not_fail_a_call_that_was_answered() -> None:
    fallbacks: list[str] = []
    store = ResilientStore(RedisStore(REDIS_TEST_URL, timeout_s=TIMEOUT_S), fallbacks.append)
    key = f"test-deadline:{{t}}:{uuid.uuid4().hex}"
    try:
        await store.set(key, b"before", ttl_s=60)  # connected and warm
        for _ in range(3):
            started = time.perf_counter()
            stall_next_turn()
            [value, count] = await store.batch([Op("get", key), Op("incr", key + ":n", amount=1, ttl_s=60)])
            assert time.perf_counter() - started >= STALL_S  # the stall did cover the deadline
            assert value == b"before"
        stall_next_turn()
        assert await store.get(key) == b"before"  # a call of redis-py's own, under the same deadline
        assert (count, fallbacks, store.healthy) == (3, [], True)
    finally:
        await store.delete(key, key + ":n")
        await store.close()


async def test_a_loop_busy_with_another_requests_slices_does_not_fail_calls_that_were_answered() -> None:
    """Huge requests work in slices (20 ms, then they yield): no single stall spans a deadline, but a call
    of several round trips and pool hand-offs gets one turn per round of slices."""
    fallbacks: list[str] = []
    store = ResilientStore(RedisStore(REDIS_TEST_URL, timeout_s=TIMEOUT_S), fallbacks.append)
    key = f"test-deadline:{{t}}:{uuid.uuid4().hex}"
    busy = True

    async def slices() -> None:
        while busy:
            time.sleep(0.02)
            await asyncio.sleep(0)

    try:
        await store.set(key, b"warm", ttl_s=60)
        workers = [asyncio.create_task(slices()) for _ in range(2)]
        for _ in range(3):
            await store.incr(key + ":n", 1, ttl_s=60)  # a redis-py transaction: several turns
            await store.batch([Op("get", key)])
        busy = False
        await asyncio.gather(*workers)
        assert (fallbacks, await store.incr(key + ":n", 0)) == ([], 3)
    finally:
        busy = False
        await store.delete(key, key + ":n")
        await store.close()


async def test_slices_that_resume_after_the_clock_tick_are_counted_as_stalls() -> None:
    """A paced request resumed through a future (a worker thread's count, `asyncio.to_thread`) is queued
    behind the stall clock's tick, not before it: its slices start right after each tick. With a tick as
    long as a slice, every tick then found the loop just free, and a loop busy all the time counted no
    stall at all (a guard call failed after 0.25 s of "running" loop and the replica fell back)."""
    loop = asyncio.get_running_loop()
    busy = True

    async def slices() -> None:
        while busy:
            time.sleep(SLICE_S)
            resumed = loop.create_future()
            loop.call_soon(resumed.set_result, None)  # two hops: the step is queued after the due tick
            await resumed

    clock = stall_clock()
    clock.opened()
    try:
        before, started = clock.stalled(), loop.time()
        worker = asyncio.create_task(slices())
        await asyncio.sleep(0.3)
        busy = False
        await worker
        held = loop.time() - started
        assert clock.stalled() - before >= 0.8 * held
    finally:
        clock.closed()


async def test_a_server_that_never_answers_still_fails_the_call(silent_server: str) -> None:
    store = RedisStore(silent_server, timeout_s=TIMEOUT_S)
    try:
        for call in (lambda: store.batch([Op("get", "k")]), lambda: store.get("k")):
            started = time.perf_counter()
            with pytest.raises(StateUnavailable):
                await call()
            assert time.perf_counter() - started < TIMEOUT_S * 3  # an idle loop: a turn or two past the deadline
        assert await store.ping() is False
    finally:
        await store.close()


async def test_a_loop_that_keeps_stalling_still_ends_a_call_that_is_never_answered() -> None:
    loop = asyncio.get_running_loop()
    stalling = True

    def keep_stalling() -> None:
        if stalling:
            time.sleep(2 * TIMEOUT_S)  # over a deadline or an extension's end each time
            loop.call_later(0.01, keep_stalling)

    loop.call_soon(keep_stalling)
    started = time.perf_counter()
    try:
        with pytest.raises(TimeoutError):
            async with StallTolerantDeadline(TIMEOUT_S):
                await asyncio.Event().wait()
    finally:
        stalling = False
    elapsed = time.perf_counter() - started
    assert elapsed >= TIMEOUT_S * MAX_WAIT_FACTOR  # the deadline was moved on as long as it may be
    assert elapsed < TIMEOUT_S * (MAX_WAIT_FACTOR + 1) + 2 * TIMEOUT_S + 0.1  # then ended: one stall more


async def test_a_stall_does_not_open_the_response_cache_breaker() -> None:
    store = RedisStore(REDIS_TEST_URL, timeout_s=TIMEOUT_S)
    breaker = Breaker(TIMEOUT_S)
    try:
        await store.client.ping()
        stall_next_turn()
        assert await breaker.call(lambda: store.client.echo("answered")) == b"answered"
        assert not breaker.down
    finally:
        await store.close()
