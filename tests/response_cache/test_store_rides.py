"""On Redis the response cache stores an exact entry in the request's last state round trip (gateway/
response_cache/cache.py `ride_put`): the entry answers the next identical request, on another replica too,
and past `max_entries` the oldest entries are evicted off the response path, counted."""

from __future__ import annotations

import time
import uuid

from tests.gateway_harness import running_gateway
from tests.redis_target import empty_redis
from tests.response_cache.conftest import metric

EXACT_ONLY = {"x-cachegate-cache-semantic": "off"}


def test_a_stored_entry_answers_and_the_bound_evicts_the_oldest() -> None:
    tag = uuid.uuid4().hex[:8]
    with empty_redis() as url:
        policy = {"response_cache": {"max_entries": 2}}
        with running_gateway(redis_url=url, policy=policy) as a, running_gateway(redis_url=url, policy=policy) as b:
            for number in range(4):
                messages = [{"role": "user", "content": f"[[sim:text answer {number} {tag}]]"}]
                first = a.openai().chat.completions.with_raw_response.create(
                    model="gpt-4o-mini", messages=messages, temperature=0, extra_headers=EXACT_ONLY
                )
                assert first.headers["x-cachegate-cache"] == "miss"
                again = b.openai().chat.completions.with_raw_response.create(
                    model="gpt-4o-mini", messages=messages, temperature=0, extra_headers=EXACT_ONLY
                )
                assert again.headers["x-cachegate-cache"] == "exact"
                assert again.parse().choices[0].message.content == f"answer {number} {tag}"
            deadline = time.monotonic() + 5
            while metric(a, "cachegate_response_cache_evictions_total") < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert metric(a, "cachegate_response_cache_evictions_total") == 2
            oldest = [{"role": "user", "content": f"[[sim:text answer 0 {tag}]]"}]
            gone = b.openai().chat.completions.with_raw_response.create(
                model="gpt-4o-mini", messages=oldest, temperature=0, extra_headers=EXACT_ONLY
            )
            assert gone.headers["x-cachegate-cache"] == "miss"


def test_an_entry_whose_ride_never_left_is_stored_alone() -> None:
    """The state store marked Redis down after the entry boarded the request's round trip (a stall, say):
    the ride never reached Redis. The entry is then stored in a trip of its own, and the cache's breaker
    stays up (it failed nothing: tripping it made every lookup a miss for its cooldown)."""
    import asyncio

    from prometheus_client import CollectorRegistry

    from gateway.config.response_cache import ResponseCacheConfig
    from gateway.response_cache.cache import ResponseCache
    from gateway.response_cache.entry import Entry
    from gateway.response_cache.metrics import ResponseCacheMetrics
    from gateway.response_cache.store import RedisBackend
    from gateway.state import RedisStore, ResilientStore
    from gateway.state.request import RequestStore

    async def run(url: str) -> None:
        fallbacks: list[str] = []
        store = ResilientStore(RedisStore(url, timeout_s=2.0), fallbacks.append)
        cache = ResponseCache.create(store, ResponseCacheConfig(), ResponseCacheMetrics(CollectorRegistry()))
        backend = cache.backend
        assert isinstance(backend, RedisBackend)
        now, key = time.time(), f"rc:acme:default:m:x:{{{uuid.uuid4().hex}}}"
        entry = Entry(key, "openai", {"choices": [{"message": {"content": "hi"}}]}, 0.01, now, now + 60)
        request = RequestStore(store)
        assert cache.ride_put(entry, request)
        store._mark_down()  # as a stalled call marks it, between the ride and the request's last trip
        await request.flush()
        for _ in range(100):
            if await cache.find_exact(key, None) is not None:
                break
            await asyncio.sleep(0.02)
        assert await cache.find_exact(key, None) is not None and not backend.breaker.down
        await cache.aclose()

    with empty_redis() as url:
        asyncio.run(run(url))


def test_a_lookup_whose_ride_never_left_is_made_alone() -> None:
    """Likewise for the read-ahead's lookup-and-lead (`Coalescer.board`): made in a trip of its own, the
    flight led, and the breaker up (a tripped breaker answered the request as if Redis were down)."""
    import asyncio

    from prometheus_client import CollectorRegistry

    from gateway.response_cache.coalesce import Coalescer
    from gateway.response_cache.store import Breaker, RedisBackend
    from gateway.state import RedisStore, ResilientStore
    from gateway.state.request import RequestStore

    async def run(url: str) -> None:
        primary = RedisStore(url, timeout_s=2.0)
        store = ResilientStore(primary, lambda _: None)
        backend = RedisBackend(primary.client, primary.prefix, 100, Breaker(2.0))
        coalescer = Coalescer.create(backend, CollectorRegistry())
        request = RequestStore(store)
        boarding = coalescer.board(f"rc:acme:default:m:x:{{{uuid.uuid4().hex}}}", 5.0, request)
        store._mark_down()
        found, flight = await boarding.outcome(request)
        assert found is None and flight is not None and flight.token is not None and not backend.breaker.down
        await flight.release()

    with empty_redis() as url:
        asyncio.run(run(url))
