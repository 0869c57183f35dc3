"""The optimizer's Prometheus metrics (cachegate_prompt_cache_*), registered once per gateway registry."""

from __future__ import annotations

from typing import Any

from prometheus_client import Counter, Gauge

from gateway.services import Services


class PromptCacheMetrics:
    def __init__(self, services: Services) -> None:
        # Labelled children, looked up once: `labels` costs ~2 us a call and a response makes several
        # (labels: tenants and small fixed sets of kinds; no label set is ever removed).
        self._children: dict[tuple[Any, tuple[str, ...]], Any] = {}
        r = services.metrics.registry
        self.requests = Counter(
            "cachegate_prompt_cache_requests",
            "Requests the optimizer handled, by provider cache style",
            ["tenant", "style"],
            registry=r,
        )
        self.breakpoints = Counter(
            "cachegate_prompt_cache_breakpoints",
            "cache_control marks sent, by kind (client: the caller's own)",
            ["tenant", "kind"],
            registry=r,
        )
        self.skipped = Counter(
            "cachegate_prompt_cache_skipped_marks",
            "Requests left unmarked, by reason",
            ["tenant", "reason"],
            registry=r,
        )
        self.prefix_breaks = Counter(
            "cachegate_prompt_cache_prefix_breaks",
            "Requests whose prefix diverged from the session's previous one",
            ["tenant", "cause"],
            registry=r,
        )
        self.volatile = Counter(
            "cachegate_prompt_cache_volatile",
            "Requests with volatile content in tools/system, by kind",
            ["tenant", "kind"],
            registry=r,
        )
        self.relocations = Counter(
            "cachegate_prompt_cache_relocations",
            "Requests whose volatile spans were moved to the end",
            ["tenant"],
            registry=r,
        )
        self.keys = Counter(
            "cachegate_prompt_cache_keys",
            "prompt_cache_key/retention set for, or stripped from, a request",
            ["tenant", "action"],
            registry=r,
        )
        self.failures = Counter(
            "cachegate_prompt_cache_failures",
            "Optimizer failures (request sent unmodified)",
            ["phase"],
            registry=r,
        )
        self.tokens = Counter(
            "cachegate_prompt_cache_tokens",
            "Input tokens by cache outcome (uncached, read, write)",
            ["tenant", "kind"],
            registry=r,
        )
        self.hit_ratio = Gauge(
            "cachegate_prompt_cache_hit_ratio",
            "read / (uncached + read + write) since start (this replica; with workers, the last one to answer)",
            ["tenant"],
            registry=r,
            multiprocess_mode="mostrecent",
        )
        self.savings = Gauge(
            "cachegate_prompt_cache_savings_usd",
            "USD saved by prompt caching net of write premiums (this replica)",
            ["tenant"],
            registry=r,
            multiprocess_mode="sum",
        )
        self.write_premium = Counter(
            "cachegate_prompt_cache_write_premium_usd",
            "USD paid above the input price for cache writes",
            ["tenant"],
            registry=r,
        )

    def child(self, metric: Counter | Gauge, *labels: str) -> Any:
        """`metric.labels(*labels)`, remembered."""
        key = (metric, labels)  # metrics hash by identity
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = metric.labels(*labels)
        return found


def prompt_cache_metrics(services: Services) -> PromptCacheMetrics:
    """One instance per gateway: the request and the accounting stage share it."""
    metrics = services.extras.get("prompt_cache_metrics")
    if not isinstance(metrics, PromptCacheMetrics):
        metrics = PromptCacheMetrics(services)
        services.extras["prompt_cache_metrics"] = metrics
    return metrics
