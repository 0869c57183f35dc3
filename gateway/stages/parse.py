"""Parse: read the body (size limit) and validate it in the caller's API shape. Runs after auth so
unauthenticated callers learn nothing about the request format."""

from __future__ import annotations

from gateway.api.body import parse_json
from gateway.context import RequestContext
from gateway.history.view import RawHistory
from gateway.stages.base import Stage
from gateway.wire.limits import validate_within_limits


class ParseStage(Stage):
    name = "parse"
    fail_closed = True

    async def on_request(self, ctx: RequestContext) -> None:
        assert ctx.read_body is not None
        raw = await ctx.read_body()
        body = await parse_json(raw)
        await validate_within_limits(ctx.wire, body)
        ctx.body = body
        ctx.raw_history = RawHistory.of(raw, body, ctx.wire.history_field)
