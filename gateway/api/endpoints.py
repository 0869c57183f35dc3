"""The provider endpoints besides chat: Anthropic's count_tokens, OpenAI's embeddings and legacy completions.

They go through the chat pipeline's authentication, rate limits (requests per minute, concurrency),
routing (aliases, allowed_models) and outbound filter; the billable ones (embeddings, completions) also
through tokens per minute, budgets and usage (priced from the provider's usage, like a chat answer), in a
pipeline of their own, without the optional stages (guard, compaction, caches: they hold no conversation
to act on). A route whose provider speaks the endpoint's API gets the request as is on the lean path; any
other route is served by LiteLLM (embeddings, completions) or counted by the gateway (count_tokens:
tiktoken, the compaction stage's counter, offline).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import litellm
import orjson
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from gateway.api.admission import AUTH, RATE_LIMIT, finish
from gateway.api.body import read_json
from gateway.api.errors import error_response
from gateway.api.headers import request_headers, sendable
from gateway.compaction.tokens import counter_for
from gateway.config import ModelConfig
from gateway.context import Reply, RequestContext
from gateway.errors import ErrorKind, GatewayError, bad_request
from gateway.logs import log_failure
from gateway.pipeline import Pipeline
from gateway.services import Services
from gateway.stages.base import Stage
from gateway.stages.budget import BudgetStage
from gateway.stages.routing import RoutingStage
from gateway.stages.session import SessionStage
from gateway.stages.telemetry import record
from gateway.stages.token_rate import TokenRateStage
from gateway.stages.usage import UsageStage, stream_cost
from gateway.upstream.errors import UpstreamError
from gateway.upstream.litellm_path import call_litellm
from gateway.upstream.outbound import filter_outbound
from gateway.upstream.router import MAX_BACKOFF_S
from gateway.wire import ANTHROPIC, OPENAI, WireFormat
from gateway.wire.checks import require_object, require_str
from gateway.wire.embeddings import OPENAI_EMBEDDINGS
from gateway.wire.fields import (
    ANTHROPIC_COUNT_TOKENS_FIELDS,
    OPENAI_COMPLETIONS_FIELDS,
    OPENAI_EMBEDDINGS_FIELDS,
)
from gateway.wire.sse import SSEEvent, encode

Local = Callable[[ModelConfig, str | None, dict[str, Any]], Awaitable[dict[str, Any]]]
SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}
ROUTING = RoutingStage()
log = logging.getLogger("cachegate.proxy")


@dataclass(frozen=True)
class Endpoint:
    name: str  # the `api` label of the request metrics
    wire: WireFormat  # the caller's API: the shape of its errors, its usage, its output cap (budget holds)
    provider_wire: str  # the API a route's provider must speak for the lean path
    path: str  # the provider's endpoint, below the lean base URL
    fields: frozenset[str]  # the public body fields a provider may receive
    validate: Callable[[dict[str, Any]], None]
    local: Local  # how a route whose provider does not speak this API is served
    streams: bool = False
    billable: bool = True  # the provider charges for it: held on budgets and tokens per minute, priced


# -- request checks: only what the gateway itself reads ---------------------------------------------------


def _check_count_tokens(body: dict[str, Any]) -> None:
    messages = body.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise bad_request("messages: Field required (an array of message objects).", param="messages")


def _check_embeddings(body: dict[str, Any]) -> None:
    value = body.get("input")
    if not isinstance(value, str | list) or (isinstance(value, list) and not value):
        raise bad_request("'input' must be a string or a non-empty array.", param="input")


def _check_completions(body: dict[str, Any]) -> None:
    if not isinstance(body.get("prompt"), str | list):
        raise bad_request("'prompt' is required: a string or an array.", param="prompt")
    if not isinstance(body.get("stream", False), bool):
        raise bad_request("'stream' must be a boolean.", param="stream")


# -- routes whose provider does not speak the endpoint's API ----------------------------------------------


async def _count_locally(route: ModelConfig, api_base: str | None, body: dict[str, Any]) -> dict[str, Any]:
    """Anthropic's answer shape, counted with tiktoken (cl100k_base approximates non-OpenAI tokenizers)."""
    counter = counter_for(route.provider, route.model)
    total = await counter.content_off_loop(body.get("system"))
    for message in body.get("messages") or []:
        total += await counter.message_off_loop(message)
    if body.get("tools"):
        total += await counter.json_off_loop(body["tools"])
    return {"input_tokens": total}


def _litellm_kwargs(route: ModelConfig, api_base: str | None, body: dict[str, Any]) -> dict[str, Any]:
    params = {k: v for k, v in body.items() if k not in ("model", "stream", "stream_options")}
    return {
        **params,
        "model": route.litellm_model,
        "api_base": api_base,
        "api_key": route.api_key() or "no-key-configured",
        "timeout": route.timeout_s,
    }


def _dumped(response: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = (
        response if isinstance(response, dict) else response.model_dump(exclude_none=True, warnings=False)
    )
    return dumped


async def _embed(route: ModelConfig, api_base: str | None, body: dict[str, Any]) -> dict[str, Any]:
    kwargs = _litellm_kwargs(route, api_base, body)
    return _dumped(await call_litellm(route, lambda: litellm.aembedding(**kwargs)))


async def _complete_text(route: ModelConfig, api_base: str | None, body: dict[str, Any]) -> dict[str, Any]:
    kwargs = _litellm_kwargs(route, api_base, body)
    return _dumped(await call_litellm(route, lambda: litellm.atext_completion(**kwargs)))


COUNT_TOKENS = Endpoint(
    "count_tokens", ANTHROPIC, "anthropic", "/v1/messages/count_tokens",
    ANTHROPIC_COUNT_TOKENS_FIELDS, _check_count_tokens, _count_locally, billable=False,
)  # fmt: skip
EMBEDDINGS = Endpoint(
    "embeddings", OPENAI_EMBEDDINGS, "openai", "/embeddings", OPENAI_EMBEDDINGS_FIELDS, _check_embeddings, _embed
)
COMPLETIONS = Endpoint(
    "completions", OPENAI, "openai", "/completions",
    OPENAI_COMPLETIONS_FIELDS, _check_completions, _complete_text, streams=True,
)  # fmt: skip


# -- the pipeline: the chat pipeline's governance stages around the endpoint's own call ---------------------


class EndpointParseStage(Stage):
    """Read the body (size and depth limits) and check only what the gateway itself reads."""

    name = "parse"
    fail_closed = True

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    async def on_request(self, ctx: RequestContext) -> None:
        assert ctx.read_body is not None
        body = require_object(await ctx.read_body())
        require_str(body, "model")
        self.endpoint.validate(body)
        ctx.body = body


class EndpointCallStage(Stage):
    """The provider call (or the gateway's own answer): always answers, or raises in the caller's shape."""

    name = "upstream"
    fail_closed = True

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    async def on_request(self, ctx: RequestContext) -> None:
        started = time.perf_counter()
        try:
            ctx.reply = await _call(self.endpoint, ctx)
        except UpstreamError as exc:
            raise exc.to_gateway_error() from exc
        finally:
            ctx.timings.upstream_s = time.perf_counter() - started
        close = getattr(ctx.reply.events, "aclose", None)
        if close is not None:  # the provider's stream: closed however the request ends, even if never read
            ctx.finishers.append(close)


def _stages(endpoint: Endpoint) -> tuple[list[Stage], list[Stage]]:
    """Request and response stages. Billable endpoints: auth -> rate limit -> parse -> routing -> token
    rate -> session -> budget -> [call]; usage -> token rate -> budget. count_tokens is free at the
    providers: admitted (rate limits: it is a provider call too), never held or charged."""
    parse, call = EndpointParseStage(endpoint), EndpointCallStage(endpoint)
    if not endpoint.billable:
        return [AUTH, RATE_LIMIT, parse, ROUTING, call], []
    token_rate, budget = TokenRateStage(), BudgetStage()
    return (
        [AUTH, RATE_LIMIT, parse, ROUTING, token_rate, SessionStage(), budget, call],
        [UsageStage(), token_rate, budget],
    )


STAGES = {endpoint.name: _stages(endpoint) for endpoint in (COUNT_TOKENS, EMBEDDINGS, COMPLETIONS)}


# -- serving -----------------------------------------------------------------------------------------------


async def _with_retries(route: ModelConfig, services: Services, call: Callable[[], Awaitable[Any]]) -> Any:
    """The route's retries with backoff, as the chat router does (no fallbacks: those are chat routes)."""
    for attempt in range(route.retries + 1):
        try:
            return await call()
        except UpstreamError as exc:
            if not exc.retryable or attempt >= route.retries:
                raise
            services.metrics.upstream_retries.labels(route.name, str(exc.status)).inc()
            await asyncio.sleep(min(exc.retry_after or 0.05 * 2**attempt, MAX_BACKOFF_S))
    raise AssertionError("unreachable")


async def _call(endpoint: Endpoint, ctx: RequestContext) -> Reply:
    services, route = ctx.services, ctx.route
    assert route is not None
    body, headers = filter_outbound(endpoint.name, endpoint.fields, ctx.body, ctx.headers, services.metrics)
    base = services.router.api_base(route, endpoint.provider_wire)
    lean = route.lean_wire == endpoint.provider_wire and route.path != "litellm" and base is not None
    url = f"{base}{endpoint.path}"
    if lean and endpoint.streams and ctx.stream:
        options = body.get("stream_options")
        # The provider's usage event is what the stream is charged from; asked for on the caller's behalf.
        body = {**body, "stream_options": {**(options if isinstance(options, dict) else {}), "include_usage": True}}
        events = await _with_retries(
            route, services, lambda: services.lean.post_stream(endpoint.provider_wire, route, url, body, headers)
        )
        return Reply(events=events, provider=route.provider)
    if lean:
        result = await _with_retries(
            route, services, lambda: services.lean.post_json(endpoint.provider_wire, route, url, body, headers)
        )
    else:
        result = await _with_retries(route, services, lambda: endpoint.local(route, base, body))
    return Reply(body=result, provider=route.provider)


def _answer(endpoint: Endpoint, ctx: RequestContext) -> Response:
    result, out = ctx.response_body or {}, sendable(ctx.response_headers)
    if endpoint.streams and ctx.stream:  # a non-streaming answer, replayed as its one chunk
        events = [encode({**result, "object": "text_completion"}), b"data: [DONE]\n\n"]
        return StreamingResponse(_replay(events), media_type="text/event-stream", headers={**SSE_HEADERS, **out})
    return Response(orjson.dumps(result), media_type="application/json", headers=out)


async def _relay(ctx: RequestContext, pipeline: Pipeline, endpoint: Endpoint) -> AsyncIterator[bytes]:
    """The provider's events as they come. Its usage event and `[DONE]` are held until the response stages
    have charged the stream (a client that hangs up at `[DONE]` is charged all the same), then sent, the
    usage event carrying the cost (`usage.cachegate`) when the caller asked for usage."""
    assert ctx.reply is not None and ctx.reply.events is not None
    wire, asked = ctx.wire, ctx.wire.usage_requested(ctx.body)
    usage: Any = None
    held: list[SSEEvent] = []
    error: GatewayError | None = None
    try:
        async for event in ctx.reply.events:
            if ctx.timings.first_byte is None:
                ctx.timings.first_byte = time.perf_counter()
            if wire.is_usage_only(event):
                data = event.json()
                usage = (data.get("usage") if isinstance(data, dict) else None) or usage
                if asked:
                    held.append(event)
            elif held or wire.is_stream_done(event):
                held.append(event)
            else:
                yield event.raw
        ctx.response_body = {"usage": usage}
        await pipeline.run_response(ctx)
        extra = stream_cost(ctx)
        yield b"".join(wire.with_usage_extra(e, extra) if extra and wire.is_usage_only(e) else e.raw for e in held)
    except (GatewayError, UpstreamError, ValueError) as exc:  # the stream has started: an in-stream error
        error = _gateway_error(exc)
        yield wire.stream_error_event(error)
    finally:
        _recorded(ctx, endpoint, error)
        await finish(ctx)


def _gateway_error(exc: Exception) -> GatewayError:
    if isinstance(exc, GatewayError):
        return exc
    if isinstance(exc, UpstreamError):
        return exc.to_gateway_error()
    return UpstreamError(502, "the provider sent a malformed stream").to_gateway_error()


class FinishingStream(StreamingResponse):
    """A relayed stream whose request ends (place, holds, provider stream given back) however the response
    ends, even if its generator never ran (the client left before the first byte)."""

    def __init__(self, content: AsyncIterator[bytes], ctx: RequestContext) -> None:
        headers = {**SSE_HEADERS, **sendable(ctx.response_headers)}
        super().__init__(content, media_type="text/event-stream", headers=headers)
        self.ctx = ctx

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await finish(self.ctx)


async def _replay(events: list[bytes]) -> AsyncIterator[bytes]:
    for event in events:
        yield event


def _recorded(ctx: RequestContext, endpoint: Endpoint, error: GatewayError | None) -> None:
    """The request's one metric sample, log line and record (telemetry's), and its latency."""
    record(ctx, error, api=endpoint.name)
    latency = time.perf_counter() - ctx.timings.start
    ctx.services.metrics.latency.labels(endpoint.name, ctx.model_label).observe(latency)


async def serve(request: Request, endpoint: Endpoint) -> Response:
    services: Services = request.app.state.services
    ctx = RequestContext(
        wire=endpoint.wire,
        body={},
        headers=request_headers(request),
        services=services,
        read_body=lambda: read_json(request, services.settings.max_body_bytes),
    )
    for name in endpoint.wire.request_id_headers:  # on every answer, errors included
        ctx.response_headers[name] = ctx.request_id
    request_stages, response_stages = STAGES[endpoint.name]
    pipeline = Pipeline(request_stages, response_stages, services.metrics)
    error: GatewayError | None = None
    relayed = False  # a relayed stream records and ends its request itself
    try:
        await pipeline.run_request(ctx)
        assert ctx.reply is not None
        if ctx.reply.events is not None:
            relayed = True
            return FinishingStream(_relay(ctx, pipeline, endpoint), ctx)
        ctx.response_body = ctx.reply.body
        await pipeline.run_response(ctx)
        return _answer(endpoint, ctx)
    except GatewayError as exc:
        error = exc
    except Exception:
        log_failure(log, "unexpected error on %s", endpoint.name)
        error = GatewayError(ErrorKind.INTERNAL, "The gateway failed to process the request.")
    finally:
        if not relayed:
            _recorded(ctx, endpoint, error)
            await finish(ctx)
    return error_response(endpoint.wire, error, services.metrics, sendable(ctx.response_headers))


async def count_tokens(request: Request) -> Response:
    return await serve(request, COUNT_TOKENS)


async def embeddings(request: Request) -> Response:
    return await serve(request, EMBEDDINGS)


async def completions(request: Request) -> Response:
    return await serve(request, COMPLETIONS)
