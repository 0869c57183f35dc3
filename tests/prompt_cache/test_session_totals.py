"""A session's prompt-cache totals when replicas answer its requests at the same time."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from gateway.prompt_cache.accounting import CacheTotals
from gateway.prompt_cache.session import add_totals
from gateway.state import MemoryStore, RedisStore
from gateway.usage import Cost, Price, Usage
from tests.redis_target import redis_url

PRICE = Price(input=3e-6, cache_read=0.3e-6, cache_write_5m=3.75e-6, cache_write_1h=6e-6, output=15e-6)
REQUESTS = 40


def one_request() -> CacheTotals:
    usage = Usage(uncached_input=100, cache_read=900, cache_write_5m=50, output=20)
    step = CacheTotals()
    step.add(usage, Cost.of(usage, PRICE), PRICE)
    return step


async def concurrent_adds(stores: list[RedisStore] | list[MemoryStore]) -> CacheTotals:
    session = f"acme:s-{uuid.uuid4().hex[:8]}"
    await asyncio.gather(*(add_totals(stores[n % len(stores)], session, one_request(), 60) for n in range(REQUESTS)))
    return await add_totals(stores[0], session, CacheTotals(), 60)  # adding nothing reads the totals


async def test_two_replicas_adding_at_once_lose_no_request() -> None:
    prefix = f"totals-{uuid.uuid4().hex[:6]}:"
    replicas = [RedisStore(redis_url(15), prefix=prefix, timeout_s=2.0) for _ in range(2)]
    try:
        totals = await concurrent_adds(replicas)
    finally:
        for store in replicas:
            await store.close()
    one = one_request()
    assert totals.requests == REQUESTS
    assert (totals.read, totals.write, totals.uncached) == (900 * REQUESTS, 50 * REQUESTS, 100 * REQUESTS)
    assert totals.saved_usd == pytest.approx(one.saved_usd * REQUESTS)


async def test_one_replica_in_memory_adds_every_request() -> None:
    totals = await concurrent_adds([MemoryStore()])
    assert totals.requests == REQUESTS
