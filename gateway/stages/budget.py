"""Budgets: spend limits of the tenant, the key and the agent session (USD and/or tokens per UTC day,
month or lifetime). Request path (after the session is known): a budget spent to its limit refuses the
request before anything goes upstream (402, `x-should-retry: false`, the reset time); one past its soft
fraction marks the answer (`x-cachegate-budget`). Response path (after usage): the request's spend is
added. Logic: gateway/governance/budgets.py; docs/governance.md."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from gateway.context import RequestContext
from gateway.errors import ErrorKind, GatewayError
from gateway.governance.budgets import Line, Standing, charge, lines, standings, utc_now
from gateway.stages.base import Stage
from gateway.stages.usage import summary_cost

log = logging.getLogger("cachegate.budget")
HEADER = "x-cachegate-budget"


@dataclass(eq=False)
class BudgetNote:
    lines: list[Line] = field(default_factory=list)


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


def _refusal(over: Standing) -> GatewayError:
    resets = f"; it resets at {over.resets_at:%Y-%m-%d %H:%M} UTC" if over.resets_at else "; it does not reset"
    return GatewayError(
        ErrorKind.BUDGET,
        f"Budget exceeded: the {over.describe()}{resets}.",
        code="budget_exceeded",
        should_retry=False,
    )


class BudgetStage(Stage):
    name = "budget"

    async def on_request(self, ctx: RequestContext) -> None:
        if ctx.tenant is None:
            return
        found = _lines(ctx)
        if not found:
            return
        now = utc_now()
        current = await standings(ctx.services.store, found, now)
        ctx.notes[self.name] = BudgetNote(found)
        over = [s for s in current if s.used >= 1.0]
        if over:
            ctx.services.metrics.budget_refusals.labels(ctx.tenant.name, over[0].line.scope).inc()
            if over[0].resets_at is not None:
                ctx.response_headers["x-cachegate-budget-reset"] = over[0].resets_at.isoformat()
            raise _refusal(over[0])
        soft = [s for s in current if s.used >= s.line.budget.soft_fraction]
        if soft:
            worst = max(soft, key=lambda s: s.used)
            ctx.response_headers[HEADER] = f"soft; scope={worst.line.scope}; used={worst.used:.2f}"
            ctx.services.metrics.budget_soft.labels(ctx.tenant.name, worst.line.scope).inc()
            log.info("budget soft limit: tenant=%s scope=%s used=%.2f", ctx.tenant.name, worst.line.scope, worst.used)

    async def on_response(self, ctx: RequestContext) -> None:
        note = ctx.notes.get(self.name)
        if not isinstance(note, BudgetNote) or ctx.cost is None:
            return
        summary = summary_cost(ctx)
        usd = ctx.cost.usd + (summary.usd if summary else 0.0)
        tokens = ctx.usage.total if ctx.usage is not None else 0
        await charge(ctx.services.store, note.lines, usd, tokens, utc_now())
