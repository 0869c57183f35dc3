"""Two gateway replicas sharing one real Redis (db 11, or the cluster target; flushed at start), with warm
embedders."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.gateway_harness import ADMIN_KEY, RunningGateway, running_gateway
from tests.redis_target import flush, redis_url

REDIS_URL = redis_url(11)


@dataclass
class Replicas:
    a: RunningGateway
    b: RunningGateway


def cache_status(gw: RunningGateway) -> dict[str, Any]:
    response = httpx.get(f"{gw.url}/admin/cache/status", headers={"authorization": f"Bearer {ADMIN_KEY}"})
    response.raise_for_status()
    status: dict[str, Any] = response.json()
    return status


def warm_embedders(*gateways: RunningGateway, timeout_s: float = 120.0) -> None:
    """A semantic-eligible request starts a replica's model load; wait until every replica reports it ready."""
    for gw in gateways:
        gw.openai().chat.completions.create(
            model="gpt-4o-mini",
            temperature=0,
            messages=[{"role": "user", "content": f"warm up {uuid.uuid4().hex}"}],
            extra_headers={"x-cachegate-cache-namespace": "warmup"},
        )
    deadline = time.monotonic() + timeout_s
    while any(cache_status(gw)["embedder"] != "ready" for gw in gateways):
        assert time.monotonic() < deadline, "the embedder did not load"
        time.sleep(0.1)


def metric(gw: RunningGateway, name: str, **labels: str) -> float:
    """A sample's value from /metrics (0 when absent)."""
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in gw.metrics().splitlines():
        if line.startswith("#"):
            continue
        sample, _, value = line.rpartition(" ")
        metric_name, _, label_text = sample.partition("{")
        found = ",".join(sorted(label_text.rstrip("}").split(","))) if label_text else ""
        if metric_name == name and found == wanted:
            return float(value)
    return 0.0


@pytest.fixture(scope="session")
def replicas() -> Iterator[Replicas]:
    flush(REDIS_URL)
    # Generous embedding and Redis timeouts: the machine is shared (the suite's other worker too), and a
    # timed-out embedding, or a store that timed out and fell open, would turn a hit into a miss. The fall
    # back on a slow or lost Redis has tests of its own (test_resilience.py, tests/state). Nor may the
    # embedder's CPU share: it counts an encode's wall time, which a loaded machine stretches, and past it
    # the semantic tier sits requests out (a miss where the test expects a hit).
    settings: dict[str, Any] = {
        "redis_url": REDIS_URL,
        "redis_timeout_s": 2.0,
        "policy": {"response_cache": {"embed_timeout_s": 10.0, "embed_cpu_share": 100.0}},
    }
    with running_gateway(**settings) as a, running_gateway(**settings) as b:
        warm_embedders(a, b)
        yield Replicas(a, b)
    flush(REDIS_URL)


@pytest.fixture
def namespace() -> str:
    """A namespace of the test's own, so tests never see each other's entries."""
    return f"t{uuid.uuid4().hex[:12]}"
