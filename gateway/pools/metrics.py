"""Per-deployment metrics, on the gateway's registry. Labels come from config (pool and deployment ids)
and fixed sets (outcome, reason), never from a request."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge


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
