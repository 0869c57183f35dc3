"""The exact tier's lookup and its flight lock (request coalescing) take one round trip, the answer's store
and the lock's release another (gateway/response_cache/coalesce.py `find_or_lead`), with the same
semantics as apart: a hit takes no lock, a miss leads or follows the identical request in flight. The
entry and its lock share a Redis Cluster hash slot, so the one script runs there too."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client import CollectorRegistry
from redis.asyncio import Redis
from redis.cluster import key_slot

from gateway.response_cache.coalesce import Coalescer, FlightLock
from gateway.response_cache.entry import Entry, decode_entry, encode_entry
from gateway.response_cache.keys import EXACT_TIER, Place
from gateway.response_cache.store import Breaker, RedisBackend
from gateway.state import RedisStore
from tests.deploy.processes import redis_cluster, redis_server
from tests.gateway_harness import TENANT_KEYS, running_gateway
from tests.state.test_request_batch import counting_redis


def _entry_key(tenant: str = "acme") -> str:
    return Place(tenant, "default", "gpt-4o-mini").key(EXACT_TIER, uuid.uuid4().hex)


def test_an_entry_and_its_flight_lock_share_a_hash_slot() -> None:
    for tenant in ("acme", "a{b}c", "}{", "{x}"):  # braces in a name are percent-encoded: never the tag
        key = _entry_key(tenant)
        lock = FlightLock(Redis(), "cg:", Breaker())  # names keys only: never connects
        entry, flight = lock.entries + key, lock.prefix + key
        assert key_slot(entry.encode()) == key_slot(flight.encode())
    slots = {key_slot(f"cg:{_entry_key()}".encode()) for _ in range(50)}
    assert len(slots) > 40  # entries still spread over the slots


@pytest.fixture(scope="module")
def cluster_url() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as logs, redis_cluster(Path(logs)) as url:
        yield url


@pytest.fixture(params=["redis", "cluster"])
async def backends(request: pytest.FixtureRequest) -> AsyncIterator[tuple[RedisBackend, RedisBackend]]:
    """Two replicas' cache backends on one Redis (or cluster), each with its own connection."""
    with contextlib.ExitStack() as stack:
        if request.param == "cluster":
            url = request.getfixturevalue("cluster_url")
        else:
            _, url = stack.enter_context(redis_server(Path(stack.enter_context(tempfile.TemporaryDirectory()))))
        prefix = f"t{uuid.uuid4().hex[:8]}:"
        # Generous timeouts: on a loaded machine a 0.25 s one trips the breaker, and the test tests no outage.
        stores = [RedisStore(url, timeout_s=5.0, prefix=prefix) for _ in range(2)]
        yield (
            RedisBackend(stores[0].client, prefix, 100, Breaker(stores[0].timeout_s)),
            RedisBackend(stores[1].client, prefix, 100, Breaker(stores[1].timeout_s)),
        )
        for store in stores:
            await store.close()


def _answer(key: str) -> Entry:
    now = time.time()
    return Entry(key, "openai", {"choices": [{"message": {"content": "hi"}}]}, 0.01, now, now + 60)


async def test_find_or_lead_leads_follows_and_finds(backends: tuple[RedisBackend, RedisBackend]) -> None:
    one, two = (Coalescer.create(backend, CollectorRegistry()) for backend in backends)
    key = _entry_key()
    found, led = await one.find_or_lead(key, 5.0)
    assert found is None and led is not None and led.token is not None
    assert one.following(key)  # an identical request on this replica joins the flight
    # Another replica's identical request waits for the flight, then finds its answer.
    follower = asyncio.create_task(two.find_or_lead(key, 5.0))
    await asyncio.sleep(0.1)
    assert not follower.done()
    release = led.release_with()
    assert release is not None
    stored = encode_entry(_answer(key))
    await backends[0].put(key, stored, 60.0, release)  # store and unlock: one round trip
    led.released_remotely()
    # It waited for the flight, then reads the cache; on a loaded machine its lookup may only reach Redis
    # after the store (a cluster client's first call maps the slots first): then it found the answer.
    assert await asyncio.wait_for(follower, 3.0) in ((None, None), (stored, None))
    await led.release()
    assert not one.following(key)
    # A hit takes no lock: the entry comes back with the same round trip, and nothing stays held.
    found, flight = await two.find_or_lead(key, 5.0)
    assert flight is None and found is not None and decode_entry(found, key).response["choices"]
    assert two.lock is not None and not await two.lock.held(key)


async def test_a_lock_that_is_held_past_its_lease_frees_the_follower(
    backends: tuple[RedisBackend, RedisBackend],
) -> None:
    one, two = (Coalescer.create(backend, CollectorRegistry()) for backend in backends)
    key = _entry_key()
    # A leader that dies: never releases. Its lease outlasts a loaded machine's pause between the calls.
    _, led = await one.find_or_lead(key, 1.5)
    assert led is not None
    started = time.monotonic()
    assert await two.find_or_lead(key, 5.0) == (None, None)
    assert time.monotonic() - started < 4.0  # freed by the leader's lease, not at the end of its own (5 s)
    found, again = await two.find_or_lead(key, 5.0)  # the lease ended: the next request leads
    assert found is None and again is not None
    await again.release()


def test_an_uncached_request_costs_two_round_trips_and_a_hit_one() -> None:
    """Through the real server on Redis: the response cache's share of a miss (lookup and lead; store and
    release) and of a hit (lookup), counted on the wire (5 and 1 when the lookup, the lock, the re-read,
    the store and the release each took their own)."""
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}
    bodies = [
        {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": uuid.uuid4().hex}]}  # not semantic
        for _ in range(2)
    ]
    with (
        counting_redis() as (url, count),
        running_gateway(redis_url=url) as gw,
        httpx.Client(base_url=gw.url, headers=headers, timeout=30) as http,
    ):
        trips = []
        for body in [bodies[0], bodies[1], bodies[1]]:  # the first loads the script in Redis
            before = count.trips(b"rc:acme:")
            answer = http.post("/v1/chat/completions", json=body)
            assert answer.status_code == 200, answer.text
            time.sleep(0.3)  # the flight's end
            trips.append((count.trips(b"rc:acme:") - before, answer.headers["x-cachegate-cache"]))
    assert trips[1:] == [(2, "miss"), (1, "exact")]
