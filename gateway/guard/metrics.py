"""Prometheus metrics of the loop guard (on the gateway's registry). Every label has a fixed value set."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

CHECK_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.1)


class GuardMetrics:
    def __init__(self, registry: CollectorRegistry, active_sessions: Callable[[], float]) -> None:
        r = registry
        self.decisions = Counter(
            "cachegate_guard_decisions",
            "Guard decisions that acted: warn, nudge, stop, block (by stop reason and detector)",
            ["action", "reason", "detector"],
            registry=r,
        )
        self.stream_cuts = Counter("cachegate_guard_stream_cuts", "Responses cut for chanting", ["api"], registry=r)
        self.terminations = Counter(
            "cachegate_guard_terminations", "Sessions the model ended with the terminate tool", ["status"], registry=r
        )
        self.errors = Counter(
            "cachegate_guard_errors",
            "Guard checks degraded: state errors, store fallback, policy header refused",
            ["kind"],
            registry=r,
        )
        self.sessions_active = Gauge(
            "cachegate_guard_sessions_active",
            "Sessions seen by this replica within the active window",
            registry=r,
            multiprocess_mode="livesum",
        )
        # Read at scrape time in one process; under workers a scrape reads the files each worker's
        # `session_seen` writes (a function is not called across processes).
        self.sessions_active.set_function(active_sessions)
        self._active_sessions = active_sessions
        self.check_seconds = Histogram(
            "cachegate_guard_check_seconds", "Guard time on the request path", buckets=CHECK_BUCKETS, registry=r
        )

    def session_seen(self) -> None:
        self.sessions_active.set(self._active_sessions())
