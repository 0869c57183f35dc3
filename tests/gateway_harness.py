"""A real gateway for tests: uvicorn on a loopback port, the simulator mounted in-process, real SDKs."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx
import openai

from gateway import collector
from gateway.app import create_app
from gateway.config import Settings, hash_key
from gateway.services import Services
from tests.redis_target import empty_redis, redis_url
from tests.servers import free_socket, serve_on_socket

TENANT_KEYS = {"acme": "sk-acme-test", "globex": "sk-globex-test"}
ADMIN_KEY = "sk-admin-test"
ADMIN_HEADERS = {"authorization": f"Bearer {ADMIN_KEY}"}  # the simulator's controls and /metrics need it
REDIS_TEST_URL = redis_url(15)


def gateway_settings(path: str = "auto", **overrides: Any) -> dict[str, Any]:
    """Settings for tests; `path` forces the lean or the LiteLLM upstream path for every model."""
    models = [
        {
            "name": "gpt-4o-mini",
            "provider": "openai",
            "model": "gpt-4o-mini",
            "api_base": "embedded-sim",
            "path": path,
            "retries": 2,
        },
        {
            "name": "claude-sonnet-4-5",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "api_base": "embedded-sim",
            "path": path,
            "retries": 2,
        },
        {
            "name": "gemini-2.5-flash",
            "provider": "gemini",
            "model": "gemini-2.5-flash",
            "api_base": "embedded-sim",
            "path": path,
            "retries": 2,
        },
        {
            "name": "flaky",
            "provider": "openai",
            "model": "gpt-4.1-mini",
            "api_base": "embedded-sim",
            "path": path,
            "retries": 1,
            "fallbacks": ["gpt-4o-mini"],
        },
        {
            "name": "slow",
            "provider": "openai",
            "model": "gpt-4o-mini",
            "api_base": "embedded-sim",
            "path": path,
            "retries": 0,
            "timeout_s": 1.0,
        },
    ]
    base: dict[str, Any] = {
        "embedded_simulator": True,
        "models": models,
        "tenants": [{"name": name, "keys": [hash_key(key)]} for name, key in TENANT_KEYS.items()],
        "admin_keys": [hash_key(ADMIN_KEY)],
        "max_body_bytes": 256 * 1024,
        "simulator_record_requests": True,  # tests read what reached the provider (gw.sim_requests)
    }
    return {**base, **overrides}


@dataclass
class RunningGateway:
    url: str
    services: Services

    @property
    def sim_url(self) -> str:
        return f"{self.url}/sim"

    def openai(self, tenant: str = "acme", **kwargs: Any) -> openai.OpenAI:
        return openai.OpenAI(base_url=f"{self.url}/v1", api_key=TENANT_KEYS[tenant], max_retries=0, **kwargs)

    def anthropic(self, tenant: str = "acme", **kwargs: Any) -> anthropic.Anthropic:
        return anthropic.Anthropic(base_url=self.url, api_key=TENANT_KEYS[tenant], max_retries=0, **kwargs)

    def reset_sim(self) -> None:
        httpx.post(f"{self.sim_url}/sim/reset", headers=ADMIN_HEADERS).raise_for_status()

    def queue_faults(self, *faults: str, model: str | None = None) -> None:
        body = {"faults": list(faults), "model": model}
        httpx.post(f"{self.sim_url}/sim/faults", json=body, headers=ADMIN_HEADERS).raise_for_status()

    def sim_stats(self) -> dict[str, Any]:
        response = httpx.get(f"{self.sim_url}/sim/stats", headers=ADMIN_HEADERS)
        response.raise_for_status()
        stats: dict[str, Any] = response.json()
        return stats

    def sim_requests(self, limit: int = 20) -> list[dict[str, Any]]:
        """The last request bodies that reached the simulated provider (oldest first)."""
        response = httpx.get(f"{self.sim_url}/sim/requests", params={"limit": limit}, headers=ADMIN_HEADERS)
        response.raise_for_status()
        requests: list[dict[str, Any]] = response.json()["requests"]
        return requests

    def metrics(self) -> str:
        response = httpx.get(f"{self.url}/metrics", headers=ADMIN_HEADERS)
        response.raise_for_status()
        return response.text


@contextmanager
def running_gateway(*, as_served: bool = False, **settings: Any) -> Iterator[RunningGateway]:
    """A gateway on a free port of this process. `as_served`: its garbage collector as `cachegate serve`
    runs it (gateway/collector.py: the start-up heap frozen, passes on the clock), for tests that time
    the event loop; left frozen, this process's heap would keep its cycles after the test."""
    sock = free_socket()
    port = sock.getsockname()[1]
    config = Settings(**{**gateway_settings(), "port": port, **settings})
    app = create_app(config)
    if as_served:
        collector.take_over(app)
    try:
        with serve_on_socket(app, sock) as url:
            yield RunningGateway(url=url, services=app.state.services)
    finally:
        if as_served:
            gc.unfreeze()


@contextmanager
def replicas_on_one_redis(**overrides: Any) -> Iterator[tuple[RunningGateway, RunningGateway]]:
    """Two gateways (replicas) sharing an empty Redis (tests.redis_target.empty_redis)."""
    with empty_redis() as url:
        settings = gateway_settings(**{**overrides, "redis_url": url})
        with running_gateway(**settings) as a, running_gateway(**settings) as b:
            yield a, b
