"""Counters of what reached the simulated provider, per model, plus recent request bodies."""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from typing import Any


class SimStats:
    def __init__(self, recent_kept: int) -> None:
        self._counters: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self._recent: deque[dict[str, Any]] = deque(maxlen=recent_kept)

    def count(self, model: str, **amounts: int) -> None:
        self._counters[model].update({k: v for k, v in amounts.items() if v})

    def record_request(self, api: str, path: str, headers: dict[str, str], body: Any) -> None:
        self._recent.append({"api": api, "path": path, "headers": headers, "body": body})

    def snapshot(self) -> dict[str, Any]:
        per_model = {model: dict(counter) for model, counter in self._counters.items()}
        totals: Counter[str] = Counter()
        for counter in self._counters.values():
            totals.update(counter)
        return {"models": per_model, "totals": dict(totals)}

    def recent(self, limit: int) -> list[dict[str, Any]]:
        return list(self._recent)[-limit:] if limit > 0 else []

    def clear(self) -> None:
        self._counters.clear()
        self._recent.clear()
