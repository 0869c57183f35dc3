"""A pipeline stage: one concern of the request path, one module."""

from __future__ import annotations

from typing import ClassVar

from gateway.context import RequestContext


class Stage:
    """Override what the stage needs.

    `on_request` runs before the upstream call, in pipeline order, and may answer by setting
    `ctx.reply`. `on_response` runs once the final response is known (streams: after the last event)
    and sees `ctx.response_body`. A stage that raises is skipped and counted (fail open) unless it
    sets `fail_closed` — authentication does.
    """

    name: ClassVar[str] = "stage"
    fail_closed: ClassVar[bool] = False

    async def on_request(self, ctx: RequestContext) -> None:
        return None

    async def on_response(self, ctx: RequestContext) -> None:
        return None
