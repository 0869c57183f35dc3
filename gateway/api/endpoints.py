"""The provider endpoints besides chat: Anthropic's count_tokens, OpenAI's embeddings and legacy completions.

They share the chat endpoints' authentication, routing (aliases, allowed_models) and outbound filter, but
none of the optional stages (guard, compaction, caches: they hold no conversation to act on). A route
whose provider speaks the endpoint's API gets the request as is on the lean path; any other route is
served by LiteLLM (embeddings, completions) or counted by the gateway (count_tokens: tiktoken, the
compaction stage's counter, offline).
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

from gateway.api.body import read_json
from gateway.api.errors import error_response
from gateway.api.headers import sendable
from gateway.compaction.tokens import counter_for
from gateway.config import ModelConfig
from gateway.context import Reply, RequestContext
from gateway.errors import ErrorKind, GatewayError, bad_request
from gateway.logs import log_failure
from gateway.services import Services
from gateway.stages.auth import AuthStage
from gateway.stages.routing import RoutingStage
from gateway.stages.telemetry import record
from gateway.upstream.errors import UpstreamError
from gateway.upstream.litellm_path import call_litellm
from gateway.upstream.outbound import filter_outbound
from gateway.upstream.router import MAX_BACKOFF_S
from gateway.wire import ANTHROPIC, OPENAI, WireFormat
from gateway.wire.checks import require_object, require_str
from gateway.wire.fields import (
    ANTHROPIC_COUNT_TOKENS_FIELDS,
    OPENAI_COMPLETIONS_FIELDS,
    OPENAI_EMBEDDINGS_FIELDS,
)
from gateway.wire.sse import encode

Local = Callable[[ModelConfig, str | None, dict[str, Any]], Awaitable[dict[str, Any]]]
SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}
AUTH, ROUTING = AuthStage(), RoutingStage()
log = logging.getLogger("cachegate.proxy")


@dataclass(frozen=True)
class Endpoint:
    name: str  # the `api` label of the request metrics
    wire: WireFormat  # the caller's API: the shape of its errors
    provider_wire: str  # the API a route's provider must speak for the lean path
    path: str  # the provider's endpoint, below the lean base URL
    fields: frozenset[str]  # the public body fields a provider may receive
    validate: Callable[[dict[str, Any]], None]
    local: Local  # how a route whose provider does not speak this API is served
    streams: bool = False


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
    ANTHROPIC_COUNT_TOKENS_FIELDS, _check_count_tokens, _count_locally,
)  # fmt: skip
EMBEDDINGS = Endpoint(
    "embeddings", OPENAI, "openai", "/embeddings", OPENAI_EMBEDDINGS_FIELDS, _check_embeddings, _embed
)
COMPLETIONS = Endpoint(
    "completions", OPENAI, "openai", "/completions",
    OPENAI_COMPLETIONS_FIELDS, _check_completions, _complete_text, streams=True,
)  # fmt: skip


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


async def _answer(endpoint: Endpoint, ctx: RequestContext) -> Response:
    services, route = ctx.services, ctx.route
    assert route is not None
    ctx.reply = Reply(provider=route.provider)  # the request record's provider label
    body, headers = filter_outbound(endpoint.name, endpoint.fields, ctx.body, ctx.headers, services.metrics)
    base = services.router.api_base(route, endpoint.provider_wire)
    lean = route.lean_wire == endpoint.provider_wire and route.path != "litellm" and base is not None
    out = sendable(ctx.response_headers)
    if lean and endpoint.streams and ctx.stream:
        url = f"{base}{endpoint.path}"
        events = await _with_retries(
            route, services, lambda: services.lean.post_stream(endpoint.provider_wire, route, url, body, headers)
        )
        return StreamingResponse(_raw(events), media_type="text/event-stream", headers={**SSE_HEADERS, **out})
    if lean:
        url = f"{base}{endpoint.path}"
        result = await _with_retries(
            route, services, lambda: services.lean.post_json(endpoint.provider_wire, route, url, body, headers)
        )
    else:
        result = await _with_retries(route, services, lambda: endpoint.local(route, base, body))
    if endpoint.streams and ctx.stream:  # a non-streaming answer, replayed as its one chunk
        events = [encode({**result, "object": "text_completion"}), b"data: [DONE]\n\n"]
        return StreamingResponse(_replay(events), media_type="text/event-stream", headers={**SSE_HEADERS, **out})
    return Response(orjson.dumps(result), media_type="application/json", headers=out)


async def _raw(events: AsyncIterator[Any]) -> AsyncIterator[bytes]:
    async for event in events:
        yield event.raw


async def _replay(events: list[bytes]) -> AsyncIterator[bytes]:
    for event in events:
        yield event


async def serve(request: Request, endpoint: Endpoint) -> Response:
    services: Services = request.app.state.services
    ctx = RequestContext(wire=endpoint.wire, body={}, headers=request.headers, services=services)
    for name in endpoint.wire.request_id_headers:  # on every answer, errors included
        ctx.response_headers[name] = ctx.request_id
    error: GatewayError | None = None
    try:
        await AUTH.on_request(ctx)  # before the body is read: unauthenticated callers learn nothing
        body = require_object(await read_json(request, services.settings.max_body_bytes))
        require_str(body, "model")
        endpoint.validate(body)
        ctx.body = body
        await ROUTING.on_request(ctx)
        return await _answer(endpoint, ctx)
    except (GatewayError, UpstreamError) as exc:
        error = exc.to_gateway_error() if isinstance(exc, UpstreamError) else exc
    except Exception:
        log_failure(log, "unexpected error on %s", endpoint.name)
        error = GatewayError(ErrorKind.INTERNAL, "The gateway failed to process the request.")
    finally:
        record(ctx, error, api=endpoint.name)
        services.metrics.latency.labels(endpoint.name, ctx.model_label).observe(time.perf_counter() - ctx.timings.start)
    return error_response(endpoint.wire, error, services.metrics, sendable(ctx.response_headers))


async def count_tokens(request: Request) -> Response:
    return await serve(request, COUNT_TOKENS)


async def embeddings(request: Request) -> Response:
    return await serve(request, EMBEDDINGS)


async def completions(request: Request) -> Response:
    return await serve(request, COMPLETIONS)
