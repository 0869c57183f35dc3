"""The state layer's contract, on memory and on a real Redis; Redis failure falls back and is counted."""

from __future__ import annotations

import asyncio
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from gateway.state import MemoryStore, RedisStore, ResilientStore, StateStore, incr_fields
from gateway.state.base import Meter, Op, Window
from tests.deploy.processes import redis_cluster, redis_sentinel
from tests.gateway_harness import REDIS_TEST_URL


@pytest.fixture(scope="module")
def cluster_url() -> Iterator[str]:
    """A real 3-master Redis Cluster (redis-server processes on loopback)."""
    with tempfile.TemporaryDirectory() as logs, redis_cluster(Path(logs)) as url:
        yield url


@pytest.fixture(scope="module")
def sentinel_url() -> Iterator[str]:
    """A master and its replica behind a real Sentinel (redis-server processes on loopback)."""
    with tempfile.TemporaryDirectory() as logs, redis_sentinel(Path(logs)) as replica_set:
        yield replica_set.url


@pytest.fixture(params=["memory", "redis", "cluster", "sentinel"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[StateStore]:
    if request.param == "memory":
        yield MemoryStore()
        return
    url = request.getfixturevalue(f"{request.param}_url") if request.param != "redis" else REDIS_TEST_URL
    redis_store = RedisStore(url, prefix=f"test-{uuid.uuid4().hex[:8]}:")
    assert await redis_store.ping(), f"tests need a Redis at {url}"
    yield redis_store
    keys = [k async for k in redis_store.scan("")]
    await redis_store.delete(*keys)
    await redis_store.close()


async def test_get_set_delete(store: StateStore) -> None:
    assert await store.get("a") is None
    assert await store.set("a", b"1")
    assert await store.get("a") == b"1"
    assert not await store.set("a", b"2", only_new=True)
    assert await store.get("a") == b"1"
    assert await store.delete("a", "missing") == 1
    assert await store.get("a") is None


async def test_ttl_expires(store: StateStore) -> None:
    await store.set("t", b"x", ttl_s=0.05)
    assert await store.get("t") == b"x"
    await asyncio.sleep(0.12)
    assert await store.get("t") is None


async def test_counters(store: StateStore) -> None:
    assert await store.incr("n") == 1
    assert await store.incr("n", 4) == 5
    assert await store.incr_float("usd", 0.25) == pytest.approx(0.25)
    assert await store.incr_float("usd", 0.5) == pytest.approx(0.75)
    writes = [
        Op("set", "view", ttl_s=60, values=(b"x",)),
        Op("push", "turns", ttl_s=60, values=(b"1", b"2"), max_len=3),
    ]
    assert await store.batch([*writes, Op("push", "turns", values=(b"3", b"4"), max_len=3)]) == [True, 2, 3]
    assert await store.batch([Op("get", "view"), Op("range", "turns")]) == [b"x", [b"2", b"3", b"4"]]


async def test_lists_keep_newest(store: StateStore) -> None:
    for i in range(5):
        await store.push("steps", str(i).encode(), max_len=3)
    assert await store.range("steps") == [b"2", b"3", b"4"]
    assert await store.range("steps", -1) == [b"4"]


async def test_hashes_and_scan(store: StateStore) -> None:
    await store.hset("acme:s1", {"a": b"1"})
    await store.hset("acme:s1", {"b": b"2"})
    await store.set("acme:s2", b"x")
    await store.set("globex:s1", b"y")
    assert await store.hgetall("acme:s1") == {"a": b"1", "b": b"2"}
    assert sorted([k async for k in store.scan("acme:")]) == ["acme:s1", "acme:s2"]


async def test_a_batch_answers_as_its_ops_would_one_by_one(store: StateStore) -> None:
    await store.set("seen", b"v")
    await store.push("log", b"a", b"b")
    await store.incr("calls", 2)
    got = await store.batch(
        [
            Op("get", "seen"),
            Op("get", "missing"),
            Op("range", "log"),
            Op("range", "no-list"),
            Op("incr", "calls", 1),
            Op("incr", "fresh", 0, ttl_s=0.05),
            Op("incr_float", "usd", 0.25, ttl_s=60),
        ]
    )
    assert got == [b"v", None, [b"a", b"b"], [], 3, 0, pytest.approx(0.25)]
    await store.batch([Op("incr", "fresh", 1, ttl_s=0.05)])  # the TTL is the first write's, not renewed
    await asyncio.sleep(0.12)
    assert await store.batch([Op("incr", "fresh", 0)]) == [0], "the counter expired with its TTL"
    writes = [Op("set", "view", ttl_s=60, values=(b"x",)), Op("push", "turns", ttl_s=60, values=(b"1", b"2"))]
    assert await store.batch([*writes, Op("push", "turns", values=(b"3", b"4"), max_len=3)]) == [True, 2, 3]
    assert await store.batch([Op("get", "view"), Op("range", "turns")]) == [b"x", [b"2", b"3", b"4"]]
    assert await store.incr_float("usd", 0.5) == pytest.approx(0.75)


async def test_counters_in_one_hash_step_together_and_keep_their_types(store: StateStore) -> None:
    first = incr_fields("totals", {"requests": 1, "read": 1200, "usd": 0.0015}, ttl_s=60)
    assert await store.batch([first]) == [{"requests": 1, "read": 1200, "usd": pytest.approx(0.0015)}]
    (after,) = await store.batch([incr_fields("totals", {"requests": 1, "read": 0, "usd": 0.0005, "new": 7})])
    assert after == {"requests": 2, "read": 1200, "usd": pytest.approx(0.002), "new": 7}
    assert [type(after[name]) for name in ("requests", "read", "usd")] == [int, int, float]
    (read,) = await store.batch([incr_fields("totals", {"new": 0})])
    assert read == {"new": 7}, "an amount of 0 reads a field; the others are not answered"


async def test_concurrent_steps_of_one_hash_lose_none(store: StateStore) -> None:
    """Replicas answering one session at once each add their step: none is lost (no read-add-write)."""
    steps = [incr_fields("sums", {"requests": 1, "tokens": 10, "usd": 0.25}, ttl_s=60) for _ in range(40)]
    await asyncio.gather(*(store.batch([step]) for step in steps))
    (total,) = await store.batch([incr_fields("sums", {"requests": 0, "tokens": 0, "usd": 0.0})])
    assert total == {"requests": 40, "tokens": 400, "usd": pytest.approx(10.0)}


async def test_a_hash_of_counters_expires_with_its_first_writes_ttl(store: StateStore) -> None:
    await store.batch([incr_fields("short", {"calls": 1}, ttl_s=0.05)])
    await store.batch([incr_fields("short", {"calls": 1}, ttl_s=60)])  # not renewed: the first write's TTL
    await asyncio.sleep(0.12)
    assert await store.batch([incr_fields("short", {"calls": 0})]) == [{"calls": 0}], "the hash expired"


async def test_redis_down_falls_back_and_counts() -> None:
    from tests.servers import free_socket

    sock = free_socket()  # bound, never listening: connections are refused at once
    port = sock.getsockname()[1]
    fallbacks: list[str] = []
    store = ResilientStore(RedisStore(f"redis://127.0.0.1:{port}/0", timeout_s=0.2), fallbacks.append, cooldown_s=60)
    try:
        assert await store.incr("k") == 1  # served by the per-replica fallback
        assert await store.incr("k") == 2
        assert fallbacks == ["incr", "incr"]
        assert "fallback" in store.backend and not await store.ping()
    finally:
        sock.close()
        await store.close()


async def test_counters_read_back_with_get(store: StateStore) -> None:
    await store.incr("hits", 3)
    assert await store.get("hits") == b"3"


# Keys one call takes together share a hash tag (`{t}`), as the gateway's do (`{tenant}`): in a Redis
# Cluster they then live on one slot.
async def test_windows_admit_all_or_none_and_free_places(store: StateStore) -> None:
    rate, pair = Window("{t}rate", 3, 0.3), Window("{t}pair", 2, 60.0)
    assert [await store.admit([rate], f"r{i}") for i in range(3)] == [0.0, 0.0, 0.0]
    wait = await store.admit([rate], "r3")
    assert 0 < wait <= 0.3  # until the oldest place frees
    await asyncio.sleep(wait + 0.05)
    assert await store.admit([rate], "r4") == 0.0  # a sliding window: one place freed
    assert await store.admit([pair], "a") == 0.0 and await store.admit([pair], "b") == 0.0
    other = Window("{t}other", 5, 60.0)
    assert await store.admit([other, pair], "c") > 0  # all or none: `other` took nothing
    assert [await store.admit([other], f"o{i}") for i in range(5)] == [0.0] * 5
    await store.leave(["{t}pair"], "a")  # a concurrency place given back at the request's end
    assert await store.admit([pair], "c") == 0.0


async def test_meters_hold_worst_cases_and_settle_actual_amounts(store: StateStore) -> None:
    budget = Meter("{b}usd:holds", 1.0, 60.0, spent="{b}usd:spent", spent_ttl_s=60.0)
    assert (await store.hold([budget], "a", [0.5])).refused is None
    assert (await store.hold([budget], "b", [0.25])).refused is None
    assert (await store.hold([budget], "c", [0.25])).refused is None  # 0.75 held: under the limit, runs
    assert (await store.hold([budget], "d", [0.125])).refused == 0  # 1.0 held: at the limit
    await store.settle([budget], "a", [0.125])  # cost less than its hold: the rest is free again
    held = await store.hold([budget], "d", [0.125])
    assert held.refused is None and held.spent == [0.125]
    await store.settle([budget], "b", [0.0])  # failed: nothing spent
    await store.settle([budget], "c", [0.75])  # cost more than its hold: the overshoot of one request
    await store.settle([budget], "d", [0.25])
    refused = await store.hold([budget], "e", [0.01])
    assert refused.refused == 0 and refused.spent == [1.125]  # spent: refused until the window resets


async def test_a_sliding_meter_frees_amounts_after_its_window(store: StateStore) -> None:
    tokens, other = Meter("{t}tpm", 100, 0.3), Meter("{t}other", 1000, 60.0)
    assert (await store.hold([tokens], "a", [80])).refused is None
    await store.settle([tokens], "a", [120])  # counted for 0.3 s from now
    held = await store.hold([other, tokens], "b", [5, 5])
    assert held.refused == 1 and 0 < held.wait_s <= 0.3 and held.spent == [0.0, 0.0]
    assert (await store.hold([other], "c", [1000])).refused is None  # all or none: b took nothing of `other`
    await asyncio.sleep(held.wait_s + 0.05)
    assert (await store.hold([tokens], "b", [5])).refused is None
