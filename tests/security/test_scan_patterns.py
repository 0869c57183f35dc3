"""Caller and admin text never acts as a Redis glob: SCAN patterns match it literally."""

from __future__ import annotations

import uuid

import httpx

from gateway.state import RedisStore
from tests.gateway_harness import ADMIN_KEY, running_gateway
from tests.redis_target import flush, redis_url

REDIS_URL = redis_url(13)


async def test_store_scan_matches_prefix_literally() -> None:
    store = RedisStore(REDIS_URL, prefix=f"test-{uuid.uuid4().hex[:8]}:")
    try:
        await store.set("acme:guard:s1:strikes", b"1")
        await store.set("globex:guard:s2:strikes", b"1")
        await store.set("a*:literal", b"1")
        for pattern in ("*", "g*", "?cme:", "[ag]*", "acme:guard:s[12]"):
            found = [key async for key in store.scan(pattern)]
            assert found == [], pattern
        assert [key async for key in store.scan("a*:")] == ["a*:literal"]
        assert [key async for key in store.scan("acme:")] == ["acme:guard:s1:strikes"]
    finally:
        await store.delete(*[key async for key in store.scan("")])
        await store.close()


def test_admin_session_listing_cannot_glob_across_tenants() -> None:
    flush(REDIS_URL)
    admin = {"authorization": f"Bearer {ADMIN_KEY}"}
    with running_gateway(redis_url=REDIS_URL) as gw:
        for tenant in ("acme", "globex"):
            gw.openai(tenant).chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": "hello"}],
                extra_headers={"x-session-id": f"{tenant}-run"},
            )
        listed = httpx.get(f"{gw.url}/admin/guard/sessions", params={"tenant": "acme"}, headers=admin).json()
        assert listed["sessions"] == ["acme-run"]
        for tenant in ("*", "?cme", "[ag]*"):
            listed = httpx.get(f"{gw.url}/admin/guard/sessions", params={"tenant": tenant}, headers=admin).json()
            assert listed["sessions"] == [], tenant
        stats = httpx.get(f"{gw.url}/admin/state/stats", params={"prefix": "*"}, headers=admin).json()
        assert stats["keys"] == 0
    flush(REDIS_URL)
