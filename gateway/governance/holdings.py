"""A request's holds on amount meters (budgets, tokens per minute), settled exactly once: by its usage
when its answer is complete, else given back when the request ends (failed, cancelled, client gone)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gateway.context import RequestContext
from gateway.state.base import Held, Meter, StateStore


@dataclass(eq=False)
class Holding:
    store: StateStore
    meters: list[Meter]
    holder: str
    settled: bool = False

    async def settle(self, amounts: Sequence[float]) -> None:
        if self.settled:
            return
        self.settled = True
        await self.store.settle(self.meters, self.holder, amounts)

    async def release(self) -> None:
        await self.settle([0.0] * len(self.meters))


async def hold(ctx: RequestContext, meters: list[Meter], amounts: Sequence[float]) -> tuple[Held, Holding | None]:
    """Hold `amounts` for the request; when taken, the holding is given back at the request's end unless
    it was settled before."""
    store = ctx.services.store
    held = await store.hold(meters, ctx.request_id, amounts)
    if held.refused is not None:
        return held, None
    holding = Holding(store, meters, ctx.request_id)
    ctx.finishers.append(holding.release)
    return held, holding
