"""The LiteLLM path: any provider LiteLLM supports, and any caller/provider format pair.

OpenAI-shaped callers go through `litellm.acompletion`; Anthropic-shaped ones through
`litellm.anthropic_messages` (LiteLLM converts to the provider's format either way).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import litellm
import orjson

from gateway.config import ModelConfig
from gateway.upstream.errors import UpstreamError, UpstreamTimeout
from gateway.wire.sse import SSEEvent, encode, iter_events, parse_event

litellm.suppress_debug_info = True
litellm.turn_off_message_logging = True

T = TypeVar("T")


def _scrub(message: str, secret: str | None) -> str:
    return message.replace(secret, "***") if secret else message


async def _call(route: ModelConfig, call: Callable[[], Awaitable[T]]) -> T:
    try:
        return await call()
    except litellm.Timeout as exc:
        raise UpstreamTimeout() from exc
    except Exception as exc:
        status = getattr(exc, "status_code", None)
        if not isinstance(status, int):
            raise UpstreamError(502, f"provider call failed ({type(exc).__name__})") from exc
        message = _scrub(str(getattr(exc, "message", exc)), route.api_key())[:2000]
        if "overloaded_error" in message:
            status = 529  # LiteLLM reports Anthropic's 529 as a 500; keep it retryable-as-overload
        headers = getattr(getattr(exc, "response", None), "headers", None) or {}
        retry_after = headers.get("retry-after") if hasattr(headers, "get") else None
        raise UpstreamError(status, message, retry_after=float(retry_after) if retry_after else None) from exc


def _to_dict(response: Any) -> dict[str, Any]:
    if isinstance(response, dict):
        return dict(response)
    dumped: dict[str, Any] = response.model_dump(exclude_none=False)
    return dumped


class LiteLLMUpstream:
    def _kwargs(self, route: ModelConfig, api_base: str | None, body: dict[str, Any]) -> dict[str, Any]:
        params = {k: v for k, v in body.items() if k not in ("model", "stream_options")}
        return {
            **params,
            "model": route.litellm_model,
            "api_base": api_base,
            # LiteLLM refuses to call without a key; with none configured, let the provider answer
            # (401), exactly as the lean path does.
            "api_key": route.api_key() or "no-key-configured",
            "timeout": route.timeout_s,
            "num_retries": 0,  # retries and fallbacks are the router's job
        }

    async def complete(
        self, wire: str, route: ModelConfig, api_base: str | None, body: dict[str, Any], headers: dict[str, str]
    ) -> dict[str, Any]:
        kwargs = self._kwargs(route, api_base, {**body, "stream": False})
        if wire == "openai":
            return _to_dict(await _call(route, lambda: litellm.acompletion(**kwargs)))
        return _to_dict(await _call(route, lambda: litellm.anthropic_messages(**kwargs)))

    async def open_stream(
        self, wire: str, route: ModelConfig, api_base: str | None, body: dict[str, Any], headers: dict[str, str]
    ) -> AsyncIterator[SSEEvent]:
        kwargs = self._kwargs(route, api_base, {**body, "stream": True})
        if wire == "openai":
            kwargs["stream_options"] = {"include_usage": True}
            chunks = await _call(route, lambda: litellm.acompletion(**kwargs))
            return _openai_events(route, chunks)
        stream = await _call(route, lambda: litellm.anthropic_messages(**kwargs))
        return _anthropic_events(route, stream)


async def _guard_stream(route: ModelConfig, events: AsyncIterator[SSEEvent]) -> AsyncIterator[SSEEvent]:
    try:
        async for event in events:
            yield event
    except UpstreamError:
        raise
    except Exception as exc:
        raise UpstreamError(502, _scrub(f"the provider stream broke ({type(exc).__name__})", route.api_key())) from exc


async def _openai_events(route: ModelConfig, chunks: Any) -> AsyncIterator[SSEEvent]:
    async def events() -> AsyncIterator[SSEEvent]:
        async for chunk in chunks:
            yield parse_event(encode(_to_dict(chunk)))
        yield parse_event(b"data: [DONE]\n\n")

    async for event in _guard_stream(route, events()):
        yield event


async def _anthropic_events(route: ModelConfig, stream: Any) -> AsyncIterator[SSEEvent]:
    async def raw() -> AsyncIterator[bytes]:
        async for item in stream:
            if isinstance(item, bytes | bytearray):
                yield bytes(item)
            else:
                payload = item if isinstance(item, dict) else _to_dict(item)
                yield b"event: " + str(payload.get("type")).encode() + b"\ndata: " + orjson.dumps(payload) + b"\n\n"

    async for event in _guard_stream(route, iter_events(raw())):
        yield event
