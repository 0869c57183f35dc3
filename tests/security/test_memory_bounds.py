"""Per-replica memory keyed by what callers send stays bounded (security issue #11, item 11).

The semantic index, the guard's step-parser cache and its active-session map are bounded by entries
and bytes, per tenant and in total; the least recently used go first, each eviction is counted in
cachegate_memory_evictions_total{cache, reason}, and one tenant filling its share never evicts another
tenant's entries. A new semantic scope used to cost ~25 KB on every replica (16 preallocated rows).
"""

from __future__ import annotations

import time
import tracemalloc
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import numpy as np
import pytest

from gateway.guard.activity import Activity
from gateway.guard.parsers import SessionParsers
from gateway.response_cache.cache import ResponseCache
from gateway.response_cache.keys import Place
from gateway.stages.guard import GuardStage
from tests.gateway_harness import ADMIN_KEY, RunningGateway, running_gateway

PER_TENANT, TOTAL = 4, 7


def _evictions(gw: RunningGateway, cache: str) -> dict[str, float]:
    found: dict[str, float] = {}
    for line in gw.metrics().splitlines():
        if line.startswith("cachegate_memory_evictions_total{") and f'cache="{cache}"' in line:
            reason = line.split('reason="', 1)[1].split('"', 1)[0]
            found[reason] = float(line.rsplit(" ", 1)[1])
    return found


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    policy = {
        "response_cache": {"max_entries": 50, "index_max_entries_per_tenant": PER_TENANT},
        "guard": {
            "parser_cache_sessions": TOTAL,
            "memory": {
                "parser_cache_sessions_per_tenant": PER_TENANT,
                "active_sessions": TOTAL,
                "active_sessions_per_tenant": PER_TENANT,
            },
        },
    }
    with running_gateway(policy=policy) as gateway:
        yield gateway


def _cache(gw: RunningGateway) -> ResponseCache:
    cache = gw.services.extras["response_cache"]
    assert isinstance(cache, ResponseCache)
    return cache


def _guard(gw: RunningGateway) -> GuardStage:
    return next(s for s in gw.services.pipeline.request_stages if isinstance(s, GuardStage))


def _warm_embedder(gw: RunningGateway, timeout_s: float = 120.0) -> None:
    gw.openai("globex").chat.completions.create(
        model="gpt-4o-mini",
        temperature=0,
        messages=[{"role": "user", "content": f"warm {uuid.uuid4().hex}"}],
        extra_headers={"x-cachegate-cache-namespace": "warmup"},
    )
    deadline = time.monotonic() + timeout_s
    while (
        httpx.get(f"{gw.url}/admin/cache/status", headers={"authorization": f"Bearer {ADMIN_KEY}"}).json()["embedder"]
        != "ready"
    ):
        assert time.monotonic() < deadline, "the embedder did not load"
        time.sleep(0.2)


def _semantic_keys(gw: RunningGateway, tenant: str) -> set[str]:
    index = _cache(gw).index
    prefix = Place(tenant, "bounds", "gpt-4o-mini").prefix()
    return {key for key in index._expires if key.startswith(prefix)}


def _ask(gw: RunningGateway, tenant: str, prompt: str) -> None:
    """A semantic-eligible request (temperature 0, a text user turn): its answer is stored with a vector."""
    gw.openai(tenant).chat.completions.create(
        model="gpt-4o-mini",
        temperature=0,
        messages=[{"role": "user", "content": prompt}],
        extra_headers={"x-cachegate-cache-namespace": "bounds"},
    )


def test_semantic_index_caps_per_tenant_and_total(gw: RunningGateway) -> None:
    _warm_embedder(gw)
    index = _cache(gw).index
    _cache(gw).index.clear()
    for i in range(3):
        _ask(gw, "globex", f"What is the capital of country number {i}? {uuid.uuid4().hex}")
    globex = _semantic_keys(gw, "globex")
    assert len(globex) == 3
    before = _evictions(gw, "semantic_index")

    added: list[str] = []
    for i in range(10):  # acme fills far past its share
        _ask(gw, "acme", f"How many moons does planet {i} have? {uuid.uuid4().hex}")
        added.append(next(iter(_semantic_keys(gw, "acme") - set(added)), ""))
    acme = _semantic_keys(gw, "acme")
    assert len(acme) == PER_TENANT and acme == set(added[-PER_TENANT:])  # its oldest went first
    assert _semantic_keys(gw, "globex") == globex  # the other tenant's entries were not touched
    after = _evictions(gw, "semantic_index")
    assert after.get("tenant_entries", 0) - before.get("tenant_entries", 0) == 10 - PER_TENANT
    entries, size = index.tenant_usage("acme")
    assert (
        entries == PER_TENANT and size > 0 and index.bytes <= gw.services.settings.policy.response_cache.index_max_bytes
    )


def test_semantic_index_bytes_caps_evict_oldest_first() -> None:
    """The same index class under byte caps (direct: tiny byte caps would need thousands of requests)."""
    from gateway.bounded import Caps
    from gateway.response_cache.local_index import LocalIndex

    reasons: list[str] = []
    rng = np.random.default_rng(0)

    def add(index: LocalIndex, tenant: str, i: int) -> str:
        key = Place(tenant, "n", "m").key("s", f"{i:04d}")
        index.add(key, f"scope-{tenant}-{i:04d}", rng.standard_normal(384).astype(np.float32), time.time() + 60)
        return key

    probe = LocalIndex(Caps(10**6, 10**9, 10**6, 10**9))
    add(probe, "z", 9999)
    entry = probe.bytes  # every entry below has the same shape
    caps = Caps(
        max_entries=1000, max_bytes=int(5.5 * entry), max_entries_per_tenant=1000, max_bytes_per_tenant=3 * entry
    )
    index = LocalIndex(caps, reasons.append)

    keys = [add(index, "a", i) for i in range(6)]
    assert [k in index._expires for k in keys] == [False, False, False, True, True, True]
    assert reasons == ["tenant_bytes"] * 3 and index.tenant_usage("a")[1] <= caps.max_bytes_per_tenant
    b_keys = [add(index, "b", i) for i in range(3)]
    assert index.bytes <= caps.max_bytes and reasons[3:] == ["bytes"] * (len(reasons) - 3)
    assert all(k in index._expires for k in b_keys[1:])  # only the globally oldest went


def test_a_new_scope_costs_little_memory() -> None:
    from gateway.bounded import Caps
    from gateway.response_cache.local_index import LocalIndex

    index = LocalIndex(Caps(10**6, 10**12, 10**6, 10**12))
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((2001, 384)).astype(np.float32)
    index.add(Place("t", "n", "m").key("s", "first"), "first", vectors[0], time.time() + 60)
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for i in range(1, 2001):
            index.add(Place("t", "n", "m").key("s", f"{i:032x}"), f"{i:032x}", vectors[i], time.time() + 60)
        per_scope = (tracemalloc.get_traced_memory()[0] - start) / 2000
    finally:
        tracemalloc.stop()
    assert per_scope < 4 * 1024, f"{per_scope:.0f} bytes per scope"  # was ~25 KB: 16 preallocated rows
    assert index.bytes >= 2000 * per_scope * 0.8  # what is accounted is what is held (roughly)


def _session_request(gw: RunningGateway, tenant: str, session: str) -> None:
    gw.openai(tenant).chat.completions.create(
        model="gpt-4o-mini",
        max_tokens=5,
        messages=[{"role": "user", "content": f"hello {uuid.uuid4().hex}"}],
        extra_headers={"x-session-id": session, "x-cachegate-cache": "no-store"},
    )


def test_guard_maps_stay_within_caps_and_tenants_keep_their_share(gw: RunningGateway) -> None:
    guard = _guard(gw)
    globex = [f"g-{uuid.uuid4().hex}" for _ in range(PER_TENANT - 1)]
    for session in globex:
        _session_request(gw, "globex", session)
    before: dict[str, Any] = {c: _evictions(gw, c) for c in ("guard_parsers", "guard_activity")}
    for _ in range(25):  # acme floods with new session ids
        _session_request(gw, "acme", f"a-{uuid.uuid4().hex}")
    for cache in (guard.parsers, guard.activity):
        assert len(cache) <= TOTAL
        assert cache.tenant_usage("acme")[0] == PER_TENANT
        assert cache.tenant_usage("globex")[0] == len(globex)  # untouched by acme's flood
    for name in ("guard_parsers", "guard_activity"):
        grown = _evictions(gw, name).get("tenant_entries", 0) - before[name].get("tenant_entries", 0)
        assert grown >= 25 - PER_TENANT


def test_guard_parser_cache_bytes_are_capped() -> None:
    from gateway.config.guard import GuardMemoryConfig

    reasons: list[str] = []
    memory = GuardMemoryConfig(parser_cache_bytes=200_000, parser_cache_bytes_per_tenant=120_000)
    parsers = SessionParsers(1000, memory, lambda _, reason: reasons.append(reason))
    big = "x" * 30_000
    for i in range(10):
        messages = [{"role": "user", "content": big}, {"role": "assistant", "content": f"answer {i}"}]
        parsers.steps(f"acme:s{i}", "openai", messages, keep=10)
        parsers.steps(f"globex:s{i}", "openai", messages[:1], keep=10)
    assert parsers.tenant_usage("acme")[1] <= 120_000 and parsers.tenant_usage("globex")[1] <= 120_000
    assert parsers.bytes <= 200_000 and "tenant_bytes" in reasons


def test_guard_parser_holds_a_bounded_tail_of_a_growing_history() -> None:
    parsers = SessionParsers(10)
    history: list[dict[str, Any]] = [{"role": "user", "content": "task"}]
    for i in range(300):
        history += [{"role": "assistant", "content": f"step {i}"}, {"role": "user", "content": f"ok {i}"}]
        parsers.steps("acme:long", "openai", history, keep=10)
    assert parsers.bytes < 3 * 10 * 64  # never more than 3 * keep short messages held


def test_activity_map_is_capped_without_a_gateway() -> None:
    from gateway.config.guard import GuardMemoryConfig

    reasons: list[str] = []
    activity = Activity(
        900.0, GuardMemoryConfig(active_sessions=50, active_sessions_per_tenant=30), lambda _, r: reasons.append(r)
    )
    for i in range(100):
        activity.touch(f"acme:{i}")
    for i in range(10):
        activity.touch(f"globex:{i}")
    assert activity.active() <= 50 and activity.tenant_usage("acme")[0] <= 30
    assert activity.tenant_usage("globex")[0] == 10 and set(reasons) <= {"tenant_entries", "entries"}


def test_an_entry_put_again_is_the_newest_and_counted_once() -> None:
    """A session's entry is put back on each of its requests (replaced in place): its bytes are counted
    once at their new size, it is the newest again, and the caps evict by the same order as before."""
    from gateway.bounded import Caps, TenantLRU

    evicted: list[tuple[str, str]] = []
    lru: TenantLRU[str] = TenantLRU(Caps(3, 1_000, 3, 600), lambda key, reason: evicted.append((key, reason)))
    for key in ("a", "b", "c"):
        lru.put(key, "acme", f"{key}1", 100)
    lru.put("a", "acme", "a2", 250)  # a grows and becomes the newest
    assert (lru.bytes, lru.tenant_usage("acme"), lru.get("a")) == (450, (3, 450), "a2")
    lru.put("d", "acme", "d1", 100)  # over 3 entries: b, now the oldest, goes
    assert evicted == [("b", "tenant_entries")] and "a" in lru and "c" in lru
    lru.put("c", "acme", "c2", 400)  # c, the oldest, grows past the tenant's 600 bytes: a, now the oldest, goes
    assert evicted[1:] == [("a", "tenant_bytes")] and lru.tenant_usage("acme") == (2, 500)
    lru.put("c", "globex", "c3", 50)  # the same key under another tenant: moved, each tenant's counts kept
    assert (lru.tenant_usage("acme"), lru.tenant_usage("globex"), lru.bytes) == ((1, 100), (1, 50), 150)
