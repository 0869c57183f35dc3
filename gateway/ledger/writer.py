"""Records into the ledger off the request path: `add` only queues (bounded: beyond, the record is dropped
and counted, the request never waits); one task writes what waited, a batch at a time, as soon as `batch`
records wait or the oldest has waited `flush_ms`. A failing database loses that batch (counted) and the
gateway goes on proxying."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from gateway.config.ledger import LedgerConfig
from gateway.ledger.backend import LedgerBackend
from gateway.ledger.rows import to_row
from gateway.logs import log_failure
from gateway.metrics import GatewayMetrics

log = logging.getLogger("cachegate.ledger")


class LedgerWriter:
    def __init__(self, backend: LedgerBackend, config: LedgerConfig, metrics: GatewayMetrics) -> None:
        self.backend, self.config, self.metrics = backend, config, metrics
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=config.queue)
        self._writing = 0  # records taken from the queue, not yet written

    def add(self, record: dict[str, Any]) -> None:
        try:
            self.queue.put_nowait(record)
        except asyncio.QueueFull:
            self.metrics.ledger_records_dropped.labels("queue_full").inc()

    async def _next_batch(self) -> list[dict[str, Any]]:
        batch = [await self.queue.get()]
        self._writing = 1
        deadline = time.monotonic() + self.config.flush_ms / 1000
        while len(batch) < self.config.batch:
            if self.queue.empty():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                try:
                    batch.append(await asyncio.wait_for(self.queue.get(), left))
                except TimeoutError:
                    break
            else:
                batch.append(self.queue.get_nowait())
            self._writing = len(batch)
        return batch

    async def run(self) -> None:
        while True:
            batch = await self._next_batch()
            await self._write(batch)

    async def _write(self, batch: list[dict[str, Any]]) -> None:
        try:
            await self.backend.insert([to_row(record) for record in batch])
            self.metrics.ledger_records_written.inc(len(batch))
        except Exception:  # the database failed (or a record would not fit): lost, counted; the next go on
            self.metrics.ledger_records_dropped.labels("database").inc(len(batch))
            log_failure(log, "ledger: writing %d records failed", len(batch))
        finally:
            self._writing = 0

    async def drain(self, timeout_s: float) -> None:
        """Wait until what was queued is written (or `timeout_s` passed): at shutdown, nothing queued is lost."""
        deadline = time.monotonic() + timeout_s
        while (not self.queue.empty() or self._writing) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
