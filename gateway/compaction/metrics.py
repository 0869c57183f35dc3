"""Prometheus metrics of the compaction stage (cachegate_compaction_*), on the gateway's registry."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

INVALIDATED_BUCKETS = (0, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 200_000)


class CompactionMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.requests = Counter(
            "cachegate_compaction_requests",
            "Requests seen by the compaction stage, by action",
            ["model", "action"],
            registry=r,
        )
        self.tokens = Counter(
            "cachegate_compaction_tokens", "Input tokens before and after compaction", ["model", "when"], registry=r
        )
        self.compactions = Counter(
            "cachegate_compaction_compactions", "Compaction events (one large step each)", ["model"], registry=r
        )
        self.compacted_results = Counter(
            "cachegate_compaction_compacted_results",
            "Tool results replaced by a reference (shrunk ones included)",
            ["model"],
            registry=r,
        )
        self.summaries = Counter(
            "cachegate_compaction_summaries",
            "Summarization attempts by outcome (written, memo, timeout, ...)",
            ["model", "outcome"],
            registry=r,
        )
        self.summary_cost = Counter(
            "cachegate_compaction_summary_cost_usd", "USD spent writing summaries", ["model"], registry=r
        )
        self.invalidated = Histogram(
            "cachegate_compaction_invalidated_tokens",
            "Prompt-cache prefix tokens invalidated by each compaction or summary",
            ["model"],
            buckets=INVALIDATED_BUCKETS,
            registry=r,
        )
        self.failures = Counter(
            "cachegate_compaction_failures",
            "Requests forwarded unchanged because compaction failed (fail open)",
            ["reason"],
            registry=r,
        )
        self.over_window = Counter(
            "cachegate_compaction_over_window",
            "Requests still over the context window after compaction",
            ["model"],
            registry=r,
        )
        self.retrievals = Counter(
            "cachegate_compaction_retrievals", "Originals fetched back, by way and result", ["via", "found"], registry=r
        )

    def retrieval(self, via: str, found: bool) -> None:
        self.retrievals.labels(via, "yes" if found else "no").inc()
