"""The proxy endpoints: one handler for both API shapes, parameterised by the wire format."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator

import orjson
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.api.body import read_json
from gateway.api.errors import error_response
from gateway.context import RequestContext
from gateway.errors import ErrorKind, GatewayError
from gateway.services import Services
from gateway.upstream.errors import UpstreamError
from gateway.wire import ANTHROPIC, OPENAI, WireFormat
from gateway.wire.sse import comment

log = logging.getLogger("cachegate.proxy")
SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


async def chat_completions(request: Request) -> Response:
    return await proxy(request, OPENAI)


async def messages(request: Request) -> Response:
    return await proxy(request, ANTHROPIC)


ROUTES = {"/v1/chat/completions": chat_completions, "/v1/messages": messages}


class DirectRoutes:
    """ASGI middleware serving the proxy endpoints itself, ahead of FastAPI's router, dependency solving
    and exception layers (~20% of a proxied request's CPU, bench/overhead), which these handlers never
    use. Anything else, the same paths with another method included, goes on to FastAPI unchanged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint = ROUTES.get(scope["path"]) if scope["type"] == "http" and scope["method"] == "POST" else None
        if endpoint is None:
            await self.app(scope, receive, send)
            return
        response = await endpoint(Request(scope, receive, send))
        await response(scope, receive, send)


async def proxy(request: Request, wire: WireFormat) -> Response:
    services: Services = request.app.state.services
    assert services.pipeline is not None
    services.metrics.in_flight.inc()
    streaming = False
    ctx: RequestContext | None = None
    try:
        ctx = RequestContext(
            wire=wire,
            body={},
            headers=request.headers,
            services=services,
            policy=services.settings.policy,  # the global policy until routing picks the request's own
            read_body=lambda: read_json(request, services.settings.max_body_bytes),
        )
        await services.pipeline.run_request(ctx)
        assert ctx.reply is not None
        if ctx.reply.events is not None:
            streaming = True
            return StreamingResponse(
                relay(ctx), media_type="text/event-stream", headers={**SSE_HEADERS, **ctx.response_headers}
            )
        ctx.response_body = ctx.reply.body
        await services.pipeline.run_response(ctx)
        assert ctx.response_body is not None
        if ctx.stream:
            events = wire.replay_events(ctx.response_body, include_usage=_wants_usage(ctx))
            return StreamingResponse(
                _iterate(events), media_type="text/event-stream", headers={**SSE_HEADERS, **ctx.response_headers}
            )
        return Response(orjson.dumps(ctx.response_body), media_type="application/json", headers=ctx.response_headers)
    except GatewayError as error:
        return error_response(wire, error, services.metrics, ctx.response_headers if ctx else None)
    except Exception:
        log.exception("unexpected error while proxying")
        internal = GatewayError(ErrorKind.INTERNAL, "The gateway failed to process the request.")
        return error_response(wire, internal, services.metrics)
    finally:
        if not streaming:
            services.metrics.in_flight.dec()


def _wants_usage(ctx: RequestContext) -> bool:
    options = ctx.body.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))


async def _iterate(events: list[bytes]) -> AsyncIterator[bytes]:
    for event in events:
        yield event


async def relay(ctx: RequestContext) -> AsyncIterator[bytes]:
    """Pass the provider's events through as they come, rebuilding the response on the side."""
    assert ctx.reply is not None and ctx.reply.events is not None
    services, wire, events = ctx.services, ctx.wire, ctx.reply.events
    accumulator, keep_usage = wire.accumulator(), _wants_usage(ctx)
    opened = time.perf_counter()
    try:
        async for event in events:
            if ctx.timings.first_byte is None:
                ctx.timings.upstream_s += time.perf_counter() - opened
                ctx.timings.first_byte = time.perf_counter()
            text = accumulator.feed(event)
            cut = bool(text) and any(observer(text) for observer in ctx.stream_observers)
            if keep_usage or not wire.is_usage_only(event):
                yield event.raw
            if cut:
                for closing in wire.closing_events(accumulator.result()):
                    yield closing
                break
        ctx.response_body = accumulator.result()
        await services.pipeline.run_response(ctx)  # type: ignore[union-attr]
        yield comment("cachegate " + orjson.dumps(ctx.response_headers).decode())
    except (UpstreamError, ValueError) as exc:  # ValueError: a malformed event from the provider
        upstream = exc if isinstance(exc, UpstreamError) else UpstreamError(502, "the provider sent a malformed stream")
        error = upstream.to_gateway_error()
        services.metrics.errors.labels(wire.name, error.kind.value).inc()
        yield wire.stream_error_event(error)
    finally:
        services.metrics.in_flight.dec()
        await events.aclose()  # type: ignore[attr-defined]
