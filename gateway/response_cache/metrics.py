"""Prometheus metrics of the response cache (on the gateway's registry). Every label has a fixed value set."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

EMBEDDING_BUCKETS = (0.002, 0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5)
# Verifier reasons start with their check's name; entity names after it would make labels unbounded.
VERIFIER_CHECKS = ("identifiers", "numbers", "operators", "negation", "opposite", "entity order", "entity", "words")


class ResponseCacheMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.hits = Counter("cachegate_response_cache_hits", "Requests answered from the cache", ["tier"], registry=r)
        self.misses = Counter(
            "cachegate_response_cache_misses", "Lookups that found nothing to serve", ["tier"], registry=r
        )
        self.stores = Counter("cachegate_response_cache_stores", "Entries written", ["tier"], registry=r)
        self.verifier_rejections = Counter(
            "cachegate_response_cache_verifier_rejections",
            "Semantic candidates above the threshold that the verifier refused",
            ["check"],
            registry=r,
        )
        self.embedding_seconds = Histogram(
            "cachegate_response_cache_embedding_seconds",
            "Time to embed a last user turn (queueing included)",
            buckets=EMBEDDING_BUCKETS,
            registry=r,
        )
        self.skips = Counter(
            "cachegate_response_cache_skips",
            "Tiers that sat out a request: caller controls, eligibility, backend or embedder unavailable",
            ["tier", "reason"],
            registry=r,
        )
        self.errors = Counter(
            "cachegate_response_cache_errors",
            "Corrupt entries dropped and failed cache operations",
            ["kind"],
            registry=r,
        )
        self.evictions = Counter("cachegate_response_cache_evictions", "Entries evicted by the size bound", registry=r)
        self.judge_verdicts = Counter(
            "cachegate_response_cache_judge_verdicts",
            "Semantic candidates below the threshold put to the judge model: yes, no, error, unknown_route",
            ["verdict"],
            registry=r,
        )
        self.judge_cost = Counter(
            "cachegate_response_cache_judge_cost_usd", "USD spent on judge calls", ["tenant"], registry=r
        )
        self.semantic_regenerated = Counter(
            "cachegate_response_cache_semantic_regenerated",
            "Semantic hits the caller asked again with no-cache/no-store soon after: likely wrong answers",
            ["tenant"],
            registry=r,
        )

    def rejected(self, reason: str) -> None:
        check = next((c for c in VERIFIER_CHECKS if reason.startswith(c)), "other")
        self.verifier_rejections.labels(check).inc()
