"""Budgets: spend limits of the tenant, the key and the agent session (USD and/or tokens per UTC day,
month or lifetime). Request path (after the session is known): the request holds its worst case on every
budget; a budget spent to its limit refuses it before anything goes upstream (402, `x-should-retry:
false`, the reset time), one whose rest is held by requests in flight asks it to retry shortly (429);
one past its soft fraction marks the answer (`x-cachegate-budget`). Response path (after usage): the
request's spend replaces its hold; a request that ends without an answer gives its hold back. Logic:
gateway/governance/budgets.py; docs/governance.md."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from gateway.alerts import budget_alert
from gateway.context import RequestContext
from gateway.errors import ErrorKind, GatewayError
from gateway.governance.budgets import Line, Metered, Standing, lines, metered, utc_now
from gateway.governance.estimate import worst_case
from gateway.governance.holdings import Holding, hold
from gateway.stages.base import Stage
from gateway.stages.usage import side_cost

log = logging.getLogger("cachegate.budget")
HEADER = "x-cachegate-budget"
HELD_RETRY_S = 1.0  # requests in flight settle within seconds; their holds then free or become spend


@dataclass(eq=False)
class BudgetNote:
    metered: Metered
    holding: Holding
    spent: list[float]  # each meter's counter when the request was admitted

    def spent_after(self, usd: float, tokens: int) -> list[float]:
        """The counters once this request's spend is added (what this replica knows of them)."""
        return [before + amount for before, amount in zip(self.spent, self.metered.amounts(usd, tokens), strict=True)]


def _lines(ctx: RequestContext) -> list[Line]:
    assert ctx.tenant is not None
    tenant, key = ctx.tenant, ctx.key
    scopes = [("tenant", tenant.name, tenant.limits.budgets)]
    if key is not None:
        scopes.append(("key", key.id, key.limits.budgets))
    if ctx.session_id is not None:
        session_budgets = [*tenant.limits.session_budgets, *(key.limits.session_budgets if key else [])]
        scopes.append(("session", ctx.session_id, session_budgets))
    return lines(tenant.name, scopes)


def _spent(over: Standing) -> GatewayError:
    resets = f"; it resets at {over.resets_at:%Y-%m-%d %H:%M} UTC" if over.resets_at else "; it does not reset"
    return GatewayError(
        ErrorKind.BUDGET,
        f"Budget exceeded: the {over.describe()}{resets}.",
        code="budget_exceeded",
        should_retry=False,
    )


def _held(standing: Standing) -> GatewayError:
    return GatewayError(
        ErrorKind.RATE_LIMIT,
        f"Budget nearly spent: the {standing.describe()}, and requests in flight hold the rest. "
        f"Retry in {HELD_RETRY_S:g} s.",
        code="budget_held",
        retry_after=HELD_RETRY_S,
    )


def _show(ctx: RequestContext, standings: list[Standing]) -> None:
    """Tenant and key budgets as gauges (session budgets would make one series per session)."""
    metrics = ctx.services.metrics
    for standing in standings:
        line = standing.line
        if line.scope == "session":
            continue
        labels = (ctx.tenant_label, "all" if line.scope == "tenant" else line.ident, line.budget.window)
        metrics.budget_used_ratio.labels(*labels).set(standing.used)
        if line.budget.usd is not None:
            metrics.budget_spent_usd.labels(*labels).set(standing.usd)
            metrics.budget_limit_usd.labels(*labels).set(line.budget.usd)


class BudgetStage(Stage):
    name = "budget"

    async def on_request(self, ctx: RequestContext) -> None:
        if ctx.tenant is None:
            return
        found = _lines(ctx)
        if not found:
            return
        now = utc_now()
        meters = metered(found, now)
        worst = worst_case(ctx)
        held, holding = await hold(ctx, meters.meters, meters.amounts(worst.usd, worst.tokens))
        current = meters.standings(held.spent, now)
        if holding is None:
            assert held.refused is not None
            standing = current[meters.owners[held.refused][0]]
            ctx.services.metrics.budget_refusals.labels(ctx.tenant.name, standing.line.scope).inc()
            if standing.used < 1.0:
                raise _held(standing)
            if standing.resets_at is not None:
                ctx.response_headers["x-cachegate-budget-reset"] = standing.resets_at.isoformat()
            ctx.services.alerts.emit(budget_alert("budget_hard", ctx.tenant.name, standing))
            raise _spent(standing)
        ctx.notes[self.name] = BudgetNote(meters, holding, held.spent)
        _show(ctx, current)
        soft = [s for s in current if s.used >= s.line.budget.soft_fraction]
        for standing in soft:
            ctx.services.alerts.emit(budget_alert("budget_soft", ctx.tenant.name, standing))
        if soft:
            worst_line = max(soft, key=lambda s: s.used)
            ctx.response_headers[HEADER] = f"soft; scope={worst_line.line.scope}; used={worst_line.used:.2f}"
            ctx.services.metrics.budget_soft.labels(ctx.tenant.name, worst_line.line.scope).inc()
            log.info(
                "budget soft limit: tenant=%s scope=%s used=%.2f",
                ctx.tenant.name,
                worst_line.line.scope,
                worst_line.used,
            )

    async def on_response(self, ctx: RequestContext) -> None:
        note = ctx.notes.get(self.name)
        if not isinstance(note, BudgetNote):
            return
        side = side_cost(ctx)
        usd = (ctx.cost.usd if ctx.cost is not None else 0.0) + (side.usd if side else 0.0)
        tokens = ctx.usage.total if ctx.usage is not None else 0
        await note.holding.settle(note.metered.amounts(usd, tokens))
        _show(ctx, note.metered.standings(note.spent_after(usd, tokens), utc_now()))
