"""A small OTLP/HTTP trace receiver for tests (the OpenTelemetry collector is not installable here): it
takes `POST /v1/traces` (protobuf `ExportTraceServiceRequest`, as the OTLP/HTTP exporters send it) and
keeps every span with its resource attributes."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.servers import run_app_in_thread


def value(any_value: AnyValue) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


@dataclass
class ReceivedSpan:
    name: str
    kind: int
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, Any]
    resource: dict[str, Any]
    start_ns: int
    end_ns: int
    trace_state: str = ""  # W3C tracestate, as exported


@dataclass
class Receiver:
    url: str = ""
    spans: list[ReceivedSpan] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, body: bytes) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource_spans in request.resource_spans:
            resource = {a.key: value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    received = ReceivedSpan(
                        span.name,
                        span.kind,
                        span.trace_id.hex(),
                        span.span_id.hex(),
                        span.parent_span_id.hex(),
                        {a.key: value(a.value) for a in span.attributes},
                        resource,
                        span.start_time_unix_nano,
                        span.end_time_unix_nano,
                        span.trace_state,
                    )
                    with self.lock:
                        self.spans.append(received)

    def of_trace(self, trace_id: str) -> list[ReceivedSpan]:
        with self.lock:
            return [span for span in self.spans if span.trace_id == trace_id]


@contextmanager
def otlp_receiver() -> Iterator[Receiver]:
    receiver = Receiver()

    async def traces(request: Request) -> Response:
        body = await request.body()
        if request.headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        receiver.take(body)
        return Response(ExportTraceServiceResponse().SerializeToString(), media_type="application/x-protobuf")

    with run_app_in_thread(Starlette(routes=[Route("/v1/traces", traces, methods=["POST"])])) as url:
        receiver.url = url
        yield receiver
