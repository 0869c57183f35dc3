"""Spend in the Prometheus counters: one request's answer (stages/usage.py) or a call the gateway made on
the tenant's behalf (a compaction summary), counted alike so that tenant totals hold every call."""

from __future__ import annotations

from gateway.metrics import GatewayMetrics
from gateway.usage.pricing import Cost, Price
from gateway.usage.tokens import Usage

TOKEN_KINDS = ("uncached_input", "cache_read", "cache_write_5m", "cache_write_1h", "output")


def record_spend(metrics: GatewayMetrics, tenant: str, model: str, usage: Usage, cost: Cost, price: Price) -> None:
    """Tokens, cost, uncached cost, prompt-cache savings and write premiums under (tenant, model)."""
    for kind in TOKEN_KINDS:
        count = getattr(usage, kind)
        if count:
            metrics.tokens.labels(tenant, model, kind).inc(count)
    metrics.cost.labels(tenant, model).inc(cost.usd)
    metrics.uncached_cost.labels(tenant, model).inc(cost.uncached_usd)
    metrics.saved.labels(tenant, model, "prompt_cache").inc(cost.saved_usd)
    premium = usage.cache_write_5m * (price.cache_write_5m - price.input)
    premium += usage.cache_write_1h * (price.cache_write_1h - price.input)
    if premium > 0:
        metrics.write_premium.labels(tenant, model).inc(premium)
