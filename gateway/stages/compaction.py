"""Context compaction: rewrites long histories (deterministically, fail-open) before they go upstream.

Request: replay the session's record, compact old tool results, summarize only when it must
(gateway/compaction/engine.py). Response: answer the model's `retrieve_context` calls, if offered.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial
from typing import Any

from gateway.compaction import CompactionMetrics, Originals, Outcome, Run
from gateway.compaction.layouts import LAYOUTS
from gateway.compaction.memo import record_read
from gateway.compaction.reference import RETRIEVAL_TOOL
from gateway.compaction.retrieval import answer_retrievals, with_tool
from gateway.compaction.summarizer import Written
from gateway.compaction.tokens import counter_for
from gateway.context import RequestContext
from gateway.governance.estimate import CUT_SHORT
from gateway.guard.state import GuardSessions
from gateway.services import Services
from gateway.stages.base import Stage
from gateway.stages.guard import GuardNote
from gateway.stages.usage import charge_side_call, format_usd
from gateway.state import Op

log = logging.getLogger("cachegate.compaction")
TOOL_NOTE = "compaction_retrieval_tool"
CHILDREN_MAX = 4096  # labelled metric children remembered (routes x actions: far fewer in practice)


async def _remember_provider_count(ctx: RequestContext, run: Run) -> None:
    """At the request's end: the provider's input tokens, when it counted them (answered upstream, its
    usage came whole; an answer from a cache or an estimate of a count that never came is none)."""
    if ctx.reply is None or ctx.reply.source != "upstream" or ctx.response_body is None or ctx.notes.get(CUT_SHORT):
        return
    tokens = ctx.wire.usage(ctx.response_body).input_total
    if tokens > 0:
        run.remember_provider_count(tokens)


class CompactionStage(Stage):
    name = "compaction"

    def __init__(self, services: Services) -> None:
        self.metrics = CompactionMetrics(services.metrics.registry)
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}
        services.extras[self.name] = self.metrics
        for route in services.settings.models:  # loading an encoding takes ~0.1 s: not on a request
            counter_for(route.provider, route.model)

    def _on(self, ctx: RequestContext) -> bool:
        return ctx.policy.compaction.enabled and ctx.route is not None and ctx.wire.name in LAYOUTS

    def reads_ahead(self, ctx: RequestContext) -> Sequence[Op]:
        """The session's record, in the request's first state round trip (clients without a session id:
        the run names their session from the history, and reads it then)."""
        return [record_read(ctx.session_key)] if self._on(ctx) and ctx.session_key else []

    async def on_request(self, ctx: RequestContext) -> None:
        if not self._on(ctx):
            return
        config = ctx.policy.compaction
        original = ctx.body
        # Streams are relayed as they come: the gateway could not answer the tool there.
        offered = config.retrieval_tool and not ctx.stream and bool(original.get("tools"))
        if offered:
            ctx.body = with_tool(original, LAYOUTS[ctx.wire.name])
        run = Run(ctx, config)
        try:
            outcome = await run.execute()
        except Exception:
            # Fail open: the request goes upstream exactly as the client sent it.
            log.exception("compaction failed; forwarding the request unchanged")
            ctx.body = original
            self.metrics.failures.labels("error").inc()
            ctx.response_headers["x-cachegate-compaction"] = "failed-open"
            return
        if outcome.body is not None:
            ctx.body = outcome.body
        elif run.fixed_known:  # the provider counts the client's history: the next turn's bound (provider_count.py)
            ctx.finishers.append(partial(_remember_provider_count, ctx, run))
        ctx.notes[TOOL_NOTE] = offered
        if outcome.summary_call is not None:
            await self._charge(ctx, outcome.summary_call)
        self._report(ctx, outcome)

    async def _charge(self, ctx: RequestContext, written: Written) -> None:
        """The tenant and the session pay for the summary like for any call: spend metrics (under the
        summarizer's route), the guard's session cost (so max_cost_usd budgets count it) and this
        request's x-cachegate-cost-usd (usage stage). Charged now: the summary is paid even if the
        request fails later."""
        model = written.route.name
        charge_side_call(ctx, model, written.usage, written.cost, written.price)
        ctx.services.metrics.summary_cost.labels(ctx.tenant_label, model).inc(written.cost.usd)
        note, sessions = ctx.notes.get("guard"), ctx.services.extras.get("guard")
        if isinstance(note, GuardNote) and note.prefix is not None and isinstance(sessions, GuardSessions):
            try:
                await sessions.usage(note.prefix, written.usage.total, written.cost.usd)
            except Exception:  # the metrics have it; the session's budget misses this one summary
                log.exception("could not charge the summary to the session")
                self.metrics.failures.labels("charge").inc()

    def _child(self, metric: Any, *labels: str) -> Any:
        """The metric's child for these labels, looked up once: `labels()` checks and locks on every call,
        a fixed cost on every request (the labels are route names and a few fixed values)."""
        key = (id(metric), labels)  # the metrics live as long as the stage
        child = self._children.get(key)
        if child is None:
            if len(self._children) >= CHILDREN_MAX:
                self._children.clear()
            child = self._children[key] = metric.labels(*labels)
        return child

    def _report(self, ctx: RequestContext, outcome: Outcome) -> None:
        model, m, child = ctx.model_label, self.metrics, self._child
        child(m.requests, model, outcome.action).inc()
        if not outcome.counted:
            ctx.response_headers["x-cachegate-compaction"] = outcome.action
            return
        child(m.tokens, model, "before").inc(outcome.tokens_before)
        child(m.tokens, model, "after").inc(outcome.tokens_after)
        if outcome.compacted:
            child(m.compactions, model).inc()
            child(m.compacted_results, model).inc(outcome.compacted)
        if outcome.summary is not None:
            child(m.summaries, model, outcome.summary).inc()
        if outcome.summary_cost_usd:
            child(m.summary_cost, model).inc(outcome.summary_cost_usd)
        if outcome.compacted or outcome.action == "summarized":
            child(m.invalidated, model).observe(outcome.invalidated)
        if outcome.tokens_after > outcome.window:
            child(m.over_window, model).inc()
        headers = {
            "x-cachegate-compaction": outcome.action,
            "x-cachegate-compaction-tokens-before": str(outcome.tokens_before),
            "x-cachegate-compaction-tokens-after": str(outcome.tokens_after),
            "x-cachegate-compaction-invalidated-tokens": str(outcome.invalidated),
        }
        if outcome.summary is not None:
            headers["x-cachegate-compaction-summary"] = outcome.summary
            headers["x-cachegate-compaction-summary-cost-usd"] = format_usd(outcome.summary_cost_usd)
        ctx.response_headers.update(headers)

    async def on_response(self, ctx: RequestContext) -> None:
        if not ctx.notes.get(TOOL_NOTE) or ctx.response_body is None or ctx.reply is None:
            return
        if ctx.reply.source != "upstream" or ctx.reply.events is not None:
            return
        config = ctx.policy.compaction
        try:
            ctx.response_body = await answer_retrievals(
                ctx, Originals(ctx.services.store), config.max_retrievals, self.metrics.retrieval
            )
        except Exception:
            # The client must never see the gateway's own tool: answer with the reply minus its calls.
            log.exception("retrieve_context round failed; returning the reply without the gateway's tool")
            self.metrics.failures.labels("retrieval").inc()
            ctx.response_body = LAYOUTS[ctx.wire.name].without_tool(ctx.response_body, RETRIEVAL_TOOL)
