"""OpenTelemetry trace export (gateway/tracing.py)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class TracingConfig(BaseModel):
    """On when `endpoint` is set here or OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
    is set in the environment (and OTEL_SDK_DISABLED is not true); OTLP over HTTP/protobuf."""

    endpoint: str | None = Field(default=None, description="OTLP/HTTP base URL, e.g. http://collector:4318")
    service_name: str | None = Field(default=None, description="Default: OTEL_SERVICE_NAME, else 'cachegate'")
    batch_delay_ms: int = Field(default=5000, gt=0, description="How long spans wait to be sent in a batch")
