"""The alerts of one gateway process: a bounded queue filled by `emit` on the request path and drained by
a few workers that claim each event once (across replicas) and deliver it to every destination taking
its kind (each at most once per `min_interval_s` per event kind and tenant)."""

from __future__ import annotations

import asyncio
import logging

from gateway.alerts.cache_ratio import CacheHitWatcher
from gateway.alerts.dedupe import Dedupe
from gateway.alerts.events import Alert
from gateway.alerts.sender import Sender
from gateway.config.alerts import AlertDestination, AlertsConfig
from gateway.metrics import GatewayMetrics
from gateway.state import StateStore

log = logging.getLogger("cachegate.alerts")
WORKERS = 4  # deliveries in flight at once: one slow receiver does not hold up the others


class Alerts:
    def __init__(self, config: AlertsConfig, store: StateStore, metrics: GatewayMetrics) -> None:
        self.config = config
        self.metrics = metrics
        self.dedupe = Dedupe(store)
        self.sender = Sender(config, metrics)
        self.cache_hits = CacheHitWatcher(config.cache_hit)
        self.queue: asyncio.Queue[Alert] = asyncio.Queue(maxsize=config.queue_size)
        self._kinds = {kind for d in config.destinations for kind in d.events}

    def emit(self, alert: Alert | None) -> None:
        """Queue an alert for delivery (a no-op for None or when no destination takes its kind; dropped,
        counted, when the queue is full). Safe on the request path: it never waits and never raises."""
        if alert is None or alert.kind not in self._kinds or self.dedupe.recent(alert.event_key):
            return  # (an event repeating on every request, e.g. a budget past its soft limit, stops here)
        try:
            self.queue.put_nowait(alert)
        except asyncio.QueueFull:
            self.metrics.alerts.labels("all", alert.kind, "dropped").inc()

    def answered(self, tenant: str, cache_hit: bool) -> None:
        """One answered request of a configured tenant, for its cache-hit ratio."""
        if "cache_hit_drop" in self._kinds:
            self.emit(self.cache_hits.observe(tenant, cache_hit))

    async def run(self) -> None:
        if not self._kinds:
            return
        await asyncio.gather(*(self._work() for _ in range(WORKERS)))

    async def _work(self) -> None:
        while True:
            alert = await self.queue.get()
            try:
                await self._handle(alert)
            except Exception:  # a bug here must not end the worker
                log.exception("alert %s not delivered", alert.kind)
            finally:
                self.queue.task_done()

    async def _handle(self, alert: Alert) -> None:
        if not await self.dedupe.claim(alert.event_key, self.config.dedupe_ttl_s):
            self.metrics.alerts.labels("all", alert.kind, "deduplicated").inc()
            return
        targets = [d for d in self.config.destinations if alert.kind in d.events and await self._due(d, alert)]
        await asyncio.gather(*(self.sender.deliver(d, alert) for d in targets))

    async def _due(self, destination: AlertDestination, alert: Alert) -> bool:
        """Whether the destination's minimum interval for this kind and tenant has passed (then it starts anew)."""
        if not destination.min_interval_s:
            return True
        parts = (alert.kind, alert.tenant, "interval", destination.name)
        if await self.dedupe.claim(parts, destination.min_interval_s):
            return True
        self.metrics.alerts.labels(destination.name, alert.kind, "throttled").inc()
        return False
