"""A deployment's own rate-limit headers lower its share of new sessions before it says 429: two
simulators (each a deployment with its own key, cache and limits; the tight one answers the provider's
real x-ratelimit-* / anthropic-ratelimit-* headers), new sessions through the real gateway, and the tight
deployment is left alone once its headers say it is spent; it never answers a 429."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest

from gateway.sim import create_sim_app
from tests.gateway_harness import TENANT_KEYS, RunningGateway, gateway_settings, running_gateway
from tests.servers import run_app_in_thread
from tests.sim.conftest import SIM_ADMIN, sim_test_settings

POOL = "limited-pool"
RPM = 4  # the tight deployment's requests a minute: spent after 4 new sessions
SESSIONS = 16
WIRES: dict[str, dict[str, Any]] = {
    "openai": {"provider": "openai", "model": "gpt-4o-mini", "suffix": "/v1"},
    "anthropic": {"provider": "anthropic", "model": "claude-sonnet-4-5", "suffix": ""},
}


@pytest.fixture
def sims() -> Iterator[dict[str, str]]:
    """The deployments' simulators: `tight` limited to RPM, `roomy` to a thousand."""
    with ExitStack() as stack:
        yield {
            name: stack.enter_context(run_app_in_thread(create_sim_app(sim_test_settings(rate_limits={"rpm": rpm}))))
            for name, rpm in (("tight", RPM), ("roomy", 1000))
        }


def pool_settings(wire: str, sims: dict[str, str]) -> dict[str, Any]:
    base, spec = gateway_settings(), WIRES[wire]
    deployments = [
        {
            "name": POOL,
            "provider": spec["provider"],
            "model": spec["model"],
            "api_base": url + spec["suffix"],
            "deployment_id": name,
            "retries": 0,
        }
        for name, url in sims.items()
    ]
    return {**base, "models": [*base["models"], *deployments]}


def new_session(gw: RunningGateway, wire: str) -> httpx.Response:
    session = f"new-{uuid.uuid4().hex[:8]}"
    headers = {"x-session-id": session}
    messages = [{"role": "user", "content": f"[[sim:text hi]] {session}"}]  # never a response-cache hit
    if wire == "openai":
        return httpx.post(
            f"{gw.url}/v1/chat/completions",
            headers={**headers, "authorization": f"Bearer {TENANT_KEYS['acme']}"},
            json={"model": POOL, "messages": messages},
            timeout=30,
        )
    return httpx.post(
        f"{gw.url}/v1/messages",
        headers={**headers, "x-api-key": TENANT_KEYS["acme"]},
        json={"model": POOL, "max_tokens": 8, "messages": messages},
        timeout=30,
    )


def sim_stats(url: str) -> dict[str, Any]:
    stats: dict[str, Any] = httpx.get(f"{url}/sim/stats", headers=SIM_ADMIN).json()
    return stats


@pytest.mark.parametrize("wire", list(WIRES))
def test_rate_limit_headers_move_new_sessions_away_before_a_429(wire: str, sims: dict[str, str]) -> None:
    with running_gateway(**pool_settings(wire, sims)) as gw:
        started = time.monotonic()
        for _ in range(SESSIONS):
            response = new_session(gw, wire)
            assert response.status_code == 200, response.text
        refilled = (time.monotonic() - started) * RPM / 60  # a slow machine: the bucket refills meanwhile
        metrics = gw.metrics()
    tight, roomy = sim_stats(sims["tight"]), sim_stats(sims["roomy"])
    # Balanced blindly, the tight deployment would get about half (8) and answer 429s; its headers stop it
    # at its limit instead, with no 429 (nor a failover that cost its session a prefix).
    assert 1 <= tight["totals"].get("requests", 0) <= RPM + refilled, tight
    assert tight["errors"] == {}, tight
    assert roomy["totals"]["requests"] == SESSIONS - tight["totals"]["requests"]
    assert f'cachegate_deployment_headroom{{deployment="tight",model="{POOL}"}}' in metrics
