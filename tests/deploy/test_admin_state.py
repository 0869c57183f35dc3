"""GET /admin/state/stats on a single gateway (embedded default: the in-process store).

The Redis side (shared by replicas, and its fallback) is in test_replicas.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from gateway.api.admin_state import MAX_COUNTED_KEYS
from tests.gateway_harness import ADMIN_KEY, TENANT_KEYS, RunningGateway, running_gateway

ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    with running_gateway() as gw:
        yield gw


def stats(gw: RunningGateway, **params: str) -> httpx.Response:
    return httpx.get(f"{gw.url}/admin/state/stats", headers=ADMIN, params=params)


def test_needs_the_admin_key(gw: RunningGateway) -> None:
    url = f"{gw.url}/admin/state/stats"
    assert httpx.get(url).status_code == 401
    assert httpx.get(url, headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"}).status_code == 401


def test_reports_the_in_process_store(gw: RunningGateway) -> None:
    assert stats(gw).json() == {"backend": "memory", "shared": False, "healthy": True}


def test_counts_keys_under_a_prefix_up_to_a_bound(gw: RunningGateway) -> None:
    store = gw.services.store

    async def write(prefix: str, count: int) -> None:
        for i in range(count):
            await store.set(f"{prefix}{i}", b"x", ttl_s=60)

    asyncio.run(write("globex:stats-test:", 3))
    asyncio.run(write("globex:stats-many:", MAX_COUNTED_KEYS + 5))
    few = stats(gw, prefix="globex:stats-test:").json()
    assert (few["keys"], few["keys_truncated"], few["prefix"]) == (3, False, "globex:stats-test:")
    many = stats(gw, prefix="globex:stats-many:").json()
    assert (many["keys"], many["keys_truncated"]) == (MAX_COUNTED_KEYS, True)


def test_rejects_an_empty_prefix(gw: RunningGateway) -> None:
    assert stats(gw, prefix="").status_code == 400
