"""The dashboard's chosen window from the ledger (gateway/ledger/): every replica's requests, across
restarts and Redis flushes. Charts and cards come from the same rows, so the cards are the charts' sums;
spend by key and model covers the same window."""

from __future__ import annotations

from typing import Any

from gateway.dashboard.series import BUCKETS
from gateway.error_classes import ERROR_CLASSES, error_class
from gateway.ledger import Filters, Ledger

# One row per (bucket, outcome, source, cache tier): a few hundred at most, however many requests.
# ROUND(x - 0.5): the bucket's index on both backends (PostgreSQL's CAST rounds, SQLite's truncates).
BUCKETED = (
    "SELECT ROUND((at - ?) / ? - 0.5), status, error, error_code, source, cache, COUNT(*), "
    "SUM(cost_usd + side_cost_usd), SUM(saved_usd), SUM(input_tokens + cache_read_tokens + cache_write_tokens), "
    "SUM(cache_read_tokens), SUM(CASE WHEN guard IS NULL OR guard = '' THEN 0 ELSE 1 END) "
    "FROM records WHERE at >= ? AND at < ? GROUP BY 1, status, error, error_code, source, cache"
)
COUNTS = ("ok", "errors", *(f"errors_{name}" for name in ERROR_CLASSES), "exact_hits", "semantic_hits", "guard",
          "input_tokens", "cache_read_tokens")  # fmt: skip
AMOUNTS = ("cost_usd", "saved_usd", "saved_prompt_usd", "saved_response_usd")
TOP = 10  # keys and models listed by spend


def _empty_point(t: float) -> dict[str, Any]:
    return {"t": t, **dict.fromkeys(COUNTS, 0), **dict.fromkeys(AMOUNTS, 0.0)}


def _add(point: dict[str, Any], row: tuple[Any, ...]) -> None:
    _, status, kind, code, source, cache, count, cost, saved, inputs, read, guard = row
    status, count = int(status), int(count)
    point["ok" if status < 400 else "errors"] += count
    if status >= 400:
        point[f"errors_{error_class(status, kind, code) or 'gateway'}"] += count
    point["cost_usd"] += float(cost or 0)
    point["saved_usd"] += float(saved or 0)
    point["saved_response_usd" if source == "response_cache" else "saved_prompt_usd"] += float(saved or 0)
    if source == "response_cache" and cache in ("exact", "semantic"):
        point[f"{cache}_hits"] += count
    point["guard"] += int(guard or 0)
    point["input_tokens"] += int(inputs or 0)
    point["cache_read_tokens"] += int(read or 0)


def _ratios(values: dict[str, Any]) -> dict[str, Any]:
    """Hit ratio and savings share (of what the requests would have cost without the caches)."""
    inputs, read = values.pop("input_tokens"), values.pop("cache_read_tokens")
    would_cost = values["cost_usd"] + values["saved_usd"]
    return {**values, "hit_ratio": read / inputs if inputs else None,
            "saved_share": values["saved_usd"] / would_cost if would_cost > 0 else None}  # fmt: skip


async def window(ledger: Ledger, now: float, range_s: int) -> dict[str, Any]:
    """BUCKETS points over the last `range_s` seconds, their totals, and spend by key and model."""
    start, width = now - range_s, range_s / BUCKETS
    points = [_empty_point(start + (i + 1) * width) for i in range(BUCKETS)]
    for row in await ledger.backend.fetch(BUCKETED, [start, width, start, now]):
        _add(points[min(max(int(row[0]), 0), BUCKETS - 1)], row)
    totals = _empty_point(now)
    for point in points:
        for name in (*COUNTS, *AMOUNTS):
            totals[name] += point[name]
    filters = Filters(since=start, until=now)
    return {
        "since": start,
        "points": [_ratios(point) for point in points],
        "totals": _ratios(totals),
        "by_key": await ledger.spend("key", filters, TOP, 0),
        "by_model": await ledger.spend("model", filters, TOP, 0),
    }
