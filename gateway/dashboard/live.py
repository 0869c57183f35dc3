"""The dashboard's headline numbers, from this replica's metrics registry (its charts come from the shared
request records: gateway/dashboard/series.py)."""

from __future__ import annotations

from typing import Any

from gateway.metrics_summary import Summary


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
