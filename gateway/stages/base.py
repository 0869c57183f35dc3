"""A pipeline stage: one concern of the request path, one module."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from gateway.context import RequestContext
from gateway.state import Op


class Stage:
    """Override what the stage needs.

    `on_request` runs before the upstream call, in pipeline order, and may answer by setting
    `ctx.reply`. `on_response` runs once the final response is known (streams: after the last event)
    and sees `ctx.response_body`. A stage that raises is skipped and counted (fail open) unless it
    sets `fail_closed` — authentication does. `reads_ahead` names the state reads `on_request` will make
    (gateway/state/request.py): asked of every later stage when the first stage that names some is
    reached, so that they all travel in one round trip; `rides_ahead`, asked of the same stages then,
    may add commands of the stage's own Redis client to that trip (`ctx.state.ride`).
    """

    name: ClassVar[str] = "stage"
    fail_closed: ClassVar[bool] = False

    async def on_request(self, ctx: RequestContext) -> None:
        return None

    async def on_response(self, ctx: RequestContext) -> None:
        return None

    def reads_ahead(self, ctx: RequestContext) -> Sequence[Op]:
        return ()

    def rides_ahead(self, ctx: RequestContext) -> None:
        return None
