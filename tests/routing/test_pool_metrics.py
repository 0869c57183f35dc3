"""Per-deployment prompt-cache tokens on /metrics: each deployment keeps its own cache, so its own
cache-hit ratio (cache_read over cache_read + uncached) is what shows a deployment losing prefixes."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.gateway_harness import TENANT_KEYS, RunningGateway, gateway_settings, running_gateway

POOL = "metered-pool"
SYSTEM = " ".join(f"rule{i}" for i in range(1600))  # past the simulator's 1,024-token caching threshold


def pool_settings() -> dict[str, Any]:
    base = gateway_settings()
    deployments = [
        {"name": POOL, "provider": "openai", "model": "gpt-4o-mini", "api_base": "embedded-sim", "deployment_id": name}
        for name in ("east", "west")
    ]
    return {**base, "models": [*base["models"], *deployments]}


def chat(gw: RunningGateway, session: str, turns: list[str]) -> dict[str, Any]:
    messages = [{"role": "system", "content": SYSTEM}, *({"role": "user", "content": t} for t in turns)]
    response = httpx.post(
        f"{gw.url}/v1/chat/completions",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}", "x-session-id": session},
        json={"model": POOL, "messages": messages},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def input_tokens(text: str) -> dict[tuple[str, str], float]:
    """(deployment, kind) -> tokens, for the test's pool."""
    return {
        (sample.labels["deployment"], sample.labels["kind"]): sample.value
        for family in text_string_to_metric_families(text)
        if family.name == "cachegate_deployment_input_tokens"
        for sample in family.samples
        if sample.name.endswith("_total") and sample.labels["model"] == POOL
    }


def test_each_deployment_counts_its_cached_and_uncached_input_tokens() -> None:
    with running_gateway(**pool_settings()) as gw:
        session = f"metrics-{uuid.uuid4().hex[:8]}"
        first = chat(gw, session, ["[[sim:text one]]"])
        second = chat(gw, session, ["[[sim:text one]]", "[[sim:text two]]"])
        tokens = input_tokens(gw.metrics())
    prompts = first["usage"]["prompt_tokens"] + second["usage"]["prompt_tokens"]
    cached = second["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cached > 0  # the second turn read the first one's prefix, on the same deployment (sticky)
    home = next(deployment for deployment, kind in tokens if kind == "cache_read")
    assert tokens == {(home, "cache_read"): cached, (home, "uncached"): prompts - cached}
