"""Rate limits: requests per minute and concurrent requests of the tenant and of the key, before anything
else is done for the request (right after authentication). Over a limit: 429 with `retry-after`, in the
caller's API shape. Logic: gateway/governance/rate_limits.py; docs/governance.md."""

from __future__ import annotations

from gateway.context import RequestContext
from gateway.errors import ErrorKind, GatewayError
from gateway.governance.rate_limits import Scope, concurrency_windows, rate_windows, scopes
from gateway.stages.base import Stage
from gateway.state.base import Window


def _describe(scope: Scope, window: Window, rate: bool) -> str:
    what = f"{window.limit} requests per minute" if rate else f"{window.limit} concurrent requests"
    return f"this {scope.name}'s limit of {what}"


class RateLimitStage(Stage):
    name = "rate_limit"

    async def on_request(self, ctx: RequestContext) -> None:
        if ctx.tenant is None:
            return
        found = scopes(ctx.tenant, ctx.key)
        rate, concurrent = rate_windows(found), concurrency_windows(found)
        windows = [window for _, window in rate + concurrent]
        if not windows:
            return
        store = ctx.services.store
        wait = await store.admit(windows, ctx.request_id)
        if wait > 0:
            ctx.services.metrics.rate_limited.labels(ctx.tenant.name).inc()
            described = [_describe(s, w, True) for s, w in rate] + [_describe(s, w, False) for s, w in concurrent]
            limits = "; ".join(described)
            raise GatewayError(
                ErrorKind.RATE_LIMIT,
                f"Rate limit reached ({limits}). Retry in {wait:.1f} s.",
                code="rate_limit_exceeded",
                retry_after=wait,
            )
        if concurrent:
            held = [window.key for _, window in concurrent]
            ctx.finishers.append(lambda: store.leave(held, ctx.request_id))
