"""Telemetry: the request's metrics and one log line (never a key, a prompt or a response).

Every request gets exactly one `cachegate_requests` sample, one log line, one request record
(gateway/request_log.py) and, when tracing is on, its spans (gateway/tracing.py), failures included:
`record(ctx)` from this stage for an answer, `record(ctx, error)` from the proxy when the request ends in
an error (before or after the stages ran, or mid-stream). Whichever comes first counts; later calls are
no-ops. Labels stay bounded: tenant 'unknown' before authentication, model 'unknown' before routing,
status 'ok' or the HTTP status of the error.
"""

from __future__ import annotations

import logging
import time

from gateway.context import RequestContext
from gateway.error_classes import error_class
from gateway.errors import GatewayError
from gateway.request_log import build
from gateway.stages.base import Stage
from gateway.stages.usage import side_cost

log = logging.getLogger("cachegate.request")
RECORDED = "telemetry"  # ctx.notes key: this request's metric sample and log line are done


class TelemetryStage(Stage):
    name = "telemetry"

    async def on_response(self, ctx: RequestContext) -> None:
        metrics = ctx.services.metrics
        total = time.perf_counter() - ctx.timings.start
        metrics.latency.labels(ctx.wire.name, ctx.model_label).observe(total)
        if ctx.timings.first_byte is not None:
            metrics.ttft.labels(ctx.wire.name, ctx.model_label).observe(ctx.timings.first_byte - ctx.timings.start)
            overhead = ctx.timings.first_byte - ctx.timings.start - ctx.timings.upstream_s
        else:
            overhead = total - ctx.timings.upstream_s
        metrics.overhead.labels(ctx.wire.name).observe(max(overhead, 0.0))
        if ctx.tenant is not None:  # the tenant's cache-hit ratio, watched for its alert (gateway/alerts/)
            cached = ctx.reply is not None and ctx.reply.source == "response_cache"
            ctx.services.alerts.answered(ctx.tenant.name, cached or bool(ctx.usage and ctx.usage.cache_read))
        record(ctx)


def record(ctx: RequestContext, error: GatewayError | None = None, *, api: str | None = None) -> None:
    """Count the request and log its one line (once per request: later calls do nothing). `api`: the
    metric's API label when it is not the wire's (the extra endpoints: embeddings, completions ...)."""
    if ctx.notes.get(RECORDED):
        return
    ctx.notes[RECORDED] = True
    services = ctx.services
    if services.requests.config.enabled or services.tracing.tracer is not None:  # else nobody reads it
        data = build(ctx, error)
        services.requests.add(data)
        services.tracing.export(ctx, data)
    provider = ctx.reply.provider if ctx.reply else "none"
    status = "ok" if error is None else str(error.status)
    labels = (api or ctx.wire.name, ctx.tenant_label, ctx.model_label, provider, status)
    metrics = ctx.services.metrics
    metrics.requests.labels(*labels).inc()
    if error is not None:
        kind = error_class(error.status, error.kind.value, error.code) or "gateway"
        metrics.request_errors.labels(labels[0], ctx.tenant_label, kind).inc()
    _count_key_spend(ctx)
    # No handler anywhere up the tree (`cachegate serve` configures none): the line would be dropped,
    # so do not build it (~20 us a request).
    if not (log.isEnabledFor(logging.INFO) and log.hasHandlers()):
        return
    usage = ctx.usage
    log.info(
        "request=%s status=%s error=%s reason=%s tenant=%s session=%s model=%s deployment=%s source=%s "
        "stream=%s in=%s cached=%s out=%s cost=%s ms=%.1f",
        ctx.request_id,
        200 if error is None else error.status,
        error.kind.value if error else "-",
        (error.code or "-") if error else "-",
        ctx.tenant_label,
        ctx.session_id or "-",
        ctx.model_label,
        _deployment(ctx),
        ctx.reply.source if ctx.reply else "-",
        ctx.stream,
        usage.input_total if usage else 0,
        usage.cache_read if usage else 0,
        usage.output if usage else 0,
        f"{ctx.cost.usd:.6f}" if ctx.cost else "-",
        (time.perf_counter() - ctx.timings.start) * 1000,
    )


def _count_key_spend(ctx: RequestContext) -> None:
    """The request's spend under its key (answer and side calls, as the ledger sums them)."""
    usd = sum(cost.usd for cost in (ctx.cost, side_cost(ctx)) if cost is not None)
    if usd and ctx.key is not None:
        metrics = ctx.services.metrics
        metrics.key_cost.labels(ctx.tenant_label, metrics.key_label(ctx.key.id)).inc(usd)


def _deployment(ctx: RequestContext) -> str:
    """The pool's deployment that answered and why (gateway/pools/): `id:reason`, else '-'."""
    placement = ctx.notes.get("deployment")
    return f"{placement['id']}:{placement['reason']}" if placement else "-"
