"""Spend limits of a tenant, a key and an agent session, over calendar windows (docs/governance.md).

A window is a UTC day, a UTC month or the lifetime of the counters; its counters (USD and tokens) live in
the state store under the window's bucket (`d2026-11-24`, `m2026-11`, `life`) and expire after it. The
request is checked before anything is sent upstream; its spend (the same cost figures as the response
headers, compaction's summary call included) is added once it is known.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from gateway.config.limits import Budget
from gateway.state.base import StateStore

LIFETIME_TTL_S = 400 * 86400.0  # a lifetime counter outlives any deployment's key rotation period


@dataclass(frozen=True, slots=True)
class Line:
    """One budget of one scope: "tenant", "key" or "session"."""

    scope: str
    key: str  # the scope's counter prefix
    budget: Budget


@dataclass(frozen=True, slots=True)
class Standing:
    line: Line
    usd: float
    tokens: int
    resets_at: datetime | None

    @property
    def used(self) -> float:
        """The fraction of the budget spent: the larger of its USD and token shares."""
        budget = self.line.budget
        shares = [self.usd / budget.usd if budget.usd else 0.0, self.tokens / budget.tokens if budget.tokens else 0.0]
        return max(shares)

    def describe(self) -> str:
        budget, parts = self.line.budget, []
        if budget.usd is not None:
            parts.append(f"${self.usd:.4f} of ${budget.usd:g}")
        if budget.tokens is not None:
            parts.append(f"{self.tokens} of {budget.tokens} tokens")
        window = "lifetime" if budget.window == "lifetime" else f"per {budget.window}"
        return f"{self.line.scope} budget ({window}): {', '.join(parts)} spent"


def bucket(window: str, now: datetime) -> tuple[str, datetime | None]:
    """The window's bucket id and when it resets (None: never)."""
    if window == "day":
        start = now.replace(hour=0, minute=0, second=0, microsecond=0)
        return f"d{start:%Y-%m-%d}", start + timedelta(days=1)
    if window == "month":
        start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        following = (start + timedelta(days=32)).replace(day=1)
        return f"m{start:%Y-%m}", following
    return "life", None


def lines(tenant: str, scopes: list[tuple[str, str, list[Budget]]]) -> list[Line]:
    """Budget lines of (scope, id, budgets); the tenant in a hash tag so its counters share a Cluster slot."""
    return [
        Line(scope, f"budget:{{{tenant}}}:{scope}:{ident}:{budget.window}", budget)
        for scope, ident, budgets in scopes
        for budget in budgets
    ]


def _counter_keys(line: Line, now: datetime) -> tuple[str, str, datetime | None]:
    bucket_id, resets_at = bucket(line.budget.window, now)
    return f"{line.key}:{bucket_id}:usd", f"{line.key}:{bucket_id}:tokens", resets_at


async def standings(store: StateStore, found: list[Line], now: datetime) -> list[Standing]:
    result = []
    for line in found:
        usd_key, tokens_key, resets_at = _counter_keys(line, now)
        usd, tokens = await store.get(usd_key), await store.get(tokens_key)
        result.append(Standing(line, float(usd or 0), int(float(tokens or 0)), resets_at))
    return result


async def charge(store: StateStore, found: list[Line], usd: float, tokens: int, now: datetime) -> None:
    for line in found:
        usd_key, tokens_key, resets_at = _counter_keys(line, now)
        ttl = (resets_at - now).total_seconds() + 3600 if resets_at else LIFETIME_TTL_S
        if usd:
            await store.incr_float(usd_key, usd, ttl)
        if tokens:
            await store.incr(tokens_key, tokens, ttl)


def utc_now() -> datetime:
    return datetime.now(UTC)
