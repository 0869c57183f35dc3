"""Gateways for the guard-stage tests: tenant acme runs the default policy; globex has the terminate tool,
a 6-call limit and no policy header; model gpt-budget has a tiny cost budget (a model-level override)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from gateway.config import hash_key
from tests.gateway_harness import ADMIN_KEY, TENANT_KEYS, RunningGateway, gateway_settings, running_gateway

GLOBEX_GUARD = {"terminate_tool": True, "header_policies": [], "limits": {"max_llm_calls": 6}}


def guard_settings(**overrides: Any) -> dict[str, Any]:
    base = gateway_settings()
    budget = {
        "name": "gpt-budget",
        "provider": "openai",
        "model": "gpt-4o-mini",
        "api_base": "embedded-sim",
        "policy": {"guard": {"limits": {"max_cost_usd": 1e-7}}},
    }
    tenants = [
        {"name": "acme", "keys": [hash_key(TENANT_KEYS["acme"])]},
        {"name": "globex", "keys": [hash_key(TENANT_KEYS["globex"])], "policy": {"guard": GLOBEX_GUARD}},
    ]
    return {**base, "models": [*base["models"], budget], "tenants": tenants, **overrides}


@pytest.fixture(scope="package")
def gw() -> Iterator[RunningGateway]:
    with running_gateway(**guard_settings()) as gateway:
        yield gateway


def admin(gw: RunningGateway, method: str, path: str, **params: str) -> httpx.Response:
    return httpx.request(
        method, f"{gw.url}/admin/guard{path}", params=params, headers={"authorization": f"Bearer {ADMIN_KEY}"}
    )


def metric(gw: RunningGateway, prefix: str) -> float:
    """Sum of the samples whose line starts with ``prefix`` (name plus any label text)."""
    return sum(float(line.rsplit(" ", 1)[1]) for line in gw.metrics().splitlines() if line.startswith(prefix))
