"""Per-deployment metrics, on the gateway's registry. Labels come from config (pool and deployment ids)
and fixed sets (outcome, reason), never from a request."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge

from gateway.usage.tokens import Usage


class PoolMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.requests = Counter(
            "cachegate_deployment_requests",
            "Upstream attempts per deployment, by outcome (ok, error)",
            ["model", "deployment", "outcome"],
            registry=r,
        )
        self.cooldowns = Counter(
            "cachegate_deployment_cooldowns",
            "Deployments put to rest, by reason (rate_limit, timeout, server_error, unreachable)",
            ["model", "deployment", "reason"],
            registry=r,
        )
        self.circuit_opens = Counter(
            "cachegate_deployment_circuit_opens",
            "Circuits opened by repeated failures",
            ["model", "deployment"],
            registry=r,
        )
        self.headroom = Gauge(
            "cachegate_deployment_headroom",
            "Share of the deployment's rate limits left, as last seen",
            ["model", "deployment"],
            registry=r,
            multiprocess_mode="mostrecent",
        )
        # The deployment's prompt-cache hit ratio is cache_read over cache_read + uncached: each deployment
        # keeps its own cache, so a pool's ratio hides one that lost its sessions' prefixes.
        self.input_tokens = Counter(
            "cachegate_deployment_input_tokens",
            "Input tokens of the deployment's answers, by kind (cache_read, uncached: cache writes included)",
            ["model", "deployment", "kind"],
            registry=r,
        )
        self.affinity_moves = Counter(
            "cachegate_affinity_moves",
            "Sessions moved off the deployment holding their prompt-cache prefix, by reason",
            ["model", "reason"],
            registry=r,
        )
        self.lost_prefix_usd = Counter(
            "cachegate_affinity_lost_prefix_usd",
            "Estimated USD of prompt-cache writes paid again because a session moved deployment",
            ["model"],
            registry=r,
        )
        self.state_failures = Counter(
            "cachegate_pool_state_failures",
            "Pool state reads or writes that failed (routing went on in configuration order)",
            registry=r,
        )

    def answered(self, placement: Mapping[str, Any] | None, usage: Usage) -> None:
        """An answer's input tokens under the deployment that gave it (`placement`: the request record's
        `deployment`; None for an answer that no deployment gave)."""
        if placement is None:
            return
        labels = (placement["pool"], placement["id"])
        self.input_tokens.labels(*labels, "cache_read").inc(usage.cache_read)
        self.input_tokens.labels(*labels, "uncached").inc(usage.input_total - usage.cache_read)
