"""Runs the stages over one RequestContext (order: see gateway/app.py build_pipeline)."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from gateway.context import RequestContext
from gateway.errors import GatewayError
from gateway.logs import log_failure
from gateway.metrics import GatewayMetrics
from gateway.state import Op

if TYPE_CHECKING:  # gateway.stages builds the pipeline: importing it here would be a cycle
    from gateway.stages.base import Stage

log = logging.getLogger("cachegate.pipeline")


class Pipeline:
    def __init__(self, request_stages: list[Stage], response_stages: list[Stage], metrics: GatewayMetrics) -> None:
        self.request_stages = request_stages
        self.response_stages = response_stages
        self.metrics = metrics

    async def run_request(self, ctx: RequestContext) -> None:
        """Stages in order until one answers (the upstream stage always does)."""
        planned = False
        for index, stage in enumerate(self.request_stages):
            if ctx.reply is not None:
                return
            if not planned:
                planned = self._read_ahead(ctx, index)
            await self._guarded(stage, stage.on_request, ctx, "request")

    def _read_ahead(self, ctx: RequestContext, index: int) -> bool:
        """At the first stage that names state reads it will make, declare those of every stage from there
        on (one round trip carries them, gateway/state/request.py); whether that stage was reached."""
        reads = _reads(self.request_stages[index], ctx)
        if not reads:
            return False
        for stage in self.request_stages[index + 1 :]:
            reads.extend(_reads(stage, ctx))
        ctx.state.expect(reads)
        for stage in self.request_stages[index:]:
            _ride(stage, ctx)
        return True

    async def run_response(self, ctx: RequestContext) -> None:
        for stage in self.response_stages:
            await self._guarded(stage, stage.on_response, ctx, "response")
        state = ctx.used_state
        if state is not None and state.pending:  # the deferred writes, before the client's last bytes
            try:
                await state.flush()
            except Exception:  # the request's finisher tries again
                log_failure(log, "the request's state writes failed")

    async def _guarded(
        self, stage: Stage, hook: Callable[[RequestContext], Awaitable[None]], ctx: RequestContext, side: str
    ) -> None:
        started = time.perf_counter()
        try:
            await hook(ctx)
        except GatewayError:
            raise
        except Exception:
            if stage.fail_closed:
                raise
            # Fail open: the request goes on as if the stage were off.
            self.metrics.stage_failures.labels(stage.name).inc()
            log_failure(log, "stage %s failed; continuing without it", stage.name)
        finally:
            ctx.timings.stages.append((stage.name, side, started, time.perf_counter()))


def _ride(stage: Stage, ctx: RequestContext) -> None:
    try:
        stage.rides_ahead(ctx)
    except Exception:  # the stage makes its own round trip when it runs
        log_failure(log, "stage %s could not ride the read-ahead", stage.name)


def _reads(stage: Stage, ctx: RequestContext) -> list[Op]:
    try:
        return list(stage.reads_ahead(ctx))
    except Exception:  # the stage reads for itself when it runs (and fails open then)
        log_failure(log, "stage %s could not name its reads", stage.name)
        return []
