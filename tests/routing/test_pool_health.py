"""A deployment's circuit breaker on the real stores (in-process, and Redis as replicas share it): repeated
failures open it, after its open time one probe at a time is let through (half-open), a success closes it;
429s rest a deployment for their retry-after without counting towards the breaker."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator

import pytest

from gateway.config import ModelConfig
from gateway.config.pools import PoolsConfig
from gateway.pools.health import Health, Standing
from gateway.pools.model import Deployment
from gateway.state import MemoryStore, RedisStore, StateStore
from gateway.upstream.errors import UpstreamError, UpstreamTimeout
from tests.redis_target import redis_url

OPEN_S = 0.4
CONFIG = PoolsConfig(cooldown_s=0.1, breaker_failures=3, breaker_open_s=OPEN_S, failure_window_s=30)


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[StateStore]:
    store: StateStore = MemoryStore() if request.param == "memory" else RedisStore(redis_url(12))
    yield store
    await store.close()


def deployment() -> Deployment:
    # A pool name of its own: keys never meet another test's on the shared Redis.
    route = ModelConfig(name=f"pool-{uuid.uuid4().hex[:8]}", provider="openai", model="gpt-4o-mini")
    return Deployment(route.name, "east", route)


async def standing(health: Health, d: Deployment) -> Standing:
    cool, fails = await health.store.batch(health.reads(d))
    until, failures = health.parse(cool, fails)
    return Standing(until, failures, 1.0)


async def test_failures_open_the_circuit_then_one_probe_closes_it(store: StateStore) -> None:
    health, d = Health(store, CONFIG), deployment()
    assert (await health.failed(d, UpstreamError(500, "boom")))[:2] == ("server_error", False)
    assert (await health.failed(d, UpstreamTimeout()))[:2] == ("timeout", False)
    reason, opened, rest = await health.failed(d, UpstreamError(502, "The gateway could not reach the provider."))
    assert (reason, opened) == ("unreachable", True) and rest >= OPEN_S
    now = time.time()
    opened = await standing(health, d)
    assert opened.cooling(now) and opened.cooling_until >= now + OPEN_S - 0.1
    await asyncio.sleep(OPEN_S + 0.1)
    half_open = await standing(health, d)
    assert health.half_open(half_open, time.time())
    assert await health.claim_probe(d) and not await health.claim_probe(d)  # one probe at a time
    # The probe fails: open again, for the whole open time.
    assert (await health.failed(d, UpstreamError(503, "busy")))[1] is True
    assert (await standing(health, d)).cooling(time.time())
    await asyncio.sleep(OPEN_S + 0.1)
    assert await health.claim_probe(d)
    await health.succeeded(d, await standing(health, d))
    closed = await standing(health, d)
    assert closed.failures == 0 and not health.half_open(closed, time.time())


async def test_a_429_rests_for_its_retry_after_and_never_opens_the_circuit(store: StateStore) -> None:
    health, d = Health(store, CONFIG), deployment()
    for _ in range(CONFIG.breaker_failures + 1):
        assert await health.failed(d, UpstreamError(429, "slow down", retry_after=2.0)) == ("rate_limit", False, 2.0)
    rested = await standing(health, d)
    assert rested.failures == 0 and rested.cooling_until >= time.time() + 1.5
