"""Counters of what reached the simulated provider, per model, plus recent request bodies."""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from typing import Any

_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key"})


class SimStats:
    def __init__(self, recent_kept: int) -> None:
        self._counters: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self._recent: deque[dict[str, Any]] = deque(maxlen=recent_kept)
        self._errors: Counter[str] = Counter()  # by HTTP status, whichever model

    def count(self, model: str, **amounts: int) -> None:
        self._counters[model].update({k: v for k, v in amounts.items() if v})

    def count_error(self, status: int) -> None:
        self._errors[str(status)] += 1

    def record_request(self, api: str, path: str, headers: dict[str, str], body: Any) -> None:
        # Keys are redacted: recorded requests are served back over HTTP by /sim/requests.
        safe = {k: ("<redacted>" if k.lower() in _SECRET_HEADERS else v) for k, v in headers.items()}
        self._recent.append({"api": api, "path": path, "headers": safe, "body": body})

    def snapshot(self) -> dict[str, Any]:
        per_model = {model: dict(counter) for model, counter in self._counters.items()}
        totals: Counter[str] = Counter()
        for counter in self._counters.values():
            totals.update(counter)
        return {"models": per_model, "totals": dict(totals), "errors": dict(self._errors)}

    def recent(self, limit: int) -> list[dict[str, Any]]:
        return list(self._recent)[-limit:] if limit > 0 else []

    def clear(self) -> None:
        self._counters.clear()
        self._recent.clear()
        self._errors.clear()
