"""OpenTelemetry traces of requests, exported over OTLP/HTTP (protobuf) when configured.

One SERVER span per request (continuing the caller's W3C `traceparent`), a child span per stage hook
that ran (request and response side) and a CLIENT span for the provider call, named and attributed
after the GenAI semantic conventions (`gen_ai.system`, `gen_ai.operation.name`, `gen_ai.request.model`,
`gen_ai.usage.*`), plus ours (`cachegate.*`: tenant, key, session, cost, savings, cache tier, prefix
break, guard, compaction). Spans are built when the request is recorded, from its timings and its
request record (gateway/request_log.py): nothing is traced on the hot path, and no content is exported.
The provider is per gateway (not the global one), so several gateways in one process keep their own.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer, set_span_in_context
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from gateway.config.tracing import TracingConfig
from gateway.context import RequestContext

PROPAGATOR = TraceContextTextMapPropagator()
OPERATION = {"openai": "chat", "anthropic": "chat", "gemini": "chat", "responses": "chat"}


def _enabled(config: TracingConfig) -> bool:
    if os.environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return False
    return bool(
        config.endpoint
        or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


class Tracing:
    def __init__(self, config: TracingConfig) -> None:
        self.provider: TracerProvider | None = None
        self.tracer: Tracer | None = None
        if not _enabled(config):
            return
        name = config.service_name or os.environ.get("OTEL_SERVICE_NAME") or "cachegate"
        self.provider = TracerProvider(resource=Resource.create({"service.name": name}))
        endpoint = f"{config.endpoint.rstrip('/')}/v1/traces" if config.endpoint else None
        exporter = OTLPSpanExporter(endpoint=endpoint) if endpoint else OTLPSpanExporter()
        self.provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=config.batch_delay_ms))
        self.tracer = self.provider.get_tracer("cachegate")

    def export(self, ctx: RequestContext, record: Mapping[str, Any]) -> None:
        """The request's spans, from its timings (perf_counter) and its record."""
        tracer = self.tracer
        if tracer is None:
            return
        offset_ns = time.time_ns() - int(time.perf_counter() * 1e9)  # perf_counter -> wall clock

        def wall(perf: float) -> int:
            return offset_ns + int(perf * 1e9)

        # The caller's trace goes on, but not its `tracestate`: vendor data of the caller's choosing, which
        # every span would export verbatim (W3C lets a participant drop it).
        parent = PROPAGATOR.extract(carrier={"traceparent": ctx.headers.get("traceparent", "")})
        operation = OPERATION.get(ctx.wire.name, "chat")
        root = tracer.start_span(
            f"{operation} {record['model']}",
            context=parent,
            kind=SpanKind.SERVER,
            start_time=wall(ctx.timings.start),
            attributes=_attributes(record, operation),
        )
        if record["error"]:
            root.set_status(Status(StatusCode.ERROR, record["error"]))
            root.set_attribute("error.type", record["error_code"] or record["error"])
        inside: Context = set_span_in_context(root)
        for name, side, start, end in ctx.timings.stages:
            tracer.start_span(
                f"stage {name}", context=inside, start_time=wall(start), attributes={"cachegate.stage.side": side}
            ).end(end_time=wall(end))
            if name == "upstream" and side == "request" and record["provider"]:
                _upstream(tracer, ctx, record, operation, inside, wall(start))
        root.end()

    def shutdown(self) -> None:
        if self.provider is not None:
            self.provider.shutdown()  # sends what is batched


def _upstream(
    tracer: Tracer, ctx: RequestContext, record: Mapping[str, Any], operation: str, inside: Context, start: int
) -> None:
    """The provider call: from when it went out until its answer (streams: its first event)."""
    route = ctx.route
    span = tracer.start_span(
        f"{operation} {route.model if route else record['model']}",
        context=inside,
        kind=SpanKind.CLIENT,
        start_time=start,
        attributes={
            "gen_ai.system": record["provider"],
            "gen_ai.operation.name": operation,
            "gen_ai.request.model": route.model if route else record["model"],
        },
    )
    span.end(end_time=start + int(ctx.timings.upstream_s * 1e9))


def _attributes(record: Mapping[str, Any], operation: str) -> dict[str, Any]:
    tokens = record["tokens"]
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": operation,
        "gen_ai.system": record["provider"] or "none",
        "gen_ai.request.model": record["model"],
        "gen_ai.usage.input_tokens": tokens["input"] + tokens["cache_read"] + tokens["cache_write"],
        "gen_ai.usage.output_tokens": tokens["output"],
        "gen_ai.usage.cache_read.input_tokens": tokens["cache_read"],
        "gen_ai.usage.cache_creation.input_tokens": tokens["cache_write"],
        "http.response.status_code": record["status"],
        "cachegate.request_id": record["id"],
        "cachegate.tenant": record["tenant"],
        "cachegate.api": record["api"],
        "cachegate.stream": record["stream"],
        "cachegate.cost_usd": record["cost_usd"],
        "cachegate.saved_usd": record["saved_usd"],
    }
    optional = {
        "cachegate.key": record["key"],
        "cachegate.session": record["session"],
        "cachegate.route": record["route"],
        "cachegate.source": record["source"],
        "cachegate.cache": record["cache"],
        "cachegate.prefix_break": record["prefix_break"],
        "cachegate.guard": record["guard"],
        "cachegate.compaction": record["compaction"],
    }
    attributes.update({name: value for name, value in optional.items() if value is not None})
    return attributes
