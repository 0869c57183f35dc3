"""Tokens per minute of the tenant and of the key, once the model is known (after routing): the request
holds its worst case (its input and its output cap, gateway/governance/estimate.py) in the last minute's
window and is refused with 429 and `retry-after` when the window is full; when its answer is complete
the hold becomes its actual tokens. Logic: gateway/governance/rate_limits.py; docs/governance.md."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.context import RequestContext
from gateway.errors import ErrorKind, GatewayError
from gateway.governance.estimate import worst_case
from gateway.governance.holdings import Holding, hold
from gateway.governance.rate_limits import scopes, token_meters
from gateway.stages.base import Stage


@dataclass(eq=False)
class TokenRateNote:
    holding: Holding


class TokenRateStage(Stage):
    name = "token_rate"

    async def on_request(self, ctx: RequestContext) -> None:
        if ctx.tenant is None:
            return
        found = scopes(ctx.tenant, ctx.key)
        meters = token_meters(found)
        if not meters:
            return
        tokens = worst_case(ctx).tokens
        held, holding = await hold(ctx, [meter for _, meter in meters], [tokens] * len(meters))
        if holding is None:
            assert held.refused is not None
            scope, meter = meters[held.refused]
            ctx.services.metrics.rate_limited.labels(ctx.tenant.name).inc()
            wait = max(held.wait_s, 0.1)
            raise GatewayError(
                ErrorKind.RATE_LIMIT,
                f"Rate limit reached (this {scope.name}'s limit of {meter.limit:g} tokens per minute; this "
                f"request may use up to {tokens} tokens). Retry in {wait:.1f} s.",
                code="rate_limit_exceeded",
                retry_after=wait,
            )
        ctx.notes[self.name] = TokenRateNote(holding)

    async def on_response(self, ctx: RequestContext) -> None:
        note = ctx.notes.get(self.name)
        if isinstance(note, TokenRateNote):
            tokens = ctx.usage.total if ctx.usage is not None else 0
            await note.holding.settle([tokens] * len(note.holding.meters))
