"""Prometheus metrics of the core request path. Stages register their own on the same registry.

Labels are bounded: tenant and model come from config (anything else is 'unknown'), api and provider
from fixed sets. Under `cachegate serve --workers N` every worker writes its samples to a shared directory
(gateway/workers.py); each gauge says how the workers' values combine (`multiprocess_mode`, ignored with
one process).
"""

from __future__ import annotations

import os

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.multiprocess import MultiProcessCollector

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
MULTIPROCESS_DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"
KEY_LABELS = 500  # distinct key labels per process: managed keys are created at run time, so cap them
OVERHEAD_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25)


class GatewayMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "cachegate_requests", "Requests answered", ["api", "tenant", "model", "provider", "status"], registry=r
        )
        self.errors = Counter("cachegate_errors", "Error responses by type", ["api", "type"], registry=r)
        self.latency = Histogram(
            "cachegate_request_seconds", "Total request latency", ["api", "model"], buckets=LATENCY_BUCKETS, registry=r
        )
        self.ttft = Histogram(
            "cachegate_ttft_seconds",
            "Time to first streamed byte",
            ["api", "model"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.overhead = Histogram(
            "cachegate_overhead_seconds",
            "Gateway overhead: total minus upstream time (streams: to first byte)",
            ["api"],
            buckets=OVERHEAD_BUCKETS,
            registry=r,
        )
        self.upstream_latency = Histogram(
            "cachegate_upstream_seconds",
            "Upstream call latency",
            ["provider", "path"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.upstream_retries = Counter(
            "cachegate_upstream_retries", "Upstream retries and fallbacks", ["model", "reason"], registry=r
        )
        self.upstream_dropped_fields = Counter(
            "cachegate_upstream_dropped_fields",
            "Caller body fields not sent upstream (not a public field of the caller's API)",
            ["api"],
            registry=r,
        )
        self.tokens = Counter("cachegate_tokens", "Tokens by kind", ["tenant", "model", "kind"], registry=r)
        self.cost = Counter("cachegate_cost_usd", "Spend in USD", ["tenant", "model"], registry=r)
        # model: the route's name (config, never caller input); such spend is at the price table's fallback rates.
        self.unpriced = Counter(
            "cachegate_unpriced_requests", "Answers from a model with no known price", ["model"], registry=r
        )
        # The part of cachegate_cost_usd that paid for compaction summaries (model: the summarizer's route).
        self.summary_cost = Counter(
            "cachegate_summary_cost_usd", "Spend in USD on compaction summaries", ["tenant", "model"], registry=r
        )
        self.uncached_cost = Counter(
            "cachegate_cost_without_cache_usd",
            "What the same tokens would have cost uncached",
            ["tenant", "model"],
            registry=r,
        )
        # A counter (increase over any range survives restarts): savings before write premiums, which
        # cachegate_cache_write_premium_usd counts; net prompt-cache savings are the first less the second.
        self.saved = Counter(
            "cachegate_saved_usd",
            "USD saved, by source, before cache-write premiums",
            ["tenant", "model", "source"],
            registry=r,
        )
        # key: the managed key's id or the configured key's name (never the secret), KEY_LABELS at most.
        self.key_cost = Counter("cachegate_key_cost_usd", "Spend in USD by key", ["tenant", "key"], registry=r)
        # error_class: gateway/error_classes.py (a fixed set), so intended refusals are told from failures.
        self.request_errors = Counter(
            "cachegate_request_errors", "Error answers by class", ["api", "tenant", "error_class"], registry=r
        )
        self.write_premium = Counter(
            "cachegate_cache_write_premium_usd",
            "USD paid above the input price for cache writes",
            ["tenant", "model"],
            registry=r,
        )
        self.stage_failures = Counter(
            "cachegate_stage_failures", "Stages that failed open (request proxied as is)", ["stage"], registry=r
        )
        self.state_fallbacks = Counter(
            "cachegate_state_fallbacks",
            "State operations served by the per-replica fallback",
            ["operation"],
            registry=r,
        )
        self.in_flight = Gauge(
            "cachegate_in_flight_requests", "Requests in flight", registry=r, multiprocess_mode="livesum"
        )
        self.budget_refusals = Counter(
            "cachegate_budget_refusals",
            "Requests refused by a spent budget, by tenant and scope (tenant, key, session)",
            ["tenant", "scope"],
            registry=r,
        )
        # Spend against budget as this replica last saw it (the shared counters: GET /admin/budgets);
        # key="all" is the tenant's budget over all its keys. Session budgets are not labelled (unbounded).
        self.budget_spent_usd = Gauge(
            "cachegate_budget_spent_usd",
            "USD spent in the budget's window",
            ["tenant", "key", "window"],
            registry=r,
            multiprocess_mode="mostrecent",
        )
        self.budget_limit_usd = Gauge(
            "cachegate_budget_limit_usd",
            "The budget's USD limit",
            ["tenant", "key", "window"],
            registry=r,
            multiprocess_mode="mostrecent",
        )
        self.budget_used_ratio = Gauge(
            "cachegate_budget_used_ratio",
            "Fraction of the budget spent (the larger of its USD and token shares)",
            ["tenant", "key", "window"],
            registry=r,
            multiprocess_mode="mostrecent",
        )
        self.budget_soft = Counter(
            "cachegate_budget_soft_limit",
            "Requests past a budget's soft fraction, by tenant and scope",
            ["tenant", "scope"],
            registry=r,
        )
        self.request_records_dropped = Counter(
            "cachegate_request_records_dropped",
            "Request records not written (queue full, the store failed, or unauthenticated over their cap)",
            registry=r,
        )
        self.ledger_records_written = Counter(
            "cachegate_ledger_records_written", "Request records written to the ledger", registry=r
        )
        self.ledger_records_dropped = Counter(
            "cachegate_ledger_records_dropped",
            "Request records the ledger lost, by reason: queue_full or database (it failed)",
            ["reason"],
            registry=r,
        )
        # destination: a configured name, or "all" before one is chosen; outcome: sent | retried | failed |
        # dropped (queue full) | deduplicated (another replica or an earlier request sent it) | throttled.
        self.alerts = Counter(
            "cachegate_alerts",
            "Alert webhook deliveries by destination, event kind and outcome (gateway/alerts/)",
            ["destination", "event", "outcome"],
            registry=r,
        )
        self.rate_limited = Counter(
            "cachegate_rate_limited_requests",
            "Requests refused by a tenant's or key's rate limit",
            ["tenant"],
            registry=r,
        )
        # cache: guard_parsers | guard_activity | semantic_index; reason: gateway/bounded.py (fixed sets).
        self.memory_evictions = Counter(
            "cachegate_memory_evictions",
            "In-process entries evicted to stay within their per-tenant and total memory caps",
            ["cache", "reason"],
            registry=r,
        )
        self._key_labels: set[str] = set()

    def key_label(self, key: str | None) -> str:
        """A key's label: its id while fewer than KEY_LABELS keys have one in this process, else "other"."""
        if key is None:
            return "none"
        if key not in self._key_labels and len(self._key_labels) >= KEY_LABELS:
            return "other"
        self._key_labels.add(key)
        return key

    def exposition(self) -> CollectorRegistry:
        """What /metrics and the dashboard read: this registry, or every worker's samples when the gateway
        runs several (their directory is in PROMETHEUS_MULTIPROC_DIR)."""
        directory = os.environ.get(MULTIPROCESS_DIR_ENV)
        if not directory:
            return self.registry
        joined = CollectorRegistry()
        MultiProcessCollector(joined, path=directory)
        return joined
