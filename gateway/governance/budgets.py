"""Spend limits of a tenant, a key and an agent session, over calendar windows (docs/governance.md).

A window is a UTC day, a UTC month or the lifetime of the counters; its counters (USD and tokens) live in
the state store under the window's bucket (`d2026-11-24`, `m2026-11`, `life`) and expire after it. Before
anything is sent upstream the request holds its worst case (gateway/governance/estimate.py) on every
budget, atomically, and is refused when a budget's spend plus the holds of requests in flight reached
its limit; once its spend is known (the same cost figures as the response headers, compaction's summary
call included) the hold is replaced by it. So concurrent requests, on any replica, overshoot a budget by
at most one request.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from gateway.config.limits import Budget
from gateway.config.tenants import TenantConfig
from gateway.state.base import Meter, StateStore

if TYPE_CHECKING:
    from gateway.managed_keys import KeyRecord

LIFETIME_TTL_S = 400 * 86400.0  # a lifetime counter outlives any deployment's key rotation period
HOLD_LEASE_S = 900.0  # longer than any request runs: the holds of a replica that died free themselves
Scope = tuple[str, str, list[Budget]]  # (scope, id, budgets): "tenant" and its name, "key" and its id ...


@dataclass(frozen=True, slots=True)
class Line:
    """One budget of one scope: "tenant", "key" or "session"."""

    scope: str
    ident: str  # the tenant's name, the key's id or the session id
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


def window_start(window: str, now: datetime) -> datetime | None:
    """When the window `now` falls in began (None: the lifetime window, which never began anew)."""
    if window == "day":
        return now.replace(hour=0, minute=0, second=0, microsecond=0)
    if window == "month":
        return now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return None


def bucket(window: str, now: datetime) -> tuple[str, datetime | None]:
    """The window's bucket id and when it resets (None: never)."""
    start = window_start(window, now)
    if window == "day" and start is not None:
        return f"d{start:%Y-%m-%d}", start + timedelta(days=1)
    if window == "month" and start is not None:
        following = (start + timedelta(days=32)).replace(day=1)
        return f"m{start:%Y-%m}", following
    return "life", None


def counter_ttl_s(resets_at: datetime | None, now: datetime) -> float:
    """How long a window's counters are kept: an hour past its end (a request settles in the window it began)."""
    return (resets_at - now).total_seconds() + 3600 if resets_at else LIFETIME_TTL_S


def lines(tenant: str, scopes: list[Scope]) -> list[Line]:
    """Budget lines of (scope, id, budgets); the tenant in a hash tag so its counters share a Cluster slot."""
    return [
        Line(scope, ident, f"budget:{{{tenant}}}:{scope}:{ident}:{budget.window}", budget)
        for scope, ident, budgets in scopes
        for budget in budgets
    ]


def budget_scopes(tenants: list[TenantConfig], keys: Iterable[KeyRecord]) -> dict[str, list[Scope]]:
    """Each tenant's budget scopes: its own, then its managed keys' (revoked keys and unknown tenants left out;
    session budgets are per session and not listed)."""
    scopes: dict[str, list[Scope]] = {t.name: [("tenant", t.name, t.limits.budgets)] for t in tenants}
    for key in keys:
        if not key.revoked and key.tenant in scopes:
            scopes[key.tenant].append(("key", key.id, key.limits.budgets))
    return scopes


def counter_keys(line: Line, now: datetime) -> tuple[str, str, datetime | None]:
    bucket_id, resets_at = bucket(line.budget.window, now)
    return f"{line.key}:{bucket_id}:usd", f"{line.key}:{bucket_id}:tokens", resets_at


@dataclass(frozen=True, slots=True)
class Metered:
    """A request's meters on its budget lines (gateway/state/base.py Meter), and for each meter its
    line (index) and unit ("usd" or "tokens")."""

    lines: list[Line]
    meters: list[Meter]
    owners: list[tuple[int, str]]

    def amounts(self, usd: float, tokens: int) -> list[float]:
        return [usd if unit == "usd" else float(tokens) for _, unit in self.owners]

    def standings(self, spent: list[float], now: datetime) -> list[Standing]:
        """Each line's spend, from the meters' counters."""
        totals = [{"usd": 0.0, "tokens": 0.0} for _ in self.lines]
        for (index, unit), value in zip(self.owners, spent, strict=True):
            totals[index][unit] = value
        return [
            Standing(line, total["usd"], int(total["tokens"]), bucket(line.budget.window, now)[1])
            for line, total in zip(self.lines, totals, strict=True)
        ]


def metered(found: list[Line], now: datetime) -> Metered:
    """The meters of the budget lines in the windows `now` falls in: a request holds and settles on the
    windows it started in."""
    meters, owners = [], []
    for index, line in enumerate(found):
        usd_key, tokens_key, resets_at = counter_keys(line, now)
        ttl = counter_ttl_s(resets_at, now)
        for unit, key, limit in (("usd", usd_key, line.budget.usd), ("tokens", tokens_key, line.budget.tokens)):
            if limit is not None:
                meters.append(Meter(f"{key}:holds", limit, HOLD_LEASE_S, spent=key, spent_ttl_s=ttl))
                owners.append((index, unit))
    return Metered(found, meters, owners)


async def report(store: StateStore, found: list[Line], now: datetime) -> list[dict[str, Any]]:
    """Each budget line's spend in its current window, read from the shared counters (all replicas)."""
    rows = []
    for line in found:
        usd_key, tokens_key, resets_at = counter_keys(line, now)
        usd, tokens = await store.get(usd_key), await store.get(tokens_key)
        standing = Standing(line, float(usd or 0), int(float(tokens or 0)), resets_at)
        budget = line.budget
        rows.append(
            {
                "scope": line.scope,
                "id": line.ident,
                "window": budget.window,
                "usd_spent": standing.usd,
                "usd_limit": budget.usd,
                "tokens_spent": standing.tokens,
                "tokens_limit": budget.tokens,
                "used": standing.used,
                "resets_at": resets_at.isoformat() if resets_at else None,
            }
        )
    return rows


def utc_now() -> datetime:
    return datetime.now(UTC)
