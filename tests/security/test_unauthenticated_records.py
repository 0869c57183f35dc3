"""Requests without a valid key cannot fill the store with records (issue 26, finding 9: each wrote a
24-hour Redis record, 2,000 in a second, uncapped): at most `request_log.unauthenticated_per_s` a second
per replica are kept, the rest counted in cachegate_request_records_dropped_total."""

from __future__ import annotations

import asyncio
import re
import time

import httpx
import redis

from tests.gateway_harness import gateway_settings, running_gateway
from tests.redis_target import empty_redis

REQUESTS, PER_S = 2000, 5.0


def dropped(metrics: str) -> float:
    found = re.search(r"^cachegate_request_records_dropped_total (\S+)$", metrics, re.M)
    return float(found.group(1)) if found else 0.0


async def knock(url: str) -> float:
    """REQUESTS chat requests with a wrong key, 100 at a time; the seconds they took."""
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
    started = time.monotonic()
    limits = httpx.Limits(max_connections=100)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
        for _ in range(REQUESTS // 100):
            sent = [client.post("/v1/chat/completions", json=body, headers={"authorization": "Bearer sk-wrong"})]
            sent += [client.post("/v1/chat/completions", json=body) for _ in range(99)]  # no key at all
            assert {response.status_code for response in await asyncio.gather(*sent)} == {401}
    return time.monotonic() - started


def test_records_of_unauthenticated_requests_are_capped() -> None:
    with empty_redis() as url:
        settings = gateway_settings(redis_url=url, request_log={"unauthenticated_per_s": PER_S})
        with running_gateway(**settings) as gw:
            seconds = asyncio.run(knock(gw.url))
            queue = gw.services.requests.queue
            deadline = time.monotonic() + 10
            while not queue.empty() and time.monotonic() < deadline:  # the writer catches up
                time.sleep(0.05)
            time.sleep(0.3)
            client = redis.Redis.from_url(url)
            stored = sum(1 for _ in client.scan_iter(match="cg:requests:{unknown}:id:*", count=1000))
            client.close()
            allowed = PER_S * seconds + PER_S + 1  # the rate over the run, plus one burst
            assert 0 < stored <= allowed, f"{stored} records of {REQUESTS} unauthenticated requests in {seconds:.1f} s"
            assert dropped(gw.metrics()) >= REQUESTS - stored
