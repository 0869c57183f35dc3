"""The proxy endpoints: one handler for both API shapes, parameterised by the wire format."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from typing import Any

import anyio
import orjson
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.api import endpoints
from gateway.api.body import read_bytes
from gateway.api.drain import ClientEnd, DrainLimits, Drains, drains_of
from gateway.api.errors import error_response
from gateway.api.gemini import PREFIXES as GEMINI_PREFIXES
from gateway.api.gemini import gemini_endpoint
from gateway.api.headers import request_headers, sendable
from gateway.context import RequestContext
from gateway.errors import ErrorKind, GatewayError
from gateway.governance.estimate import CUT_SHORT
from gateway.logs import log_failure
from gateway.metrics import GatewayMetrics
from gateway.services import Services
from gateway.stages.telemetry import record
from gateway.stages.usage import stream_cost
from gateway.upstream.errors import UpstreamError
from gateway.wire import ANTHROPIC, OPENAI, RESPONSES, WireFormat
from gateway.wire.sse import SSEEvent, comment, parse_event

log = logging.getLogger("cachegate.proxy")
SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}
MAX_HELD = 4  # events held back after a final usage event (it is followed by `[DONE]` / `message_stop`)


async def chat_completions(request: Request) -> Response:
    return await proxy(request, OPENAI)


async def messages(request: Request) -> Response:
    return await proxy(request, ANTHROPIC)


async def responses(request: Request) -> Response:
    return await proxy(request, RESPONSES)


ROUTES = {
    "/v1/chat/completions": chat_completions,
    "/v1/messages": messages,
    "/v1/responses": responses,
    "/v1/messages/count_tokens": endpoints.count_tokens,
    "/v1/embeddings": endpoints.embeddings,
    "/v1/completions": endpoints.completions,
}


class DirectRoutes:
    """ASGI middleware serving the proxy endpoints itself, ahead of FastAPI's router, dependency solving
    and exception layers (~20% of a proxied request's CPU, bench/overhead), which these handlers never
    use. Anything else, the same paths with another method included, goes on to FastAPI unchanged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint = None
        if scope["type"] == "http" and scope["method"] == "POST":
            path = scope["path"]
            endpoint = gemini_endpoint if path.startswith(GEMINI_PREFIXES) else ROUTES.get(path)
        if endpoint is None:
            await self.app(scope, receive, send)
            return
        response = await endpoint(Request(scope, receive, send))
        await response(scope, receive, send)


class InFlight:
    """One request's slot in the in-flight gauge and, for a relayed stream, the provider's stream:
    released exactly once, whether the request answered, failed, was cancelled, or its stream never
    started (the client left before the first byte)."""

    def __init__(self, metrics: GatewayMetrics) -> None:
        self.metrics = metrics
        self.events: AsyncIterator[Any] | None = None
        self.finishers: list[Callable[[], Awaitable[None]]] = []  # the request's (ctx.finishers)
        self.released = False
        metrics.in_flight.inc()

    async def release(self) -> None:
        if self.released:
            return
        self.released = True
        self.metrics.in_flight.dec()
        while self.finishers:  # taken off as they run: a finisher that holds the request holds no cycle after
            finish = self.finishers.pop(0)
            try:
                with anyio.CancelScope(shield=True):
                    await finish()
            except Exception:
                log_failure(log, "a request finisher failed")
        close = getattr(self.events, "aclose", None)
        if close is None:
            return
        try:
            with anyio.CancelScope(shield=True):  # a cancelled request must still close its connection
                await close()
        except Exception:
            log_failure(log, "closing the provider stream failed")


class RelayResponse(StreamingResponse):
    """A relayed stream that releases its request's slot however the response ends, even if the relay
    generator never ran. A client that leaves does not stop the relay (Starlette's would cancel it): it
    runs on as a drain, so the provider's usage is read and charged (gateway/api/drain.py)."""

    def __init__(
        self, content: AsyncIterator[bytes], slot: InFlight, client: ClientEnd, drains: Drains, headers: dict[str, str]
    ) -> None:
        super().__init__(content, media_type="text/event-stream", headers=headers)
        self.slot, self.client, self.drains = slot, client, drains

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        relaying = asyncio.ensure_future(self._relay(self.client.forward(send)))
        watching = asyncio.ensure_future(self.listen_for_disconnect(receive))
        try:
            await asyncio.wait((relaying, watching), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the server is going down
            relaying.cancel()
            raise
        finally:
            watching.cancel()
        if relaying.done():
            relaying.result()
            return
        self.client.leave()
        self.drains.keep(relaying, self.client)

    async def _relay(self, send: Send) -> None:
        try:
            await self.stream_response(send)
        finally:
            await self.slot.release()


async def proxy(
    request: Request,
    wire: WireFormat,
    *,
    path_model: str | None = None,
    path_stream: bool | None = None,
    query_key: str | None = None,
    json_array: bool = False,
) -> Response:
    """One request through the pipeline. APIs that carry the model or streaming in the URL pass them in
    (`path_model`, `path_stream`); `json_array` answers with `[response]` (Gemini's non-SSE stream)."""
    services: Services = request.app.state.services
    assert services.pipeline is not None
    slot = InFlight(services.metrics)
    handed_off = False  # a relayed stream releases its slot itself, when it ends
    ctx = RequestContext(
        wire=wire,
        body={},
        headers=request_headers(request),
        services=services,
        policy=services.settings.policy,  # the global policy until routing picks the request's own
        read_body=lambda: read_bytes(request, services.settings.max_body_bytes),
        path_model=path_model,
        path_stream=path_stream,
        query_key=query_key,
    )
    slot.finishers = ctx.finishers
    for name in wire.request_id_headers:  # on every answer, errors included
        ctx.response_headers[name] = ctx.request_id
    try:
        await services.pipeline.run_request(ctx)
        assert ctx.reply is not None
        if ctx.reply.events is not None:
            slot.events = ctx.reply.events
            settings = services.settings
            client = ClientEnd(DrainLimits(settings.stream_drain_s, settings.stream_drain_bytes))
            headers = {**SSE_HEADERS, **sendable(ctx.response_headers)}
            response: Response = RelayResponse(relay(ctx, slot, client), slot, client, drains_of(services), headers)
            handed_off = True
            return response
        ctx.response_body = ctx.reply.body
        await services.pipeline.run_response(ctx)
        assert ctx.response_body is not None
        headers = sendable(ctx.response_headers)
        if ctx.stream:
            events = _with_cost(ctx, wire.replay_events(ctx.response_body, include_usage=_wants_usage(ctx)))
            return StreamingResponse(
                _iterate(events), media_type="text/event-stream", headers={**SSE_HEADERS, **headers}
            )
        content = [ctx.response_body] if json_array else ctx.response_body
        return Response(orjson.dumps(content), media_type="application/json", headers=headers)
    except GatewayError as error:
        return _failed(ctx, error)
    except Exception:
        log_failure(log, "unexpected error while proxying")
        return _failed(ctx, GatewayError(ErrorKind.INTERNAL, "The gateway failed to process the request."))
    finally:
        if not handed_off:
            await slot.release()


def _failed(ctx: RequestContext, error: GatewayError) -> Response:
    """The error answer, counted and logged like any other request (telemetry's one line)."""
    record(ctx, error)
    return error_response(ctx.wire, error, ctx.services.metrics, sendable(ctx.response_headers))


def _wants_usage(ctx: RequestContext) -> bool:
    return ctx.wire.usage_requested(ctx.body)


async def _iterate(events: list[bytes]) -> AsyncIterator[bytes]:
    for event in events:
        yield event


def _with_cost(ctx: RequestContext, events: list[bytes]) -> list[bytes]:
    """A replayed stream's events, its final usage event carrying the cost fields."""
    extra = stream_cost(ctx)
    if not extra:
        return events
    out = []
    for raw in events:
        event = parse_event(raw) if raw.startswith((b"data:", b"event:")) else None
        out.append(ctx.wire.with_usage_extra(event, extra) if event and ctx.wire.is_final_usage(event) else raw)
    return out


async def relay(ctx: RequestContext, slot: InFlight, client: ClientEnd) -> AsyncIterator[bytes]:
    """Pass the provider's events through as they come, rebuilding the response on the side.

    The final usage event (and the one or two events after it: `[DONE]`, `message_stop`) is held back
    until the response stages have run, then sent with the cost fields in its usage (`usage.cachegate`):
    the cost is known only once the provider's last usage is. Nothing else is buffered: events that
    arrived in one read go on in one write (a write per event was a tenth of a stream's CPU)."""
    assert ctx.reply is not None and ctx.reply.events is not None
    services, wire, events = ctx.services, ctx.wire, ctx.reply.events
    accumulator, keep_usage = wire.accumulator(), _wants_usage(ctx)
    held: list[SSEEvent] = []
    out: list[bytes] = []  # events to send in the next write
    closing: list[bytes] = []  # the end of a stream the gateway cut, sent after the response stages too
    opened = time.perf_counter()
    try:
        async with aclosing(client.events(events)) as provided:  # closed on a cut too: its drain bound ends
            async for event in provided:
                if ctx.timings.first_byte is None:
                    ctx.timings.upstream_s += time.perf_counter() - opened
                    ctx.timings.first_byte = time.perf_counter()
                text = accumulator.feed(event)
                cut = bool(text) and any(observer(text) for observer in ctx.stream_observers)
                if not keep_usage and wire.is_usage_only(event):
                    pass  # asked for on the client's behalf: not sent
                elif held or (keep_usage and wire.is_final_usage(event)):  # the cost fields go only to who asked
                    held.append(event)
                    if len(held) > MAX_HELD:  # not the stream's end after all: never buffer a stream
                        out += (passed.raw for passed in held)
                        held = []
                else:
                    out.append(event.raw)
                if cut:
                    # Held back like a stream's own end: a client that hangs up at `[DONE]` must not keep the
                    # response stages (usage, the guard's strike, budgets) from running.
                    closing = [*(e.raw for e in held), *wire.closing_events(accumulator.result())]
                    held = []
                    break
                if out and not event.followed:
                    yield b"".join(out)
                    out = []
        if out:
            yield b"".join(out)
            out = []
        if client.cut:  # its client left, and the drain stopped before the provider's end: partial, never cached
            ctx.gateway_written = True
            ctx.notes[CUT_SHORT] = True
        ctx.response_body = accumulator.result()
        await services.pipeline.run_response(ctx)  # type: ignore[union-attr]
        extra = stream_cost(ctx)
        out = _with_cost_on_last(wire, held, extra)
        held = []
        out += closing
        if wire.sse_comments:
            out.append(comment("cachegate " + orjson.dumps(sendable(ctx.response_headers)).decode()))
        if out:
            yield b"".join(out)
    except Exception as exc:  # the stream has started: the error can only travel as an event
        error = _stream_error(exc)
        services.metrics.errors.labels(wire.name, error.kind.value).inc()
        record(ctx, error)
        yield b"".join([*out, *(event.raw for event in held), wire.stream_error_event(error)])
    finally:
        await slot.release()


def _with_cost_on_last(wire: WireFormat, held: list[SSEEvent], extra: dict[str, float | int]) -> list[bytes]:
    """The held events, the cost fields in the last usage event's usage only: a provider can send usage
    twice (on its finish chunk, then in the usage chunk the gateway asked for)."""
    last = max((i for i, e in enumerate(held) if wire.is_final_usage(e)), default=-1) if extra else -1
    return [wire.with_usage_extra(e, extra) if extra and i == last else e.raw for i, e in enumerate(held)]


def _stream_error(exc: Exception) -> GatewayError:
    if isinstance(exc, GatewayError):
        return exc
    if isinstance(exc, UpstreamError):
        return exc.to_gateway_error()
    if isinstance(exc, ValueError):  # a malformed event from the provider
        return UpstreamError(502, "the provider sent a malformed stream").to_gateway_error()
    log_failure(log, "unexpected error while relaying a stream")
    return GatewayError(ErrorKind.INTERNAL, "The gateway failed while relaying the stream.")
