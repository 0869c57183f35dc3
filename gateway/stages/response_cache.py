"""Response cache stage: answer from the exact or the semantic tier, and store successful upstream answers.

Request path: caller controls and eligibility decide the tiers; the exact tier is one backend read;
the semantic tier embeds the last user turn (batched, off the event loop, timeout = miss), searches
this replica's index (caught up with the other replicas first) and verifies the candidate. A hit
answers with the stored response, zero usage, cost 0 and the original cost counted as saved.
Response path (after usage): store the answer when it is a complete upstream success.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import orjson

from gateway.config.response_cache import JudgeConfig, ResponseCacheConfig
from gateway.context import Reply, RequestContext
from gateway.response_cache.cache import Hit, Judge, ResponseCache
from gateway.response_cache.coalesce import Boarding, Coalescer, Flight, lease_s
from gateway.response_cache.controls import Controls, parse_controls
from gateway.response_cache.eligibility import Decision, decide, storable
from gateway.response_cache.entry import Entry
from gateway.response_cache.keys import (
    CACHEABLE_WIRES,
    EXACT_TIER,
    SEMANTIC_TIER,
    Place,
    SemanticScope,
    canonical_request,
    digest,
    exact_key,
    semantic_scope,
)
from gateway.response_cache.metrics import ResponseCacheMetrics
from gateway.response_cache.store import CacheUnavailable
from gateway.semantic.judge import judge_pair
from gateway.services import Services
from gateway.stages.base import Stage
from gateway.stages.usage import charge_side_call
from gateway.usage import Cost, Usage

CACHE_HEADER = "x-cachegate-cache"
SIMILARITY_HEADER = "x-cachegate-similarity"
AGE_HEADER = "x-cachegate-cache-age"
JUDGE_HEADER = "x-cachegate-cache-judge"  # yes / no: the judge ruled on a candidate below the threshold
AHEAD_NOTE = "response_cache_ahead"
log = logging.getLogger("cachegate.response_cache")


@dataclass(eq=False)
class Pending:
    """What the lookup learned that the store step needs (kept in ctx.notes['response_cache'])."""

    decision: Decision
    controls: Controls
    place: Place
    exact_key: str
    scope: SemanticScope | None
    scope_id: str
    vector: np.ndarray | None = field(default=None, repr=False)
    flight: Flight | None = None  # the flight this request leads, taken with its lookup
    followed: bool = False  # its lookup waited for another replica's identical request in flight
    boarding: Boarding | None = None  # its lookup and lead, sent with the read-ahead (`rides_ahead`)

    @property
    def semantic_key(self) -> str:
        assert self.scope is not None
        return self.place.key(SEMANTIC_TIER, digest([self.scope_id, self.scope.prompt]))


@dataclass(eq=False)
class Ahead:
    """The keys the read-ahead computed (`rides_ahead`), and the body they keyed."""

    body: dict[str, Any]
    pending: Pending


def _served_marker(pending: Pending) -> str:
    """The state key that says this request (scope and prompt, tenant included) was answered semantically."""
    return "rc-served:" + digest([pending.semantic_key])


def _skip_reason(controls: Controls) -> str:
    return "no_store" if controls.no_store else "no_cache"


class ResponseCacheStage(Stage):
    name = "response_cache"

    def __init__(self, services: Services) -> None:
        self.metrics = ResponseCacheMetrics(services.metrics.registry)
        config, evictions = services.settings.policy.response_cache, services.metrics.memory_evictions
        self.cache = ResponseCache.create(services.store, config, self.metrics, evictions)
        services.extras[self.name] = self.cache
        self.coalescer = Coalescer.create(self.cache.backend, services.metrics.registry)

    async def on_request(self, ctx: RequestContext) -> None:
        unkeyed = self._unkeyed(ctx)
        if unkeyed is not None:
            if unkeyed == "too_many_messages":
                self.metrics.skips.labels("all", unkeyed).inc()
            return
        pending = await self._pending_now(ctx)
        ctx.notes[self.name] = pending
        ctx.response_headers[CACHE_HEADER] = "miss"
        decision, controls = pending.decision, pending.controls
        if not decision.serve:
            self.metrics.skips.labels("all", _skip_reason(controls)).inc()
            await self._count_regenerated(ctx, pending)
            return
        policy = ctx.policy.response_cache
        try:
            hit = await self._lookup(ctx, pending, policy)
        except CacheUnavailable:
            self.metrics.skips.labels("all", "backend_unavailable").inc()
            return
        if hit is not None:
            self._serve(ctx, *hit)
            if hit[0] == "semantic":
                await ctx.services.store.set(_served_marker(pending), b"1", policy.regenerated_window_s)
        elif decision.exact and decision.store and policy.coalesce:
            await self._coalesce(ctx, pending)

    def rides_ahead(self, ctx: RequestContext) -> None:
        """The exact tier's lookup and lead, with the request's first state round trip when the cache's
        Redis is the state's: keyed on the body as it is now, and used if no stage rewrites it before this
        one runs (a guard's nudge, compaction); otherwise the flight is let go and the lookup made then."""
        lock = self.coalescer.lock
        if lock is None or ctx.route is None or self._unkeyed(ctx) is not None or not ctx.state.carries(lock.client):
            return
        if ctx.policy.compaction.enabled and ctx.policy.compaction.retrieval_tool:
            return  # compaction offers its tool in most such bodies: the key would change (a lock taken for naught)
        pending = self._pending(ctx)
        ctx.notes[AHEAD_NOTE] = Ahead(ctx.body, pending)
        if pending.decision.serve and self._leads(pending, ctx.policy.response_cache):
            pending.boarding = self.coalescer.board(pending.exact_key, lease_s(ctx.route), ctx.state)
            pending.boarding.flight.end_with(asyncio.current_task())

    @staticmethod
    def _unkeyed(ctx: RequestContext) -> str | None:
        """Why the request is not even keyed (None: it is)."""
        policy = ctx.policy.response_cache
        if not policy.enabled or ctx.route is None or ctx.wire.name not in CACHEABLE_WIRES:
            return "off"
        if len(ctx.body.get(ctx.wire.history_field) or ()) > policy.max_request_messages:  # work bound
            return "too_many_messages"
        return None

    async def _pending_now(self, ctx: RequestContext) -> Pending:
        """The request's keys: those of the read-ahead while the body is the one they keyed."""
        ahead = ctx.notes.pop(AHEAD_NOTE, None)
        if isinstance(ahead, Ahead):
            if ahead.body is ctx.body:
                return ahead.pending
            if ahead.pending.boarding is not None:  # a stage rewrote the body since: another key
                await ahead.pending.boarding.flight.release()
        return self._pending(ctx)

    def _pending(self, ctx: RequestContext) -> Pending:
        assert ctx.route is not None
        wire = ctx.wire.name
        controls = parse_controls(ctx.headers)
        canonical = canonical_request(wire, ctx.body, ctx.headers, ctx.history)
        scope = semantic_scope(wire, canonical)
        decision = decide(wire, ctx.body, scope, controls, ctx.policy.response_cache)
        place = Place(ctx.tenant_label, decision.namespace, ctx.route.name)
        return Pending(
            decision=decision,
            controls=controls,
            place=place,
            exact_key=place.key(EXACT_TIER, exact_key(wire, canonical)),
            scope=scope,
            scope_id=digest([wire, place.prefix(), scope.settings_hash, scope.history_hash]) if scope else "",
        )

    @staticmethod
    def _leads(pending: Pending, policy: ResponseCacheConfig) -> bool:
        """Whether a miss of the exact tier leads a flight, taken with the lookup (`_find_exact`)."""
        decision = pending.decision
        semantic = decision.semantic and pending.scope is not None
        return decision.exact and decision.store and policy.coalesce and not semantic

    async def _find_exact(self, ctx: RequestContext, pending: Pending, *, lead: bool) -> Entry | None:
        """The exact tier's entry. `lead`: a miss leads a flight (`_coalesce`), taken with the lookup in one
        atomic round trip where the lock is in Redis and no identical request of this replica is in
        flight (the read-ahead's, when it carried it: `rides_ahead`): then this request leads
        (`pending.flight`) or, when another replica's identical request does, it waited for that
        (`pending.followed`: read the cache again)."""
        decision, key, boarding = pending.decision, pending.exact_key, pending.boarding
        if boarding is not None:
            pending.boarding = None
            found, flight = await boarding.outcome(ctx.state)  # bound to the request's task when it boarded
        elif not lead or ctx.route is None or not self._leads_in_one_trip(key):
            return await self.cache.find_exact(key, decision.max_age_s)
        else:
            found, flight = await self.coalescer.find_or_lead(key, lease_s(ctx.route))
            if flight is not None:
                flight.end_with(asyncio.current_task())
        pending.flight = flight
        pending.followed = found is None and flight is None
        # Found but unusable (corrupt, too old): a miss, led by `_coalesce` as when the lock comes apart.
        return await self.cache.exact_entry(key, found, decision.max_age_s)

    def _leads_in_one_trip(self, key: str) -> bool:
        return self.coalescer.lock is not None and not self.coalescer.following(key)

    async def _coalesce(self, ctx: RequestContext, pending: Pending) -> None:
        """Wait for an identical request in flight (gateway/response_cache/coalesce.py) instead of calling
        upstream too; lead the flight when there is none."""
        assert ctx.route is not None
        if pending.flight is None and not pending.followed and self._leads_in_one_trip(pending.exact_key):
            try:  # lead and read again in one round trip
                entry = await self._find_exact(ctx, pending, lead=True)
            except CacheUnavailable:
                entry = None
            if entry is not None:
                self._coalesced(ctx, entry)
                return
        if pending.flight is not None:
            return
        flight = None
        if not pending.followed:  # the lock apart (on this replica only, or after an unusable entry)
            flight = await self.coalescer.join(pending.exact_key, lease_s(ctx.route))
        if flight is not None:
            flight.end_with(asyncio.current_task())
        try:  # led: an identical request may have stored its answer between our lookup and our lead
            entry = await self.cache.find_exact(pending.exact_key, pending.decision.max_age_s)
        except CacheUnavailable:
            entry = None
        if entry is None:
            if flight is None:
                self.coalescer.metrics.fallthroughs.labels("leader_failed").inc()
            return
        if flight is not None:
            await flight.release()
        self._coalesced(ctx, entry)

    def _coalesced(self, ctx: RequestContext, entry: Entry) -> None:
        self.coalescer.metrics.coalesced.inc()
        self._serve(ctx, "coalesced", Hit(entry, 1.0))

    def _judge(self, ctx: RequestContext, config: JudgeConfig) -> Judge:
        """The judge for this request: its call is charged to the request's tenant and cost header."""

        async def judged(cached: str, asked: str) -> bool:
            route = ctx.services.settings.model_by_name(config.model or "")
            if route is None:
                self.metrics.judge_verdicts.labels("unknown_route").inc()
                return False
            try:
                verdict = await judge_pair(ctx.services.router, route, cached, asked, config.timeout_s)
            except Exception:  # an upstream error or a timeout: not served, the request goes upstream
                log.exception("semantic judge call failed")
                self.metrics.judge_verdicts.labels("error").inc()
                return False
            charge_side_call(ctx, verdict.route.name, verdict.usage, verdict.cost, verdict.price)
            self.metrics.judge_cost.labels(ctx.tenant_label).inc(verdict.cost.usd)
            self.metrics.judge_verdicts.labels("yes" if verdict.same else "no").inc()
            ctx.response_headers[JUDGE_HEADER] = "yes" if verdict.same else "no"
            return verdict.same

        return judged

    async def _lookup(
        self, ctx: RequestContext, pending: Pending, policy: ResponseCacheConfig
    ) -> tuple[str, Hit] | None:
        decision, metrics = pending.decision, self.metrics
        semantic = decision.semantic and pending.scope is not None
        if decision.exact:
            entry = await self._find_exact(ctx, pending, lead=self._leads(pending, policy))
            if entry is not None:
                metrics.hits.labels("exact").inc()
                return "exact", Hit(entry, 1.0)
            metrics.misses.labels("exact").inc()
        if not semantic or pending.scope is None:
            metrics.skips.labels("semantic", decision.semantic_skip or "disabled").inc()
            return None
        pending.vector = await self.cache.embed(pending.scope.prompt, policy.embed_timeout_s)
        if pending.vector is None:
            return None
        judge = self._judge(ctx, policy.judge) if policy.judge.model else None
        hit = await self.cache.find_semantic(
            pending.scope_id, pending.scope.prompt, pending.vector, policy, decision.max_age_s, judge
        )
        (metrics.hits if hit is not None else metrics.misses).labels("semantic").inc()
        return ("semantic", hit) if hit is not None else None

    async def _count_regenerated(self, ctx: RequestContext, pending: Pending) -> None:
        """A caller that refuses the cache for the very request a semantic hit just answered most likely
        got a wrong answer: counted once, so an operator sees whether the tier pays off."""
        if pending.scope is None:
            return
        if await ctx.services.store.delete(_served_marker(pending)):
            self.metrics.semantic_regenerated.labels(ctx.tenant_label).inc()

    def _serve(self, ctx: RequestContext, tier: str, hit: Hit) -> None:
        entry = hit.entry
        ctx.reply = Reply(body=ctx.wire.with_zero_usage(entry.response), source="response_cache")
        ctx.usage = Usage()
        ctx.cost = Cost(usd=0.0, uncached_usd=entry.cost_usd)
        ctx.response_headers.update(
            {CACHE_HEADER: tier, SIMILARITY_HEADER: f"{hit.similarity:.4f}", AGE_HEADER: f"{entry.age_s():.0f}"}
        )
        ctx.services.metrics.saved.labels(ctx.tenant_label, ctx.model_label, "response_cache").inc(entry.cost_usd)

    async def on_response(self, ctx: RequestContext) -> None:
        pending = ctx.notes.get(self.name)
        if not isinstance(pending, Pending) or not pending.decision.store or not self._storable(ctx, pending):
            return
        assert ctx.response_body is not None
        decision, now = pending.decision, time.time()
        base = Entry(
            key=pending.exact_key,
            wire=ctx.wire.name,
            response=ctx.response_body,
            cost_usd=ctx.cost.usd if ctx.cost else 0.0,
            created=now,
            expires=now + decision.ttl_s,
        )
        try:
            if decision.exact:
                flight = pending.flight
                release = flight.release_with() if flight is not None else None
                # Its followers on this replica wake when the request ends: the lock goes with the entry.
                released = flight.released_remotely if flight is not None and release is not None else None
                # With the request's next state round trip (the accounting's, or its end's) where it can.
                riding = self.cache.ride_put(base, ctx.state, release, released)
                if not riding and await self.cache.put(base, release) and released is not None:
                    released()
                self.metrics.stores.labels("exact").inc()
            if decision.semantic and pending.scope is not None:
                entry = replace(
                    base,
                    key=pending.semantic_key,
                    prompt=pending.scope.prompt,
                    scope=pending.scope_id,
                    vector=pending.vector,
                )
                if pending.vector is None:
                    self.cache.put_later(entry, pending.scope.prompt)
                else:
                    await self.cache.put(entry)
                self.metrics.stores.labels("semantic").inc()
        except CacheUnavailable:
            self.metrics.skips.labels("store", "backend_unavailable").inc()

    def _storable(self, ctx: RequestContext, pending: Pending) -> bool:
        policy = ctx.policy.response_cache
        return (
            ctx.reply is not None
            and ctx.reply.source == "upstream"
            and ctx.response_body is not None
            # A fallback model's answer is not cached under the model the caller asked for.
            and ctx.route is not None
            and ctx.route.name == pending.place.model
            and storable(ctx.wire.name, ctx.response_body, policy.cache_tool_calls, gateway_written=ctx.gateway_written)
            and len(orjson.dumps(ctx.response_body)) <= policy.max_response_bytes
        )
