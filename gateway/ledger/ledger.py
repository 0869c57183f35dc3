"""The ledger: where request records go for months (gateway/ledger/writer.py) and the questions asked
of them (gateway/ledger/queries.py), on SQLite or PostgreSQL by the configured URL."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from gateway.config.ledger import LedgerConfig
from gateway.ledger import queries
from gateway.ledger.backend import LedgerBackend
from gateway.ledger.postgres import PostgresLedger
from gateway.ledger.queries import Filters
from gateway.ledger.rows import to_record
from gateway.ledger.sqlite import SqliteLedger
from gateway.ledger.writer import LedgerWriter
from gateway.logs import log_failure
from gateway.metrics import GatewayMetrics

log = logging.getLogger("cachegate.ledger")
REOPEN_S = 5.0  # a database that was down at start is tried again this often
PURGE_S = 3600.0  # records past their retention go once an hour
EXPORT_PAGE = 1000


def backend_for(config: LedgerConfig) -> LedgerBackend:
    if config.url.startswith("sqlite://"):
        return SqliteLedger(config.url, config.timeout_s)
    return PostgresLedger(config.url, config.timeout_s)


def retention_cutoff(now: datetime, months: int) -> float:
    """The start of the month `months` before the current one: records before it go."""
    index = now.year * 12 + now.month - 1 - months
    return datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC).timestamp()


class Ledger:
    def __init__(self, backend: LedgerBackend, config: LedgerConfig, metrics: GatewayMetrics) -> None:
        self.backend, self.config = backend, config
        self.writer = LedgerWriter(backend, config, metrics)
        self.opened = False
        self._task: asyncio.Task[None] | None = None

    def add(self, record: dict[str, Any]) -> None:
        self.writer.add(record)

    async def open(self) -> bool:
        """Connect and migrate; False (logged) when the database cannot be reached yet."""
        try:
            await self.backend.open()
        except Exception:
            log_failure(log, "ledger: the %s database could not be opened; records wait", self.backend.name)
            return False
        self.opened = True
        return True

    async def start(self) -> None:
        """Open the database before serving (at most `timeout_s`), then write in the background."""
        try:
            await asyncio.wait_for(self.open(), self.config.timeout_s)
        except TimeoutError:
            log.error("ledger: the %s database did not answer in time; records wait in the queue", self.backend.name)
        self._task = asyncio.create_task(self.run())

    async def run(self) -> None:
        """Write records as they come (once the database is open) and purge old ones hourly."""
        while not self.opened and not await self.open():
            await asyncio.sleep(REOPEN_S)
        writing = asyncio.create_task(self.writer.run())
        try:
            while True:
                await self.purge(datetime.now(UTC))
                await asyncio.sleep(PURGE_S)
        finally:
            writing.cancel()

    async def purge(self, now: datetime) -> int:
        try:
            cutoff = retention_cutoff(now, self.config.retention_months)
            return await self.backend.execute(*queries.purge_before(cutoff))
        except Exception:
            log_failure(log, "ledger: purging old records failed")
            return 0

    async def close(self) -> None:
        """Write what waits (at most `timeout_s`), then stop."""
        if self._task is not None:
            await self.writer.drain(self.config.timeout_s)
            self._task.cancel()
        await self.backend.close()

    async def spend(self, group: str, filters: Filters, limit: int, offset: int) -> list[dict[str, Any]]:
        rows = await self.backend.fetch(*queries.spend_by(group, filters, limit, offset))
        return [{group: row[0], **queries.spend_row(row[1:])} for row in rows]

    async def totals(self, filters: Filters) -> dict[str, Any]:
        """The matching records' spend together, and their savings by source (one query)."""
        rows = await self.backend.fetch(*queries.spend_by_source(filters))
        sources = {row[0] or "none": queries.spend_row(row[1:]) for row in rows}
        by_source = {source: spend["saved_usd"] for source, spend in sources.items() if spend["saved_usd"]}
        return {**queries.summed(list(sources.values())), "saved_usd_by_source": by_source}

    async def records(self, filters: Filters) -> AsyncIterator[dict[str, Any]]:
        """Every matching record, oldest first, read a page at a time."""
        after: tuple[float, str] | None = None
        while True:
            rows = await self.backend.fetch(*queries.records_after(filters, after, EXPORT_PAGE))
            for row in rows:
                yield to_record(row)
            if len(rows) < EXPORT_PAGE:
                return
            after = (rows[-1][1], rows[-1][0])  # (at, id) of the last one

    async def spend_by_key_since(self, tenant: str, since: float | None) -> dict[str | None, tuple[float, int]]:
        rows = await self.backend.fetch(*queries.spend_by_key_since(tenant, since))
        return {key: (float(usd or 0), int(tokens or 0)) for key, usd, tokens in rows}


def create_ledger(config: LedgerConfig, metrics: GatewayMetrics) -> Ledger | None:
    return Ledger(backend_for(config), config, metrics) if config.enabled else None
