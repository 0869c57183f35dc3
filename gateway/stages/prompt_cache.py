"""Prompt-cache optimizer stages: the request side (right before upstream) and the accounting (after
usage). Logic: gateway/prompt_cache/. Docs: docs/prompt-cache.md."""

from __future__ import annotations

import time
from collections.abc import Sequence

from gateway.context import RequestContext
from gateway.pacing import Pacer, finish_paced
from gateway.prompt_cache import CacheTotals, write_premium_usd
from gateway.prompt_cache.metrics import PromptCacheMetrics, prompt_cache_metrics
from gateway.prompt_cache.optimizer import Outcome, optimize_steps
from gateway.prompt_cache.session import (
    SessionState,
    add_totals,
    line_key,
    load_raw,
    state_read,
    state_write,
)
from gateway.prompt_cache.shapes import SHAPES
from gateway.prompt_cache.turns import Turn, Turns, turns
from gateway.services import Services
from gateway.stages.base import Stage
from gateway.stages.usage import format_usd
from gateway.state import Op
from gateway.usage import Cost, Price, Usage, route_price


def _ratio(value: float) -> str:
    return f"{value:.4f}"


class PromptCacheStage(Stage):
    """Rewrites ctx.body for the provider's cache (on a copy, swapped in only when everything worked).

    The optimizer runs paced: a history of 100,000 messages takes a few hundred ms of work, handed
    back to the event loop every few ms so that other requests are not held up."""

    name = "prompt_cache"

    def __init__(self, services: Services, known: Turns = turns) -> None:
        self.metrics = prompt_cache_metrics(services)
        self.turns = known  # each line's previous request in this process: saves work only

    def reads_ahead(self, ctx: RequestContext) -> Sequence[Op]:
        line = self._line(ctx)
        return [state_read(line)] if line else []

    def _line(self, ctx: RequestContext) -> str | None:
        """The session line whose state the request reads (None: the stage does nothing or keeps no state)."""
        config = ctx.policy.prompt_cache
        if not config.enabled or ctx.route is None or ctx.wire.name not in SHAPES or ctx.session_key is None:
            return None
        return line_key(ctx.session_key, ctx.route.name)

    async def on_request(self, ctx: RequestContext) -> None:
        config = ctx.policy.prompt_cache
        if not config.enabled or ctx.route is None or ctx.wire.name not in SHAPES:
            return
        try:
            session_key, line, wire = ctx.session_key, self._line(ctx), ctx.wire.name
            turn = self.turns.get(line) if line else None
            previous = SessionState()
            if line:
                raw = await load_raw(ctx.state, line)
                known = turn.state_for(raw) if turn is not None and raw else None
                previous = known if known is not None else SessionState.from_bytes(raw) if raw else previous
            now, view = time.time(), ctx.history
            steps = optimize_steps(ctx.body, wire, ctx.route, config, previous, session_key, now, view, turn)
            outcome = await finish_paced(steps, Pacer())
            if line:  # sent with the request's next state batch (its response's totals) or at its end
                raw = outcome.state.to_bytes()
                ctx.state.defer([state_write(line, raw, config.session_state_ttl_s)])
                self.turns.put(line, ctx.tenant_label, Turn(wire, outcome.prefix, raw, outcome.state))
        except Exception:
            # The pipeline fails open (the body was never touched) and counts the stage failure.
            self.metrics.failures.labels("request").inc()
            raise
        ctx.body = outcome.body
        headers = outcome.headers()
        ctx.response_headers.update(headers)
        ctx.notes["prompt_cache"] = headers
        _record(self.metrics, ctx.tenant_label, outcome)


def _record(metrics: PromptCacheMetrics, tenant: str, outcome: Outcome) -> None:
    child = metrics.child
    child(metrics.requests, tenant, outcome.style.value).inc()
    if outcome.prefix_break.is_break:
        child(metrics.prefix_breaks, tenant, outcome.prefix_break.cause).inc()
    for kind in outcome.volatile:
        child(metrics.volatile, tenant, kind).inc()
    if outcome.relocated:
        child(metrics.relocations, tenant).inc()
    if outcome.skipped:
        child(metrics.skipped, tenant, outcome.skipped).inc()
    for placement in outcome.placements:
        child(metrics.breakpoints, tenant, placement.kind).inc()
    if outcome.client_marks:
        child(metrics.breakpoints, tenant, "client").inc(outcome.client_marks)
    if outcome.key_action:
        child(metrics.keys, tenant, outcome.key_action).inc()


class PromptCacheAccountingStage(Stage):
    """Hit ratio, writes and net savings per session (state store) and per tenant (metrics)."""

    name = "prompt_cache_accounting"

    def __init__(self, services: Services) -> None:
        self.metrics = prompt_cache_metrics(services)
        self.tenants: dict[str, CacheTotals] = {}

    async def on_response(self, ctx: RequestContext) -> None:
        usage, cost, route = ctx.usage, ctx.cost, ctx.route
        if usage is None or cost is None or route is None or ctx.reply is None or ctx.reply.source != "upstream":
            return
        if not ctx.policy.prompt_cache.enabled:
            return
        try:
            price = route_price(route)
            tenant = ctx.tenant_label
            totals = self.tenants.setdefault(tenant, CacheTotals())
            totals.add(usage, cost, price)
            metrics, child = self.metrics, self.metrics.child
            for kind, count in (
                ("uncached", usage.uncached_input),
                ("read", usage.cache_read),
                ("write", usage.cache_write),
            ):
                if count:
                    child(metrics.tokens, tenant, kind).inc(count)
            child(metrics.hit_ratio, tenant).set(totals.hit_ratio)
            child(metrics.savings, tenant).set(totals.saved_usd)
            premium = write_premium_usd(usage, price)
            if premium > 0:
                child(metrics.write_premium, tenant).inc(premium)
            ctx.response_headers["x-cachegate-prompt-cache-hit-ratio"] = _ratio(
                usage.cache_read / usage.input_total if usage.input_total else 0.0
            )
            if ctx.session_key:
                await self._session(ctx, ctx.session_key, usage, cost, price)
        except Exception:
            self.metrics.failures.labels("accounting").inc()
            raise

    async def _session(self, ctx: RequestContext, session_key: str, usage: Usage, cost: Cost, price: Price) -> None:
        step = CacheTotals()
        step.add(usage, cost, price)
        session = await add_totals(ctx.state, session_key, step, ctx.policy.prompt_cache.session_state_ttl_s)
        ctx.response_headers.update(
            {
                "x-cachegate-session-cache-hit-ratio": _ratio(session.hit_ratio),
                "x-cachegate-session-cache-write-tokens": str(session.write),
                "x-cachegate-session-saved-usd": format_usd(session.saved_usd),
            }
        )
