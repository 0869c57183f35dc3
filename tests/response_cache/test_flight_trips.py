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

from gateway.config import PolicyConfig, Settings, TenantConfig
from gateway.config.compaction import CompactionConfig
from gateway.context import RequestContext
from gateway.pipeline import Pipeline
from gateway.response_cache.coalesce import Coalescer, FlightLock
from gateway.response_cache.entry import Entry, decode_entry, encode_entry
from gateway.response_cache.keys import EXACT_TIER, Place
from gateway.response_cache.store import Breaker, CacheUnavailable, RedisBackend
from gateway.services import create_services
from gateway.stages.base import Stage
from gateway.stages.response_cache import ResponseCacheStage
from gateway.state import RedisStore
from gateway.state.base import Op
from gateway.state.request import RequestStore
from gateway.wire import OPENAI
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


@contextlib.asynccontextmanager
async def _replica(url: str, prefix: str) -> AsyncIterator[tuple[RedisStore, Coalescer]]:
    """A replica's state store and the coalescer of its cache, on one Redis client (as the gateway builds them)."""
    store = RedisStore(url, timeout_s=5.0, prefix=prefix)
    try:
        yield store, Coalescer.create(RedisBackend(store.client, prefix, 100, Breaker(5.0)), CollectorRegistry())
    finally:
        await store.close()


@pytest.mark.parametrize("server", ["redis", "cluster"])
async def test_a_lookup_that_rides_a_request_round_trip_leads_follows_and_finds(
    server: str, request: pytest.FixtureRequest
) -> None:
    """`board`: the lookup and lead go with the request's state round trip (one trip for both; on a cluster,
    one per node), with `find_or_lead`'s semantics: a miss leads, another replica's identical request
    follows it, a hit takes no lock."""
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    with contextlib.ExitStack() as stack:
        if server == "cluster":
            url, count = request.getfixturevalue("cluster_url"), None
        else:
            url, count = stack.enter_context(counting_redis())
        async with _replica(url, prefix) as (store, one), _replica(url, prefix) as (other, two):
            assert one.lock is not None
            key = _entry_key()
            view = RequestStore(store)
            view.expect([Op("get", "session")])
            boarding = one.board(key, 5.0, view)
            assert one.following(key)  # from the start: an identical request on this replica joins it
            before = count.trips(prefix.encode()) if count else 0
            assert await view.get("session") is None  # the stage that reads first sends the trip
            found, led = await boarding.outcome(view)
            assert count is None or count.trips(prefix.encode()) - before == 1
            assert found is None and led is not None and led.token is not None and await one.lock.held(key)
            # Another replica's identical request, riding its own request's trip, waits for the flight.
            follower_view = RequestStore(other)
            follower = asyncio.create_task(two.board(key, 5.0, follower_view).outcome(follower_view))
            await asyncio.sleep(0.1)
            assert not follower.done()
            stored = encode_entry(_answer(key))
            await one.lock.client.set(one.lock.entries + key, stored)
            await led.release()
            assert await asyncio.wait_for(follower, 3.0) in ((None, None), (stored, None))
            # A hit takes no lock, and the flight it opened on this replica ends with the lookup.
            hit_view = RequestStore(store)
            found, flight = await one.board(key, 5.0, hit_view).outcome(hit_view)  # no stage sent a trip: it does
            assert flight is None and found == stored
            assert not one.following(key) and not await one.lock.held(key)


async def test_a_lock_taken_after_its_request_ended_is_let_go() -> None:
    """A request the guard answered never reaches the response cache: its lookup goes with the request's last
    flush, after its flight ended, and the lock that lookup takes is released when it lands."""
    with counting_redis() as (url, _):
        async with _replica(url, f"t{uuid.uuid4().hex[:8]}:") as (store, coalescer):
            assert coalescer.lock is not None
            key, view = _entry_key(), RequestStore(store)
            boarding = coalescer.board(key, 60.0, view)
            await boarding.flight.release()  # the request ended
            await view.flush()
            for _ in range(50):
                if not await coalescer.lock.held(key):
                    break
                await asyncio.sleep(0.05)
            assert boarding.reply is not None and not await coalescer.lock.held(key)


async def test_a_ridden_lookup_without_redis_is_unavailable() -> None:
    async with _replica("redis://127.0.0.1:1/0", "t:") as (store, coalescer):
        store.timeout_s = 0.2
        view, key = RequestStore(store), _entry_key()
        boarding = coalescer.board(key, 5.0, view)
        with pytest.raises(CacheUnavailable):
            await boarding.outcome(view)
        assert not coalescer.following(key) and coalescer.lock is not None and coalescer.lock.breaker.down


class _Reader(Stage):
    """The first stage to read state (as the guard does): its read sends the request's first round trip;
    `rewrite`: it then rewrites the body, as a guard's nudge or compaction may."""

    name = "reader"

    def __init__(self, rewrite: bool) -> None:
        self.rewrite = rewrite

    def reads_ahead(self, ctx: RequestContext) -> list[Op]:
        return [Op("get", "acme:reader")]

    async def on_request(self, ctx: RequestContext) -> None:
        await ctx.state.get("acme:reader")
        if self.rewrite:
            ctx.body = {**ctx.body, "messages": [*ctx.body["messages"], {"role": "user", "content": "Note: ..."}]}


@pytest.mark.parametrize("case", ["untouched", "rewritten", "retrieval tool"])
async def test_the_stage_keys_the_body_it_forwards(case: str) -> None:
    """Through the pipeline on Redis: the response cache's lookup rides the read-ahead, keyed on the body as
    it was then; a stage that rewrites the body after (a guard's nudge, compaction) makes the stage let
    that flight go and look the rewritten body up: the lock it holds is the forwarded body's, alone. With
    compaction's retrieval tool on (it rewrites most tool-using bodies) the lookup does not ride."""
    rewrite = case == "rewritten"
    with counting_redis() as (url, count):
        model = {"name": "m", "provider": "openai", "model": "gpt-4o-mini", "api_base": "http://x"}
        services = create_services(Settings.model_validate({"models": [model], "redis_url": url}))
        stage = ResponseCacheStage(services)
        pipeline = Pipeline([_Reader(rewrite), stage], [], services.metrics)
        body = {"model": "m", "messages": [{"role": "user", "content": uuid.uuid4().hex}]}
        retrieval = CompactionConfig(retrieval_tool=case == "retrieval tool")
        ctx = RequestContext(
            wire=OPENAI,
            body=body,
            headers={},
            services=services,
            tenant=TenantConfig(name="acme"),
            session_id="s",
            route=services.settings.models[0],
            policy=PolicyConfig(compaction=retrieval),
        )
        before = count.trips(b"acme")
        await pipeline.run_request(ctx)  # in this task: the flight it leads lasts until released below
        pending = ctx.notes[stage.name]
        assert pending.flight is not None and pending.flight.token is not None  # a miss: it leads
        lock = stage.coalescer.lock
        assert lock is not None
        held = [key async for key in lock.client.scan_iter(match=f"{lock.prefix}*")]
        assert held == [(lock.prefix + pending.exact_key).encode()]
        # One: the read-ahead carried the lookup. Rewritten: also the let-go lock's release and the new lookup.
        # Not riding: the read-ahead and the stage's own lookup.
        assert count.trips(b"acme") - before == {"untouched": 1, "rewritten": 3, "retrieval tool": 2}[case]
        assert stage.coalescer.flights.keys() == {pending.exact_key}
        await pending.flight.release()
        await services.close()
