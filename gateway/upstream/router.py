"""Which path and which deployment serve a request: the pool's plan (gateway/pools/), retries with backoff."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from gateway.alerts.events import Alert
from gateway.config import ModelConfig, Settings
from gateway.config.models import EMBEDDED_SIM_BASE
from gateway.errors import GatewayError
from gateway.metrics import GatewayMetrics
from gateway.pools import Placement, Plan, Pools
from gateway.pools.headroom import observing
from gateway.state import StateStore
from gateway.upstream.errors import UpstreamError, describe
from gateway.upstream.outbound import outbound_request, route_request
from gateway.wire import GEMINI, WIRES
from gateway.wire.gemini_convert import from_openai, stream_from_openai, to_openai
from gateway.wire.sse import SSEEvent

# The public API of each provider the lean path speaks (by its wire).
DEFAULT_BASES = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    # Versioned, as LiteLLM's Gemini provider expects it ({api_base}/models/{model}:{method}).
    "gemini": "https://generativelanguage.googleapis.com/v1beta",
}
MAX_BACKOFF_S = 4.0


class UpstreamPath(Protocol):
    async def complete(
        self, wire: str, route: ModelConfig, api_base: str | None, body: dict[str, Any], headers: dict[str, str]
    ) -> dict[str, Any]: ...

    async def open_stream(
        self, wire: str, route: ModelConfig, api_base: str | None, body: dict[str, Any], headers: dict[str, str]
    ) -> AsyncIterator[SSEEvent]: ...


@dataclass(frozen=True, slots=True)
class UpstreamResult:
    route: ModelConfig
    path: str
    body: dict[str, Any] | None = None
    events: AsyncIterator[SSEEvent] | None = None
    placement: Placement | None = None


class Router:
    def __init__(
        self,
        settings: Settings,
        paths: dict[str, UpstreamPath],
        metrics: GatewayMetrics,
        self_url: str,
        store: StateStore,
        alert: Callable[[Alert], None] = lambda alert: None,
    ) -> None:
        self.settings = settings
        self.paths = paths
        self.metrics = metrics
        self.self_url = self_url
        self.pools = Pools(settings, store, metrics.registry, alert)

    def api_base(self, route: ModelConfig, wire: str) -> str | None:
        if route.api_base == EMBEDDED_SIM_BASE:
            sim = f"{self.self_url}/sim"
            return f"{sim}/v1" if wire in ("openai", "responses") else f"{sim}/v1beta" if wire == "gemini" else sim
        # Only a provider's own public API is a default: a route of another provider (Bedrock, Vertex ...)
        # without an api_base leaves the address to LiteLLM, never to another provider's host.
        return route.api_base or (DEFAULT_BASES.get(wire) if route.lean_wire == wire else None)

    def path_for(self, route: ModelConfig, caller_wire: str) -> str:
        lean_possible = route.lean_wire == (WIRES[caller_wire].lean_wire or caller_wire)
        if route.path == "lean" and lean_possible:
            return "lean"
        if route.path == "auto" and lean_possible:
            return "lean"
        return "litellm"

    async def call(
        self,
        caller_wire: str,
        route: ModelConfig,
        body: dict[str, Any],
        headers: dict[str, str],
        *,
        stream: bool,
        session: str | None = None,
        fallbacks: list[str] | None = None,
    ) -> UpstreamResult:
        """Answer from the route's pool (the session's deployment first, gateway/pools/), then the fallback
        pools: `fallbacks` (a tenant's), else the route's."""
        plan = await self.pools.plan(route, session, body, fallbacks)
        return await self._call(caller_wire, route, body, headers, stream=stream, plan=plan)

    async def _call(
        self,
        caller_wire: str,
        route: ModelConfig,
        body: dict[str, Any],
        headers: dict[str, str],
        *,
        stream: bool,
        plan: Plan,
    ) -> UpstreamResult:
        # Every path and every candidate gets only what the caller's API lets through (no LiteLLM
        # keyword arguments such as base_url, api_key or mock_response; no unvetted headers).
        body, headers = outbound_request(WIRES[caller_wire], body, headers, self.metrics)
        if caller_wire == GEMINI.name and self.path_for(route, caller_wire) != "lean":
            return await self._call_converted(route, body, headers, stream=stream, plan=plan)
        last_error: UpstreamError | None = None
        for deployment in plan.candidates:
            candidate = deployment.route
            if caller_wire == GEMINI.name and self.path_for(candidate, caller_wire) != "lean":
                # A native Gemini route's fallback on another provider gets the request converted.
                try:
                    return await self._call_converted(
                        candidate, body, headers, stream=stream, plan=plan.only(deployment)
                    )
                except UpstreamError as exc:
                    last_error = exc
                    if not exc.retryable:
                        raise
                    continue
            try:
                sent = route_request(caller_wire, candidate, body, self.settings.models)
            except GatewayError:
                if plan.is_primary(deployment):
                    raise
                continue  # a fallback this request's tools or ids may not reach (another provider/account)
            if not await plan.begin(deployment):
                continue  # a half-open circuit that another request is probing
            path = self.path_for(candidate, caller_wire)
            # The lean path speaks the provider's own wire; LiteLLM wants the provider's api_base.
            base = self.api_base(candidate, candidate.lean_wire or caller_wire)
            upstream = self.paths[path]
            attempts = plan.attempts(deployment)
            for attempt in range(attempts):
                started = time.perf_counter()
                with observing() as seen:
                    try:
                        if stream:
                            events = await upstream.open_stream(caller_wire, candidate, base, sent, headers)
                            placement = await plan.succeeded(deployment, seen)
                            return UpstreamResult(candidate, path, events=events, placement=placement)
                        result = await upstream.complete(caller_wire, candidate, base, sent, headers)
                        placement = await plan.succeeded(deployment, seen)
                        return UpstreamResult(candidate, path, body=result, placement=placement)
                    except UpstreamError as exc:
                        last_error = exc
                        if not exc.retryable:
                            raise
                        await plan.failed(deployment, exc, seen)
                        if attempt < attempts - 1:
                            self.metrics.upstream_retries.labels(candidate.name, str(exc.status)).inc()
                            await asyncio.sleep(min(exc.retry_after or 0.05 * 2**attempt, MAX_BACKOFF_S))
                    finally:
                        self.metrics.upstream_latency.labels(candidate.provider, path).observe(
                            time.perf_counter() - started
                        )
            self.metrics.upstream_retries.labels(candidate.name, "fallback").inc()
        if last_error is None:  # every deployment was skipped (probed elsewhere, or unreachable for this body)
            raise UpstreamError(503, describe(503))
        raise last_error

    async def _call_converted(
        self, route: ModelConfig, body: dict[str, Any], headers: dict[str, str], *, stream: bool, plan: Plan
    ) -> UpstreamResult:
        """A Gemini-shaped request for a route that does not speak Gemini goes out as Chat Completions (the
        lean OpenAI path, or LiteLLM for any other provider) and its answer comes back in Gemini's shape.
        A Gemini route takes it as it is, on the lean path."""
        result = await self._call("openai", route, to_openai(body, stream), headers, stream=stream, plan=plan)
        model = result.route.model
        if result.events is not None:
            return replace(result, events=stream_from_openai(result.events, model))
        assert result.body is not None
        return replace(result, body=from_openai(result.body, model))
