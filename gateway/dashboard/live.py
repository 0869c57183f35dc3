"""Headline numbers from the metrics registry, sampled into a short history for the live charts."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Any

from prometheus_client import CollectorRegistry

from gateway.metrics_summary import Summary, summarize_registry


def guard_rows(summary: Summary) -> list[dict[str, Any]]:
    return [
        {"action": action, "detector": detector, "reason": reason, "count": round(count)}
        for (action, detector, reason), count in summary.guard_by_action()
    ]


def headline(summary: Summary) -> dict[str, Any]:
    return {
        "requests": summary.requests,
        "errors": summary.errors,
        "cost_usd": summary.cost_usd,
        "cost_without_cache_usd": summary.cost_without_cache_usd,
        "saved_usd": dict(summary.saved_usd),
        "prompt_cache_hit_ratio": summary.prompt_cache_hit_ratio,
        "response_cache_hits": dict(summary.response_cache_hits),
        "guard": guard_rows(summary),
        "tokens": dict(summary.tokens),
    }


class LiveHistory:
    """Samples taken on demand, at most one per `interval_s`, newest `size` kept."""

    def __init__(self, registry: CollectorRegistry, size: int = 180, interval_s: float = 2.0) -> None:
        self.registry = registry
        self.samples: deque[dict[str, Any]] = deque(maxlen=size)
        self.interval_s = interval_s

    async def run(self) -> None:
        while True:
            self.snapshot()
            await asyncio.sleep(self.interval_s)

    def snapshot(self) -> dict[str, Any]:
        now = headline(summarize_registry(self.registry))
        if not self.samples or time.time() - self.samples[-1]["t"] >= self.interval_s:
            self.samples.append(
                {
                    "t": time.time(),
                    "requests": now["requests"],
                    "cost_usd": now["cost_usd"],
                    "hit_ratio": now["prompt_cache_hit_ratio"],
                    "errors": now["errors"],
                }
            )
        return {"now": now, "history": list(self.samples)}
