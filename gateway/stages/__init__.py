"""The request pipeline's stages, and their order."""

from __future__ import annotations

from gateway.pipeline import Pipeline
from gateway.services import Services
from gateway.stages.auth import AuthStage
from gateway.stages.budget import BudgetStage
from gateway.stages.compaction import CompactionStage
from gateway.stages.guard import GuardStage
from gateway.stages.parse import ParseStage
from gateway.stages.prompt_cache import PromptCacheAccountingStage, PromptCacheStage
from gateway.stages.rate_limit import RateLimitStage
from gateway.stages.response_cache import ResponseCacheStage
from gateway.stages.responses_state import ResponsesStateStage
from gateway.stages.routing import RoutingStage
from gateway.stages.session import SessionStage
from gateway.stages.telemetry import TelemetryStage
from gateway.stages.token_rate import TokenRateStage
from gateway.stages.upstream import UpstreamStage
from gateway.stages.usage import UsageStage


def build_pipeline(services: Services) -> Pipeline:
    """Request order: auth -> rate limit -> parse -> routing -> responses state -> token rate -> session ->
    budget -> [guard -> compaction -> response cache -> prompt cache] -> upstream. Response order: usage ->
    token rate -> budget -> [guard -> response-cache store -> prompt-cache accounting] -> responses state ->
    telemetry. Responses state comes before the holds: a `previous_response_id` is the whole conversation
    it names, and token rate and budgets hold for the request's real size. The guard's session writes,
    deferred, and the response cache's store ride the accounting's round trip (or the request's last)."""
    auth, parse, routing, session = AuthStage(), ParseStage(), RoutingStage(), SessionStage()
    upstream, usage, telemetry, responses_state = UpstreamStage(), UsageStage(), TelemetryStage(), ResponsesStateStage()
    compaction, guard, budget, token_rate = (
        CompactionStage(services),
        GuardStage(services),
        BudgetStage(),
        TokenRateStage(),
    )
    response_cache = ResponseCacheStage(services)
    prompt_cache, prompt_cache_accounting = PromptCacheStage(services), PromptCacheAccountingStage(services)
    return Pipeline(
        request_stages=[
            *[auth, RateLimitStage(), parse, routing, responses_state, token_rate, session, budget],
            *[guard, compaction, response_cache, prompt_cache, upstream],
        ],
        response_stages=[
            compaction,
            usage,
            token_rate,
            budget,
            guard,
            response_cache,
            prompt_cache_accounting,
            responses_state,
            telemetry,
        ],
        metrics=services.metrics,
    )
