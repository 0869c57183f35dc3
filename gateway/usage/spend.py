"""Spend in the Prometheus counters: one request's answer (stages/usage.py) or a call the gateway made on
the tenant's behalf (a compaction summary), counted alike so that tenant totals hold every call."""

from __future__ import annotations

import logging

from gateway.metrics import GatewayMetrics
from gateway.usage.pricing import Cost, Price
from gateway.usage.tokens import Usage

TOKEN_KINDS = ("uncached_input", "cache_read", "cache_write_5m", "cache_write_1h", "output")

log = logging.getLogger("cachegate.usage")
_warned_unpriced: set[str] = set()  # route names already warned about in this process (bounded by config)


def record_spend(metrics: GatewayMetrics, tenant: str, model: str, usage: Usage, cost: Cost, price: Price) -> None:
    """Tokens, cost, uncached cost, prompt-cache savings and write premiums under (tenant, model); a cost
    priced at the fallback rates also counts in cachegate_unpriced_requests_total and warns once per model."""
    for kind in TOKEN_KINDS:
        count = getattr(usage, kind)
        if count:
            metrics.tokens.labels(tenant, model, kind).inc(count)
    metrics.cost.labels(tenant, model).inc(cost.usd)
    metrics.uncached_cost.labels(tenant, model).inc(cost.uncached_usd)
    own = usage.own_model()
    premium = own.cache_write_5m * (price.cache_write_5m - price.input)
    premium += own.cache_write_1h * (price.cache_write_1h - price.input)
    if premium > 0:
        metrics.write_premium.labels(tenant, model).inc(premium)
    # A counter takes no negative step: savings before premiums here, the premiums in their own counter.
    metrics.saved.labels(tenant, model, "prompt_cache").inc(max(cost.saved_usd + max(premium, 0.0), 0.0))
    if cost.estimated:
        _count_unpriced(metrics, model)


def _count_unpriced(metrics: GatewayMetrics, model: str) -> None:
    metrics.unpriced.labels(model).inc()
    if model not in _warned_unpriced:
        _warned_unpriced.add(model)
        log.warning(
            "model %s has no price (price table, LiteLLM's map): charged at the fallback rates; set the route's "
            "`prices`",
            model,
        )
