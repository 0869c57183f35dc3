"""The dashboard's deployment pools: per deployment, this replica's counters (attempts, cooldowns, circuit
opens, prompt-cache input tokens) and the live state every replica shares (cooling, circuit, headroom).
Only pools of several deployments: a pool of one has nothing to choose between."""

from __future__ import annotations

import time
from typing import Any, get_args

from prometheus_client import CollectorRegistry

from gateway.pools import Deployment, Pools
from gateway.pools import headroom as headroom_
from gateway.pools.health import Reason
from gateway.state import StateUnavailable

COOLDOWN_REASONS: tuple[str, ...] = get_args(Reason)


async def pool_rows(pools: Pools, registry: CollectorRegistry) -> list[dict[str, Any]]:
    """One row per deployment of every pool of several, in configuration order."""
    deployments = [d for pool in pools.pools.values() if len(pool.deployments) > 1 for d in pool.deployments]
    if not deployments:
        return []
    ops = [op for d in deployments for op in [*pools.health.reads(d), *headroom_.reads(d)]]
    try:
        values, live = await pools.store.batch(ops), True
    except StateUnavailable:  # the counters still show; headroom as last stated, cooldowns unknown
        values, live = [None] * len(ops), False
    rows, now = [], time.time()
    for n, d in enumerate(deployments):
        cool, fails, stated, requests, tokens = values[5 * n : 5 * n + 5]
        cooling_until, failures = pools.health.parse(cool, fails)
        row = _counters(d, registry)
        stated_headroom = _sample(registry, "cachegate_deployment_headroom", d)
        row["headroom"] = headroom_.headroom(d, stated, requests, tokens) if live else stated_headroom
        row["cooling_until"] = cooling_until if cooling_until > now else None
        row["circuit_open"] = row["cooling_until"] is not None and failures >= pools.config.breaker_failures
        rows.append(row)
    return rows


def _counters(d: Deployment, registry: CollectorRegistry) -> dict[str, Any]:
    def count(name: str, **labels: str) -> int:
        return round(_sample(registry, f"cachegate_deployment_{name}_total", d, **labels) or 0.0)

    cache_read, uncached = count("input_tokens", kind="cache_read"), count("input_tokens", kind="uncached")
    return {
        "pool": d.pool,
        "id": d.id,
        "region": d.route.region,
        "ok": count("requests", outcome="ok"),
        "errors": count("requests", outcome="error"),
        "cooldowns": {reason: count("cooldowns", reason=reason) for reason in COOLDOWN_REASONS},
        "circuit_opens": count("circuit_opens"),
        "cache_read_tokens": cache_read,
        "uncached_tokens": uncached,
        "hit_ratio": cache_read / (cache_read + uncached) if cache_read + uncached else None,
    }


def _sample(registry: CollectorRegistry, name: str, d: Deployment, **labels: str) -> float | None:
    return registry.get_sample_value(name, {"model": d.pool, "deployment": d.id, **labels})
