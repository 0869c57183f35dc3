"""Webhook delivery: one POST per alert and destination, retried with exponential backoff and jitter on
answers a retry can help (408, 429, 5xx, no answer), a bounded number of times. Redirects are not
followed: an alert goes to the configured URL or nowhere."""

from __future__ import annotations

import asyncio
import logging
import random
import time

import httpx

from gateway.alerts.events import Alert
from gateway.alerts.payload import payload
from gateway.alerts.signer import signed_headers
from gateway.config.alerts import AlertDestination, AlertsConfig
from gateway.metrics import GatewayMetrics

log = logging.getLogger("cachegate.alerts")
RETRYABLE = frozenset({408, 425, 429})


def retryable(status: int) -> bool:
    return status in RETRYABLE or status >= 500


class Sender:
    def __init__(self, config: AlertsConfig, metrics: GatewayMetrics) -> None:
        self.config = config
        self.metrics = metrics
        self._client: httpx.AsyncClient | None = None  # made in the serving loop, on first use

    def backoff_s(self, attempt: int) -> float:
        """Exponential, capped, with full jitter (so replicas retrying one receiver spread out)."""
        ceiling = min(self.config.max_backoff_s, self.config.backoff_s * 2**attempt)
        return random.uniform(ceiling / 2, ceiling)

    async def deliver(self, destination: AlertDestination, alert: Alert) -> bool:
        """POST the alert; True once the receiver took it (2xx)."""
        client = self._client or self._open()
        body, count = payload(alert), self.metrics.alerts.labels
        for attempt in range(self.config.max_attempts):
            if attempt:
                count(destination.name, alert.kind, "retried").inc()
                await asyncio.sleep(self.backoff_s(attempt - 1))
            headers = signed_headers(destination.secret(), int(time.time()), body)  # fresh timestamp per try
            try:
                response = await client.post(destination.url, content=body, headers=headers)
            except httpx.HTTPError as exc:
                log.warning("alert to %s: %s (try %d)", destination.name, type(exc).__name__, attempt + 1)
                continue
            if response.is_success:
                count(destination.name, alert.kind, "sent").inc()
                return True
            log.warning("alert to %s: HTTP %d (try %d)", destination.name, response.status_code, attempt + 1)
            if not retryable(response.status_code):
                break
        count(destination.name, alert.kind, "failed").inc()
        return False

    def _open(self) -> httpx.AsyncClient:
        self._client = httpx.AsyncClient(timeout=self.config.timeout_s, follow_redirects=False)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
