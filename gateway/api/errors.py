"""Error responses in the caller's API shape."""

from __future__ import annotations

import orjson
from starlette.responses import Response

from gateway.errors import GatewayError
from gateway.metrics import GatewayMetrics
from gateway.wire import WireFormat


def error_response(
    wire: WireFormat, error: GatewayError, metrics: GatewayMetrics, headers: dict[str, str] | None = None
) -> Response:
    metrics.errors.labels(wire.name, error.kind.value).inc()
    out = dict(headers or {})
    if error.retry_after is not None:
        out["retry-after"] = str(int(error.retry_after + 0.999))
    if error.should_retry is not None:
        out["x-should-retry"] = "true" if error.should_retry else "false"
    return Response(
        orjson.dumps(wire.error_body(error)), status_code=error.status, media_type="application/json", headers=out
    )
