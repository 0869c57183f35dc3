"""The upstream call: always answers (or raises the provider's error in the caller's shape)."""

from __future__ import annotations

import time

from gateway.context import Reply, RequestContext
from gateway.stages.base import Stage
from gateway.upstream.errors import UpstreamError


class UpstreamStage(Stage):
    name = "upstream"
    fail_closed = True

    async def on_request(self, ctx: RequestContext) -> None:
        assert ctx.route is not None
        headers = {k: v for k, v in ctx.headers.items() if k.startswith(("anthropic-", "openai-"))}
        started = time.perf_counter()
        try:
            result = await ctx.services.router.call(
                ctx.wire.name,
                ctx.route,
                ctx.body,
                headers,
                stream=ctx.stream,
                session=ctx.session_key,
                fallbacks=ctx.tenant.fallbacks.get(ctx.route.name) if ctx.tenant else None,
            )
        except UpstreamError as exc:
            raise exc.to_gateway_error() from exc
        finally:
            ctx.timings.upstream_s = time.perf_counter() - started
        ctx.route = result.route
        ctx.notes["upstream_path"] = result.path
        if result.placement is not None:
            ctx.notes["deployment"] = result.placement.record()
        ctx.reply = Reply(body=result.body, events=result.events, source="upstream", provider=result.route.provider)
