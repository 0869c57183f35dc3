"""Recent agent sessions as this replica saw them, for the dashboard's session inspector."""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

# Response headers that carry a stage's decision about the request.
DECISION_HEADERS = ("x-cachegate-guard", "x-cachegate-prefix-break", "x-cachegate-cache", "x-cachegate-compaction")


@dataclass
class SessionView:
    tenant: str
    session: str
    requests: int = 0
    cost_usd: float = 0.0
    cache_read_tokens: int = 0
    input_tokens: int = 0
    last_seen: float = 0.0
    events: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=50))

    def as_dict(self, with_events: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "tenant": self.tenant,
            "session": self.session,
            "requests": self.requests,
            "cost_usd": round(self.cost_usd, 6),
            "last_seen": self.last_seen,
            "hit_ratio": self.cache_read_tokens / self.input_tokens if self.input_tokens else 0.0,
        }
        if with_events:
            data["events"] = list(self.events)
        return data


class RecentSessions:
    """A bounded LRU of sessions; each keeps its newest request events."""

    def __init__(self, capacity: int = 200) -> None:
        self.capacity = capacity
        self._sessions: OrderedDict[tuple[str, str], SessionView] = OrderedDict()

    def record(
        self,
        tenant: str,
        session: str,
        event: dict[str, Any],
        cost_usd: float,
        input_tokens: int,
        cache_read_tokens: int,
    ) -> None:
        key = (tenant, session)
        view = self._sessions.pop(key, None) or SessionView(tenant, session)
        view.requests += 1
        view.cost_usd += cost_usd
        view.input_tokens += input_tokens
        view.cache_read_tokens += cache_read_tokens
        view.last_seen = time.time()
        view.events.append(event)
        self._sessions[key] = view
        while len(self._sessions) > self.capacity:
            self._sessions.popitem(last=False)

    def list(self) -> list[dict[str, Any]]:
        return [view.as_dict() for view in reversed(self._sessions.values())]

    def get(self, tenant: str, session: str) -> dict[str, Any] | None:
        view = self._sessions.get((tenant, session))
        return view.as_dict(with_events=True) if view else None
