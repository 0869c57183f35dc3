"""Time series for the dashboard's charts, from the request records every replica shares: any replica
draws the same charts, over a time range the viewer picks."""

from __future__ import annotations

import statistics
from typing import Any

BUCKETS = 30
RANGES_S = (300, 900, 3600, 21600)  # the range picker: 5 min, 15 min, 1 h, 6 h


def _percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(share * 100) - 1]


def series(records: list[dict[str, Any]], now: float, range_s: int) -> list[dict[str, Any]]:
    """BUCKETS points over the last `range_s` seconds: requests by outcome, spend, prompt-cache savings and
    hit ratio, guard actions, latency percentiles."""
    width = range_s / BUCKETS
    start = now - range_s
    points: list[dict[str, Any]] = [
        {"t": start + (i + 1) * width, "ok": 0, "errors": 0, "cost_usd": 0.0, "saved_usd": 0.0, "cache_hits": 0,
         "input": 0, "cache_read": 0, "guard": 0, "latencies": []}
        for i in range(BUCKETS)
    ]  # fmt: skip
    for record in records:
        if record["at"] < start:
            continue
        point = points[min(int((record["at"] - start) / width), BUCKETS - 1)]
        point["ok" if record["status"] < 400 else "errors"] += 1
        point["cost_usd"] += record["cost_usd"]
        point["saved_usd"] += max(record["saved_usd"], 0.0)
        point["cache_hits"] += record["source"] == "response_cache"
        tokens = record["tokens"]
        point["input"] += tokens["input"] + tokens["cache_read"] + tokens["cache_write"]
        point["cache_read"] += tokens["cache_read"]
        point["guard"] += bool(record.get("guard"))
        if record["status"] < 400:
            point["latencies"].append(record["total_ms"])
    for point in points:
        latencies, inputs = point.pop("latencies"), point.pop("input")
        point["hit_ratio"] = point.pop("cache_read") / inputs if inputs else None
        point["p50_ms"], point["p95_ms"] = _percentile(latencies, 0.5), _percentile(latencies, 0.95)
    return points
