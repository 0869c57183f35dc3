"""Usage: normalise the provider's token counts, price them, and report cost and prompt-cache savings."""

from __future__ import annotations

from gateway.context import RequestContext
from gateway.stages.base import Stage
from gateway.usage import Cost, price_for


def format_usd(value: float) -> str:
    return f"{value:.10f}".rstrip("0").rstrip(".") or "0"


class UsageStage(Stage):
    name = "usage"

    async def on_response(self, ctx: RequestContext) -> None:
        if ctx.response_body is None or ctx.route is None:
            return
        if ctx.reply is not None and ctx.reply.source == "upstream":
            ctx.usage = ctx.wire.usage(ctx.response_body)
            price = price_for(ctx.route.pricing_model or ctx.route.litellm_model)
            ctx.cost = Cost.of(ctx.usage, price)
            self._record(ctx, price.cache_write_5m - price.input, price.cache_write_1h - price.input)
        if ctx.usage is not None and ctx.cost is not None:
            ctx.response_headers.update(
                {
                    "x-cachegate-cost-usd": format_usd(ctx.cost.usd),
                    "x-cachegate-saved-usd": format_usd(ctx.cost.saved_usd),
                    "x-cachegate-cache-read-tokens": str(ctx.usage.cache_read),
                    "x-cachegate-cache-write-tokens": str(ctx.usage.cache_write),
                }
            )

    def _record(self, ctx: RequestContext, premium_5m: float, premium_1h: float) -> None:
        assert ctx.usage is not None and ctx.cost is not None
        metrics, tenant, model = ctx.services.metrics, ctx.tenant_label, ctx.model_label
        for kind in ("uncached_input", "cache_read", "cache_write_5m", "cache_write_1h", "output"):
            count = getattr(ctx.usage, kind)
            if count:
                metrics.tokens.labels(tenant, model, kind).inc(count)
        metrics.cost.labels(tenant, model).inc(ctx.cost.usd)
        metrics.uncached_cost.labels(tenant, model).inc(ctx.cost.uncached_usd)
        metrics.saved.labels(tenant, model, "prompt_cache").inc(ctx.cost.saved_usd)
        premium = ctx.usage.cache_write_5m * premium_5m + ctx.usage.cache_write_1h * premium_1h
        if premium > 0:
            metrics.write_premium.labels(tenant, model).inc(premium)
