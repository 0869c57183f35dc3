"""A tenant's cache-hit ratio watched per replica over a sliding window of its last requests, against the
requests before them (its baseline). A fall below `drop_fraction` of the baseline raises one alert; the
tenant is watched again once its ratio is back above that line. Replicas each see a share of the same
traffic; the alert's hour makes it one event for all of them (gateway/alerts/dedupe.py)."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

from gateway.alerts.events import Alert, cache_hit_drop
from gateway.config.alerts import CacheHitWatch

EPISODE_S = 3600  # replicas firing within one hour of the clock send one alert


@dataclass(eq=False)
class _Tenant:
    recent: deque[bool]
    before: deque[bool]
    recent_hits: int = 0
    before_hits: int = 0
    fallen_below: float | None = field(default=None)  # the line it fell below, until it is back above it

    def add(self, hit: bool) -> None:
        if len(self.recent) == self.recent.maxlen:
            moved = self.recent.popleft()
            self.recent_hits -= moved
            if len(self.before) == self.before.maxlen:
                self.before_hits -= self.before.popleft()
            self.before.append(moved)
            self.before_hits += moved
        self.recent.append(hit)
        self.recent_hits += hit


class CacheHitWatcher:
    def __init__(self, config: CacheHitWatch) -> None:
        self.config = config
        self._tenants: dict[str, _Tenant] = {}  # configured tenants only (the caller passes their names)

    def observe(self, tenant: str, hit: bool) -> Alert | None:
        """Count one answered request; the alert when this one makes the ratio fall."""
        state = self._tenants.get(tenant)
        if state is None:
            state = _Tenant(deque(maxlen=self.config.window), deque(maxlen=self.config.baseline))
            self._tenants[tenant] = state
        state.add(hit)
        if len(state.before) < self.config.baseline:
            return None  # no baseline yet
        ratio = state.recent_hits / len(state.recent)
        if state.fallen_below is not None:
            if ratio >= state.fallen_below:
                state.fallen_below = None  # recovered: watched again
            return None
        baseline = state.before_hits / len(state.before)
        line = baseline * self.config.drop_fraction
        if baseline < self.config.min_baseline or ratio >= line:
            return None
        state.fallen_below = line
        return cache_hit_drop(tenant, ratio, baseline, str(int(time.time() // EPISODE_S)))
