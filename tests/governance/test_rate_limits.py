"""Rate limits of a tenant: requests per minute and concurrent requests, answered with 429 and
`retry-after` in each API's shape, held exactly by two replicas sharing one Redis."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.gateway_harness import TENANT_KEYS, RunningGateway, gateway_settings, running_gateway
from tests.redis_target import empty_redis


def limited(limits: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    """Test settings whose tenant `acme` has `limits` (the other tenant has none)."""
    settings = gateway_settings(**overrides)
    settings["tenants"] = [{**t, "limits": limits} if t["name"] == "acme" else t for t in settings["tenants"]]
    return settings


def chat(gw: RunningGateway, tenant: str = "acme", text: str = "[[sim:text ok]]") -> httpx.Response:
    return httpx.post(
        f"{gw.url}/v1/chat/completions",
        headers={"authorization": f"Bearer {TENANT_KEYS[tenant]}"},
        json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}]},
        timeout=30,
    )


@pytest.fixture
def rpm3() -> Iterator[RunningGateway]:
    with running_gateway(**limited({"requests_per_minute": 3})) as gw:
        yield gw


def test_requests_per_minute_in_each_api_shape(rpm3: RunningGateway) -> None:
    for _ in range(3):
        assert (
            rpm3.openai()
            .chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "[[sim:text ok]]"}])
            .choices[0]
            .message.content
            == "ok"
        )
    with pytest.raises(openai.RateLimitError) as refused:
        rpm3.openai().chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    retry_after = float(refused.value.response.headers["retry-after"])
    assert 0 < retry_after <= 60 and "3 requests per minute" in refused.value.message
    assert refused.value.body["code"] == "rate_limit_exceeded"  # type: ignore[index]
    with pytest.raises(anthropic.RateLimitError) as claude:
        rpm3.anthropic().messages.create(
            model="claude-sonnet-4-5", max_tokens=16, messages=[{"role": "user", "content": "hi"}]
        )
    assert claude.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
    gemini = httpx.post(
        f"{rpm3.url}/v1beta/models/gpt-4o-mini:generateContent",
        headers={"x-goog-api-key": TENANT_KEYS["acme"]},
        json={"contents": [{"parts": [{"text": "hi"}]}]},
    )
    assert gemini.status_code == 429 and gemini.json()["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert chat(rpm3, "globex").status_code == 200  # another tenant is not limited
    assert 'cachegate_rate_limited_requests_total{tenant="acme"} 3.0' in rpm3.metrics()


def test_concurrent_requests_hold_their_place_until_they_end() -> None:
    settings = limited({"concurrent_requests": 2}, simulator_latency="realistic")
    with running_gateway(**settings) as gw, ThreadPoolExecutor(6) as pool:
        slow = "[[sim:tokens 40]]"  # ~0.25 s to the first token, ~0.5 s of decoding
        codes = sorted(r.status_code for r in pool.map(lambda i: chat(gw, text=f"{slow} {i}"), range(6)))
        assert codes == [200, 200, 429, 429, 429, 429]
        assert chat(gw).status_code == 200  # the places were given back

        def stream(i: int) -> int:  # distinct prompts: none is answered from the response cache
            body = {"model": "gpt-4o-mini", "stream": True, "messages": [{"role": "user", "content": f"{slow} s{i}"}]}
            headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}
            with httpx.stream("POST", f"{gw.url}/v1/chat/completions", json=body, headers=headers) as r:
                r.read()
                return r.status_code

        assert sorted(pool.map(stream, range(4))) == [200, 200, 429, 429]
        assert chat(gw).status_code == 200


def test_two_replicas_on_one_redis_hold_one_limit_exactly() -> None:
    with empty_redis() as url:
        # A generous Redis timeout: a cold replica's first requests start the embedding model's load, whose
        # imports hold the GIL for ~1 s; a 0.25 s timeout would then send `admit` to each replica's own
        # fallback (counted), which is the outage behaviour, not the shared limit under test.
        settings = limited({"requests_per_minute": 7}, redis_url=url, redis_timeout_s=2.0)
        with running_gateway(**settings) as a, running_gateway(**settings) as b, ThreadPoolExecutor(20) as pool:
            codes = list(pool.map(lambda i: chat(a if i % 2 else b).status_code, range(20)))
        assert codes.count(200) == 7 and codes.count(429) == 13


def ask(gw: RunningGateway, text: str, max_tokens: int) -> httpx.Response:
    body = {"model": "gpt-4o-mini", "max_tokens": max_tokens, "messages": [{"role": "user", "content": text}]}
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}
    return httpx.post(f"{gw.url}/v1/chat/completions", headers=headers, json=body, timeout=30)


def test_tokens_per_minute_hold_the_worst_case_then_count_the_tokens_used() -> None:
    """In flight, a request counts its input and its output cap (about 340 tokens here: a second request
    still finds the window under 600, a third does not), on two replicas sharing one Redis; once answered,
    the tokens it used."""
    with empty_redis() as url:
        settings = limited({"tokens_per_minute": 600}, redis_url=url, simulator_latency="realistic")
        with running_gateway(**settings) as a, running_gateway(**settings) as b, ThreadPoolExecutor(6) as pool:
            slow = "[[sim:tokens 40]]"
            burst = list(pool.map(lambda i: ask(a if i % 2 else b, f"{slow} {i}", 300), range(6)))
            assert sorted(r.status_code for r in burst) == [200, 200, 429, 429, 429, 429]
            refused = next(r for r in burst if r.status_code == 429)
            assert "600 tokens per minute" in refused.json()["error"]["message"]
            assert 0 < float(refused.headers["retry-after"]) <= 60
            used = sum(int(r.json()["usage"]["total_tokens"]) for r in burst if r.status_code == 200)
            answered = [ask(a, f"[[sim:tokens 150]] {i}", 200) for i in range(6)]  # about 170 tokens each
            served = [r for r in answered if r.status_code == 200]
            used += sum(int(r.json()["usage"]["total_tokens"]) for r in served)
            assert answered[len(served)].status_code == 429 and 2 <= len(served) < 6
            assert 600 <= used < 600 + 300  # refused once the tokens used reach the limit: one request past it at most
