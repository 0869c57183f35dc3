"""Budget counters from the ledger, so that a Redis flush or a restart on an empty Redis loses no spend.

Requests keep holding and settling on the counters in the state store (no database on the request path).
Each replica checks every `seed_interval_s` whether a tenant's marker for today is in the store; when it
is not (a flush, a new Redis, a new day), the replica that sets it first raises each of the tenant's and its
keys' counters to the ledger's total for the window: never lowers them, so seeding twice, or a counter that
never went away, changes nothing, and spend settled meanwhile is kept. What the ledger has not yet written
(at most `flush_ms` of records) when the store was flushed is not in the seed."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime

from gateway.config import TenantConfig
from gateway.governance.budgets import (
    Line,
    bucket,
    budget_scopes,
    counter_keys,
    counter_ttl_s,
    lines,
    utc_now,
    window_start,
)
from gateway.ledger.ledger import Ledger
from gateway.logs import log_failure
from gateway.managed_keys import ManagedKeys
from gateway.state.base import StateStore, StateUnavailable

log = logging.getLogger("cachegate.ledger")
EPSILON = 1e-9  # below this a counter already holds the ledger's total (float sums differ in the last bits)


def marker_key(tenant: str, now: datetime) -> str:
    return f"budget:{{{tenant}}}:seeded:{bucket('day', now)[0]}"


class BudgetSeeder:
    def __init__(
        self, store: StateStore, ledger: Ledger, tenants: list[TenantConfig], keys: ManagedKeys, interval_s: float
    ) -> None:
        self.store, self.ledger, self.tenants, self.keys, self.interval_s = store, ledger, tenants, keys, interval_s
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Seed once before serving (at most the ledger's timeout), then check every `interval_s`."""
        try:
            await asyncio.wait_for(self._round(), self.ledger.config.timeout_s)
        except TimeoutError:
            log.error("ledger: seeding the budget counters took too long; it goes on in the background")
        self._task = asyncio.create_task(self.run())

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            await self._round()

    async def _round(self) -> None:
        if not self.ledger.opened:
            return  # nothing to seed from yet
        try:
            await self.seed()
        except Exception:  # Redis or the database is down: the next round tries again
            log_failure(log, "ledger: seeding the budget counters failed")

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def seed(self) -> list[str]:
        """Seed the tenants whose marker is gone; the tenants seeded."""
        now = utc_now()
        try:
            keys = list((await self.keys.records()).values())
        except StateUnavailable:
            keys = []  # Redis is down: the tenants' counters (in the replica's fallback) are seeded still
        scopes = budget_scopes(self.tenants, keys)
        seeded = []
        for tenant, tenant_scopes in scopes.items():
            found = lines(tenant, tenant_scopes)
            if not found:
                continue
            marker, ends = marker_key(tenant, now), bucket("day", now)[1]
            if not await self.store.set(marker, b"1", counter_ttl_s(ends, now), only_new=True):
                continue  # seeded already, by this replica or another
            try:
                await self._seed_tenant(tenant, found, now)
            except BaseException:
                await self.store.delete(marker)  # seeded only in part: the next round does it again
                raise
            seeded.append(tenant)
        return seeded

    async def _seed_tenant(self, tenant: str, found: list[Line], now: datetime) -> None:
        windows = {line.budget.window for line in found}
        spend = {}
        for window in windows:
            start = window_start(window, now)
            spend[window] = await self.ledger.spend_by_key_since(tenant, start.timestamp() if start else None)
        for line in found:
            by_key = spend[line.budget.window]
            if line.scope == "tenant":
                usd, tokens = sum(u for u, _ in by_key.values()), sum(t for _, t in by_key.values())
            else:  # a key's line ("session" lines are not listed by budget_scopes)
                usd, tokens = by_key.get(line.ident, (0.0, 0))
            usd_key, tokens_key, resets_at = counter_keys(line, now)
            ttl = counter_ttl_s(resets_at, now)
            if line.budget.usd is not None:
                await self._raise_to(usd_key, usd, ttl)
            if line.budget.tokens is not None:
                await self._raise_to(tokens_key, float(tokens), ttl)

    async def _raise_to(self, key: str, total: float, ttl_s: float) -> None:
        current = float(await self.store.get(key) or 0)
        if total > current + EPSILON:  # an increment, not a set: spend settled meanwhile stays counted
            await self.store.incr_float(key, total - current, ttl_s)
