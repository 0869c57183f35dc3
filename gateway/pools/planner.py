"""One request's plan over its pool and fallback pools: the order to try deployments in, and what each
attempt's outcome changes (health, headroom, affinity), read and written in one store round trip each.

A failing state store never fails a request: routing then goes on in configuration order (counted).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry

from gateway.alerts.events import Alert, deployment_cooldown
from gateway.config import ModelConfig, Settings
from gateway.config.tenants import same_keys
from gateway.governance.estimate import json_tokens
from gateway.pools import affinity, headroom
from gateway.pools.affinity import Holder
from gateway.pools.health import Health, Standing
from gateway.pools.metrics import PoolMetrics
from gateway.pools.model import Deployment, Pool, build_pools
from gateway.pools.selection import Choice, choose
from gateway.state import Op, StateStore, StateUnavailable
from gateway.upstream.errors import UpstreamError
from gateway.usage.pricing import route_price


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a request ran and why (its record's `deployment`)."""

    pool: str
    id: str
    region: str | None
    reason: str  # sticky | new | balanced | moved:<why> | failover | fallback | cooling | only
    moved_from: str | None = None  # the deployment that held the session's prefix, when it had to move
    lost_prefix_usd: float = 0.0  # the estimated extra paid to write that prefix again

    def record(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(eq=False)
class Group:
    """One pool's part of a plan."""

    pool: Pool
    choice: Choice
    standings: dict[Deployment, Standing]
    holder: Holder | None


@dataclass(eq=False)
class Plan:
    pools: Pools
    groups: list[Group]
    session: str | None
    prompt_tokens: int
    candidates: list[Deployment] = field(default_factory=list)
    # Whether any pool of the plan has several deployments; else there is no choice to make and no
    # state to read or keep (a plain route costs no store round trip).
    chooses: bool = True

    def __post_init__(self) -> None:
        if not self.candidates:
            self.candidates = [d for group in self.groups for d in group.choice.order]

    def only(self, deployment: Deployment) -> Plan:
        """This plan restricted to one deployment (a converted call runs it through its own wire)."""
        return Plan(self.pools, self.groups, self.session, self.prompt_tokens, [deployment], self.chooses)

    def is_primary(self, deployment: Deployment) -> bool:
        """Whether the deployment serves the requested model (not a fallback)."""
        return deployment in self.groups[0].standings

    def _group(self, deployment: Deployment) -> Group:
        return next(g for g in self.groups if deployment in g.standings)

    def attempts(self, deployment: Deployment) -> int:
        """A pool of one retries its deployment as configured; a larger pool moves on to the next one."""
        return deployment.route.retries + 1 if len(self._group(deployment).pool.deployments) == 1 else 1

    async def begin(self, deployment: Deployment) -> bool:
        """Whether to try this deployment now: a half-open circuit takes one probe at a time (unless it is
        the plan's last resort)."""
        standing = self._group(deployment).standings[deployment]
        health = self.pools.health
        if not self.chooses or deployment is self.candidates[-1] or not health.half_open(standing, time.time()):
            return True
        try:
            return await health.claim_probe(deployment)
        except StateUnavailable:
            self.pools.metrics.state_failures.inc()
            return True

    async def failed(self, deployment: Deployment, exc: UpstreamError, seen: Sequence[float]) -> None:
        metrics, labels = self.pools.metrics, (deployment.pool, deployment.id)
        metrics.requests.labels(*labels, "error").inc()
        if not self.chooses:
            return
        try:
            await self.pools.store.batch(self._counts(deployment, seen))
            reason, opened, rest = await self.pools.health.failed(deployment, exc)
        except StateUnavailable:
            metrics.state_failures.inc()
            return
        metrics.cooldowns.labels(*labels, reason).inc()
        self.pools.alert(deployment_cooldown(deployment.pool, deployment.id, reason, rest, time.time() + rest))
        if opened:
            metrics.circuit_opens.labels(*labels).inc()

    async def succeeded(self, deployment: Deployment, seen: Sequence[float]) -> Placement:
        metrics, group = self.pools.metrics, self._group(deployment)
        metrics.requests.labels(deployment.pool, deployment.id, "ok").inc()
        ops = self._counts(deployment, seen)
        if self.session is not None and self.pools.config.affinity:
            ops.append(affinity.write(self.session, deployment, self.prompt_tokens))
        try:
            if self.chooses:
                await self.pools.store.batch(ops)
                await self.pools.health.succeeded(deployment, group.standings[deployment])
        except StateUnavailable:
            metrics.state_failures.inc()
        placement = self._placement(deployment, group)
        if placement.moved_from is not None:
            metrics.affinity_moves.labels(self.groups[0].pool.name, placement.reason.removeprefix("moved:")).inc()
            metrics.lost_prefix_usd.labels(self.groups[0].pool.name).inc(placement.lost_prefix_usd)
        return placement

    def _counts(self, deployment: Deployment, seen: Sequence[float]) -> list[Op]:
        ops = headroom.counts(deployment, self.prompt_tokens)
        if seen:
            ops.append(headroom.stated(deployment, min(seen)))
            self.pools.metrics.headroom.labels(deployment.pool, deployment.id).set(min(seen))
        return ops

    def _placement(self, deployment: Deployment, group: Group) -> Placement:
        primary = self.groups[0]
        if group is not primary:
            reason = "fallback"
        elif deployment is primary.choice.order[0]:
            reason = primary.choice.reason
        else:
            reason = "failover"
        holder = primary.holder
        moved = holder is not None and holder.deployment_id != deployment.id and reason != "sticky"
        if not moved or holder is None:
            return Placement(deployment.pool, deployment.id, deployment.route.region, reason)
        price = route_price(deployment.route)
        premium = max(price.cache_write_5m - price.cache_read, 0.0)
        return Placement(
            deployment.pool,
            deployment.id,
            deployment.route.region,
            reason,
            moved_from=holder.deployment_id,
            lost_prefix_usd=round(holder.prefix_tokens * premium, 8),
        )


class Pools:
    def __init__(
        self,
        settings: Settings,
        store: StateStore,
        registry: CollectorRegistry,
        alert: Callable[[Alert], None] = lambda alert: None,
    ) -> None:
        self.alert = alert  # a cooldown's webhook (gateway/alerts/); queued, never waited for
        self.config = settings.pools
        self.store = store
        self.pools = build_pools(settings.models)
        self.health = Health(store, settings.pools)
        self.metrics = PoolMetrics(registry)
        self.rng = random.Random()

    def _pools_for(self, route: ModelConfig, fallbacks: list[str] | None) -> list[Pool]:
        """The route's pool (a route from outside the configuration: a pool of its own), then the fallback
        pools: `fallbacks` (a tenant's own), else the pool's."""
        primary = self.pools.get(route.name) or build_pools([route])[route.name]
        names = primary.fallbacks if fallbacks is None else fallbacks
        fallbacks_pools = [self.pools[name] for name in names if name in self.pools and name != primary.name]
        # A tenant with its own provider keys calls every deployment with them (config/tenants.py).
        return [
            Pool(pool.name, tuple(Deployment(d.pool, d.id, same_keys(route, d.route)) for d in pool.deployments))
            for pool in [primary, *fallbacks_pools]
        ]

    async def plan(
        self, route: ModelConfig, session: str | None, body: dict[str, Any], fallbacks: list[str] | None = None
    ) -> Plan:
        pools = self._pools_for(route, fallbacks)
        chooses = any(len(pool.deployments) > 1 for pool in pools)
        sticky = chooses and session is not None and self.config.affinity
        ops = [op for pool in pools for d in pool.deployments for op in [*self.health.reads(d), *headroom.reads(d)]]
        ops += [affinity.read(pool.name, session) for pool in pools] if sticky and session is not None else []
        try:
            values = await self.store.batch(ops) if chooses else [None] * len(ops)
        except StateUnavailable:
            self.metrics.state_failures.inc()
            values = [None] * len(ops)
        now, groups, at = time.time(), [], 0
        holders = values[len(ops) - len(pools) :] if sticky else [None] * len(pools)
        for pool, raw_holder in zip(pools, holders, strict=True):
            standings: dict[Deployment, Standing] = {}
            for d in pool.deployments:
                cool, fails, stated, requests, tokens = values[at : at + 5]
                at += 5
                cooling_until, failures = self.health.parse(cool, fails)
                standings[d] = Standing(cooling_until, failures, headroom.headroom(d, stated, requests, tokens))
            holder = affinity.parse(raw_holder)
            choice = choose(
                standings,
                holder.deployment_id if holder else None,
                now=now,
                min_headroom=self.config.min_headroom,
                rng=self.rng,
            )
            if not chooses:
                choice = Choice(choice.order, "only")  # a pool of one deployment
            elif not self.config.affinity and choice.reason == "new":
                choice = Choice(choice.order, "balanced")
            groups.append(Group(pool, choice, standings, holder))
        # The prompt's size (affinity's prefix, tpm counts): measured only when there is a choice to make.
        prompt_tokens = json_tokens(body) if chooses else 0
        return Plan(self, groups, session if sticky else None, prompt_tokens, chooses=chooses)
