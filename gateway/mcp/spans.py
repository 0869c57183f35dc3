"""A tool call's OpenTelemetry spans (when tracing is configured, gateway/tracing.py): a SERVER span named
after the MCP semantic conventions (``tools/call <tool>``, ``mcp.method.name``, ``gen_ai.tool.name``,
``gen_ai.operation.name = execute_tool``) continuing the caller's W3C ``traceparent``, and a CLIENT span
for the upstream call. Built from the request record after the call: nothing of the arguments or result."""

from __future__ import annotations

import time
from typing import Any

from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer, set_span_in_context

from gateway.mcp.records import ToolCall
from gateway.tracing import PROPAGATOR

METHOD = "tools/call"


def export(tracer: Tracer | None, call: ToolCall, record: dict[str, Any]) -> None:
    if tracer is None:
        return
    offset_ns = time.time_ns() - int(time.perf_counter() * 1e9)  # perf_counter -> wall clock
    start = offset_ns + int(call.started * 1e9)
    attributes: dict[str, Any] = {
        "mcp.method.name": METHOD,
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": record["model"],
        "cachegate.request_id": record["id"],
        "cachegate.tenant": record["tenant"],
        "cachegate.mcp.server": record["route"],
        "cachegate.mcp.result_bytes": call.result_bytes,
    }
    if record["key"]:
        attributes["cachegate.key"] = record["key"]
    if record["session"]:
        attributes["cachegate.session"] = record["session"]
    if call.guard:
        attributes["cachegate.guard"] = call.guard
    # The caller's trace goes on, not its tracestate (vendor data of its choosing), as for model requests.
    parent = PROPAGATOR.extract(carrier={"traceparent": call.caller.traceparent})
    root = tracer.start_span(
        f"{METHOD} {record['model']}", context=parent, kind=SpanKind.SERVER, start_time=start, attributes=attributes
    )
    if record["error"]:
        root.set_status(Status(StatusCode.ERROR, record["error"]))
        root.set_attribute("error.type", record["error_code"] or record["error"])
    if call.upstream_start is not None:
        upstream = offset_ns + int(call.upstream_start * 1e9)
        client = tracer.start_span(
            f"{METHOD} {call.upstream_tool}",
            context=set_span_in_context(root),
            kind=SpanKind.CLIENT,
            start_time=upstream,
            attributes={
                "mcp.method.name": METHOD,
                "gen_ai.tool.name": call.upstream_tool,
                "server.address": call.server,
            },
        )
        client.end(end_time=upstream + int(call.upstream_s * 1e9))
    root.end()
