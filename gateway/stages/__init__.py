"""The request pipeline's stages, and their order."""

from __future__ import annotations

from gateway.pipeline import Pipeline
from gateway.services import Services
from gateway.stages.auth import AuthStage
from gateway.stages.routing import RoutingStage
from gateway.stages.session import SessionStage
from gateway.stages.telemetry import TelemetryStage
from gateway.stages.upstream import UpstreamStage
from gateway.stages.usage import UsageStage


def build_pipeline(services: Services) -> Pipeline:
    """Request order: auth -> routing -> session -> [guard -> compaction -> response cache ->
    prompt cache] -> upstream. Response order: usage -> [prompt-cache accounting -> guard ->
    response-cache store] -> telemetry."""
    auth, routing, session = AuthStage(), RoutingStage(), SessionStage()
    upstream, usage, telemetry = UpstreamStage(), UsageStage(), TelemetryStage()
    return Pipeline(
        request_stages=[auth, routing, session, upstream],
        response_stages=[usage, telemetry],
        metrics=services.metrics,
    )
