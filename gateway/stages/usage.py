"""Usage: normalise the provider's token counts, price them, and report cost and prompt-cache savings.

`x-cachegate-cost-usd` is everything this request cost the tenant: its answer plus any compaction
summary written on its way (charged by the compaction stage; its share is also in
`x-cachegate-compaction-summary-cost-usd`). A cost priced at the fallback rates (a model priced nowhere)
also sets `x-cachegate-cost-basis: fallback`.
"""

from __future__ import annotations

from gateway.context import RequestContext
from gateway.governance.estimate import CUT_SHORT, generated
from gateway.stages.base import Stage
from gateway.usage import Cost, Price, Usage, route_price
from gateway.usage.served import served_route
from gateway.usage.spend import record_spend
from gateway.wire.server_tools import MODEL_CHAIN_FIELDS

SIDE_COST_NOTE = "side_cost"  # ctx.notes: what calls the gateway made for this request cost (summary, judge)


def format_usd(value: float) -> str:
    return f"{value:.10f}".rstrip("0").rstrip(".") or "0"


COST_FIELDS = {  # the cost headers, and their names in a stream's final usage event (`usage.cachegate`)
    "x-cachegate-cost-usd": ("cost_usd", float),
    "x-cachegate-saved-usd": ("saved_usd", float),
    "x-cachegate-cache-read-tokens": ("cache_read_tokens", int),
    "x-cachegate-cache-write-tokens": ("cache_write_tokens", int),
}


def stream_cost(ctx: RequestContext) -> dict[str, float | int]:
    """The cost headers this stage set, as the fields a stream's final usage event carries."""
    fields: dict[str, float | int] = {}
    for header, (name, kind) in COST_FIELDS.items():
        value = ctx.response_headers.get(header)
        if value is not None:
            fields[name] = kind(value)
    return fields


def side_cost(ctx: RequestContext) -> Cost | None:
    cost = ctx.notes.get(SIDE_COST_NOTE)
    return cost if isinstance(cost, Cost) else None


def charge_side_call(ctx: RequestContext, model: str, usage: Usage, cost: Cost, price: Price) -> None:
    """A call the gateway made for this request (a compaction summary, a semantic judge): in the tenant's
    spend metrics under the route that answered, this request's x-cachegate-cost-usd and its budgets."""
    record_spend(ctx.services.metrics, ctx.tenant_label, model, usage, cost, price)
    earlier = side_cost(ctx)
    if earlier is not None:
        cost = Cost(
            usd=earlier.usd + cost.usd,
            uncached_usd=earlier.uncached_usd + cost.uncached_usd,
            estimated=earlier.estimated or cost.estimated,
        )
    ctx.notes[SIDE_COST_NOTE] = cost


class UsageStage(Stage):
    name = "usage"

    async def on_response(self, ctx: RequestContext) -> None:
        if ctx.response_body is None or ctx.route is None:
            return
        if ctx.reply is not None and ctx.reply.source == "upstream":
            ctx.usage = ctx.wire.usage(ctx.response_body)
            if not ctx.usage.total or ctx.notes.get(CUT_SHORT):  # the provider's count never came: estimate it
                ctx.usage = generated(ctx, ctx.usage)
            chain = ctx.body.get(MODEL_CHAIN_FIELDS.get(ctx.wire.name, ""))
            answered = served_route(ctx.route, chain, ctx.response_body, ctx.services.router.settings.models)
            price = route_price(answered)
            ctx.cost = Cost.of(ctx.usage, price)
            record_spend(ctx.services.metrics, ctx.tenant_label, ctx.model_label, ctx.usage, ctx.cost, price)
            ctx.services.router.pools.metrics.answered(ctx.notes.get("deployment"), ctx.usage)
        side = side_cost(ctx)
        if ctx.usage is not None and ctx.cost is not None:
            ctx.response_headers.update(
                {
                    "x-cachegate-cost-usd": format_usd(ctx.cost.usd + (side.usd if side else 0.0)),
                    "x-cachegate-saved-usd": format_usd(ctx.cost.saved_usd),
                    "x-cachegate-cache-read-tokens": str(ctx.usage.cache_read),
                    "x-cachegate-cache-write-tokens": str(ctx.usage.cache_write),
                }
            )
        elif side is not None:
            ctx.response_headers["x-cachegate-cost-usd"] = format_usd(side.usd)
        if (ctx.cost is not None and ctx.cost.estimated) or (side is not None and side.estimated):
            ctx.response_headers["x-cachegate-cost-basis"] = "fallback"
