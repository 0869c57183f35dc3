"""A guard session that spans the upgrade to one hash of counters (gateway/guard/state.py LEGACY_COUNTERS)
carries its calls, tokens, cost and clock over, so its limits do not start again; a new session starts at
zero, its clock now. On memory and on a real Redis."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator

import pytest

from gateway.guard.state import GuardSessions, session_prefix
from gateway.state import MemoryStore, RedisStore, StateStore
from tests.gateway_harness import REDIS_TEST_URL
from tests.redis_target import cluster_target


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[StateStore]:
    if request.param == "memory":
        yield MemoryStore()
        return
    if cluster_target():
        pytest.skip("the Redis case runs on the one-server target")
    redis_store = RedisStore(REDIS_TEST_URL, prefix=f"test-{uuid.uuid4().hex[:8]}:")
    yield redis_store
    await redis_store.delete(*[key async for key in redis_store.scan("")])
    await redis_store.close()


async def test_counts_of_before_the_hash_carry_over_once(store: StateStore) -> None:
    sessions, prefix = GuardSessions(store, 3600.0), session_prefix("acme", f"s-{uuid.uuid4().hex[:6]}")
    began = time.time() - 600
    await store.incr(prefix + "calls", 7, 3600.0)  # as the gateway of before counted them
    await store.incr(prefix + "tokens", 12_000, 3600.0)
    await store.incr_float(prefix + "cost", 0.42, 3600.0)
    await store.set(prefix + "started", repr(began).encode(), 3600.0)
    first = await sessions.begin(prefix, clock=True)
    assert (first.llm_calls, first.total_tokens, first.cost_usd) == (7, 12_000, pytest.approx(0.42))
    assert first.elapsed_s == pytest.approx(600, abs=5), "the session's clock of before is kept"
    assert [await store.get(prefix + name) for name in ("calls", "tokens", "cost")] == [None] * 3
    await sessions.usage(prefix, 500, 0.01)
    second = await sessions.begin(prefix, clock=True)
    assert (second.llm_calls, second.total_tokens, second.cost_usd) == (8, 12_500, pytest.approx(0.43))
    assert second.elapsed_s == pytest.approx(600, abs=5)


async def test_a_new_session_starts_at_zero_with_its_clock_now(store: StateStore) -> None:
    sessions, prefix = GuardSessions(store, 3600.0), session_prefix("acme", f"n-{uuid.uuid4().hex[:6]}")
    first = await sessions.begin(prefix, clock=True)
    assert (first.llm_calls, first.total_tokens, first.cost_usd, first.elapsed_s) == (0, 0, 0.0, 0.0)
    assert await store.get(prefix + "started") is not None
    second = await sessions.begin(prefix, clock=True)
    assert second.llm_calls == 1 and 0 <= second.elapsed_s < 5
