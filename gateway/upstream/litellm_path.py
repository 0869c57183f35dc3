"""The LiteLLM path: any provider LiteLLM supports, and any caller/provider format pair.

OpenAI-shaped callers go through `litellm.acompletion`; Anthropic-shaped ones through
`litellm.anthropic_messages`; Responses-shaped ones through `litellm.aresponses` (native for OpenAI-style
providers, LiteLLM's Responses-to-chat bridge for the others). LiteLLM converts to the provider's format.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import litellm
import orjson

from gateway.config import ModelConfig
from gateway.upstream.errors import UpstreamError, UpstreamTimeout, parse_retry_after
from gateway.upstream.side_loop import LITELLM_LOOP
from gateway.wire.allowed_tools import narrowed
from gateway.wire.sse import SSEEvent, encode, iter_events, parse_event

litellm.suppress_debug_info = True
litellm.turn_off_message_logging = True
# LiteLLM downloads http(s) image URLs of a caller's messages when converting between formats: keep its
# guard against private and loopback addresses on, whatever the environment says.
litellm.user_url_validation = True

T = TypeVar("T")
log = logging.getLogger("cachegate.upstream")

# Public fields of a wire that LiteLLM also reads as its own keyword arguments: `fallbacks` (Anthropic's
# beta server-side fallbacks) would run LiteLLM's fallback loop; `metadata` feeds LiteLLM's router and
# pricing logic (model_info, model_group, user_api_key_* ...). Anthropic's metadata goes on as its one
# public key; OpenAI's is not sent by LiteLLM to the provider anyway (preview flag), so it is dropped.
LITELLM_RESERVED = frozenset({"fallbacks", "metadata"})


def _metadata(wire: str, body: dict[str, Any]) -> dict[str, Any]:
    metadata = body.get("metadata")
    user_id = metadata.get("user_id") if isinstance(metadata, dict) else None
    return {"metadata": {"user_id": user_id}} if wire == "anthropic" and isinstance(user_id, str) else {}


def _provider_body(exc: Exception) -> dict[str, Any] | None:
    """The provider's JSON error body inside a LiteLLM exception, if any: on the exception, or (LiteLLM's
    NotFoundError) only on the provider exception it was raised while handling."""
    for error in (exc, exc.__cause__, exc.__context__):
        body = getattr(error, "body", None)
        if isinstance(body, dict) and ("message" in body or "error" in body):
            return body
    # LiteLLM quotes the provider's body after its own prefix, sometimes as a bytes repr (b'{...}').
    message = str(getattr(exc, "message", ""))
    start = message.find("{")
    try:
        payload = json.JSONDecoder().raw_decode(message, start)[0] if start >= 0 else None
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def _retry_after(exc: Exception) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    return parse_retry_after(headers.get("retry-after") if hasattr(headers, "get") else None)


async def call_litellm(route: ModelConfig, call: Callable[[], Awaitable[T]]) -> T:
    """`call()` on LiteLLM's own loop (gateway/upstream/side_loop.py), its failures in the gateway's terms."""
    try:
        return await LITELLM_LOOP.run(call())
    except litellm.Timeout as exc:
        raise UpstreamTimeout() from exc
    except Exception as exc:
        # LiteLLM's text carries its class names, URLs and the provider's raw body: it goes nowhere; the
        # log gets the class and status, the caller our own words (gateway/upstream/errors.py).
        status = getattr(exc, "status_code", None)
        log.warning("litellm upstream: %s (status %s) for model %s", type(exc).__name__, status, route.name)
        if isinstance(exc, litellm.APIConnectionError):
            raise UpstreamError(502, "The gateway could not reach the provider.") from exc
        if not isinstance(status, int):
            raise UpstreamError(502, "The provider call failed.") from exc
        if "overloaded_error" in str(getattr(exc, "message", "")):
            status = 529  # LiteLLM reports Anthropic's 529 as a 500; keep it retryable-as-overload
        raise UpstreamError.from_provider(
            status, _provider_body(exc), secrets=(route.api_key(),), retry_after=_retry_after(exc)
        ) from exc


def _to_dict(response: Any) -> dict[str, Any]:
    if isinstance(response, dict):
        return dict(response)
    dumped: dict[str, Any] = response.model_dump(exclude_none=False, warnings=False)
    return dumped


@functools.cache
def _keep_gemini_system_instruction(litellm_model: str) -> None:
    """Every model of the Gemini API takes `systemInstruction`, but LiteLLM sends it only for models its map
    says support system messages, and folds it into the first user turn for the others (new models): tell
    its map this one does (once per model; prices are left to the map and the gateway's price table)."""
    if not litellm.supports_system_messages(litellm_model, "gemini"):
        litellm.register_model({litellm_model: {"litellm_provider": "gemini", "supports_system_messages": True}})


class LiteLLMUpstream:
    def _kwargs(self, wire: str, route: ModelConfig, api_base: str | None, body: dict[str, Any]) -> dict[str, Any]:
        # `body` holds only the wire's public fields (router.call); the gateway's own arguments come last.
        params = {k: v for k, v in body.items() if k not in ("model", "stream_options", *LITELLM_RESERVED)}
        if isinstance(params.get("tools"), list):
            # LiteLLM's adapters may change the tools they are given in place (schema clean-ups); the
            # body's may be the prompt cache's, shared by later requests (prompt_cache/tools_part.py).
            params["tools"] = orjson.loads(orjson.dumps(params["tools"]))
        if wire == "openai" and route.lean_wire != "openai":
            params = narrowed(params)
        if route.provider == "gemini":
            _keep_gemini_system_instruction(route.litellm_model)
        return {
            **params,
            **_metadata(wire, body),
            "model": route.litellm_model,
            "api_base": api_base,
            # LiteLLM refuses to call without a key; with none configured, let the provider answer
            # (401), exactly as the lean path does.
            "api_key": route.api_key() or "no-key-configured",
            "timeout": route.timeout_s,
            "num_retries": 0,  # retries and fallbacks are the router's job
            # LiteLLM's MCP gateway would act on `mcp` tools naming "litellm_proxy" or a URL: not ours.
            "_skip_mcp_handler": True,
        }

    async def complete(
        self, wire: str, route: ModelConfig, api_base: str | None, body: dict[str, Any], headers: dict[str, str]
    ) -> dict[str, Any]:
        kwargs = self._kwargs(wire, route, api_base, {**body, "stream": False})
        if wire == "openai":
            return _to_dict(await call_litellm(route, lambda: litellm.acompletion(**kwargs)))
        if wire == "responses":
            return _to_dict(await call_litellm(route, lambda: litellm.aresponses(**kwargs)))
        return _to_dict(await call_litellm(route, lambda: litellm.anthropic_messages(**kwargs)))

    async def open_stream(
        self, wire: str, route: ModelConfig, api_base: str | None, body: dict[str, Any], headers: dict[str, str]
    ) -> AsyncIterator[SSEEvent]:
        kwargs = self._kwargs(wire, route, api_base, {**body, "stream": True})
        if wire == "openai":
            kwargs["stream_options"] = {"include_usage": True}
            chunks = await call_litellm(route, lambda: litellm.acompletion(**kwargs))
            return _openai_events(route, chunks)
        if wire == "responses":
            return _named_events(route, await call_litellm(route, lambda: litellm.aresponses(**kwargs)))
        stream = await call_litellm(route, lambda: litellm.anthropic_messages(**kwargs))
        # Only an Anthropic provider's stream is passed through; LiteLLM's adapters write the others.
        return _named_events(route, stream, translated=route.provider != "anthropic")


# Where LiteLLM keeps the chat stream it reads under the stream it returns: its Responses bridge (aresponses
# to a chat-only provider) and its Anthropic adapter (AnthropicSSEStream -> AnthropicStreamWrapper ->
# chunk splitter) each wrap one.
INNER_STREAMS = ("litellm_custom_stream_wrapper", "_anthropic_wrapper", "completion_stream", "_stream")


def _chat_stream(stream: Any) -> litellm.CustomStreamWrapper | None:
    """The LiteLLM chat stream under `stream` (itself for acompletion), or None (native pass-through)."""
    for _ in range(len(INNER_STREAMS) + 1):
        if isinstance(stream, litellm.CustomStreamWrapper):
            return stream
        stream = next((getattr(stream, name) for name in INNER_STREAMS if hasattr(stream, name)), None)
    return None


def _ended_without_reason(chat: litellm.CustomStreamWrapper | None) -> bool:
    """LiteLLM ends a chat stream the provider cut short (it skips an event it cannot parse) with a made-up
    finish_reason "stop" and usage of its own estimate: a stream whose end the provider never gave a reason
    for is a broken one, not an answer."""
    return (
        chat is not None
        and chat.sent_last_chunk
        and chat.received_finish_reason is None
        and chat.intermittent_finish_reason is None
    )


async def _guard_stream(
    route: ModelConfig, events: AsyncIterator[SSEEvent], stream: Any, translated: bool = False
) -> AsyncIterator[SSEEvent]:
    """The events, or an UpstreamError where the stream broke: `translated`, an `error` event is LiteLLM's
    own (its exception's text, class names included), not the provider's."""
    chat = _chat_stream(stream)
    try:
        async for event in events:
            if _ended_without_reason(chat):  # before the made-up end reaches the caller, the cache or usage
                log.warning("litellm upstream: stream ended without a finish reason for model %s", route.name)
                raise UpstreamError(502, "The provider sent a malformed stream.")
            if translated and event.event == "error":
                log.warning("litellm upstream: its adapter's stream failed for model %s", route.name)
                raise UpstreamError(502, "The gateway lost the provider's stream.")
            yield event
    except UpstreamError:
        raise
    except Exception as exc:
        log.warning("litellm upstream: stream broke with %s for model %s", type(exc).__name__, route.name)
        raise UpstreamError(502, "The gateway lost the provider's stream.") from exc


async def _openai_events(route: ModelConfig, chunks: Any) -> AsyncIterator[SSEEvent]:
    async def events() -> AsyncIterator[SSEEvent]:
        async for chunk in LITELLM_LOOP.iterate(chunks):
            yield parse_event(encode(_to_dict(chunk)))
        yield parse_event(b"data: [DONE]\n\n")

    async for event in _guard_stream(route, events(), chunks):
        yield event


async def _named_events(route: ModelConfig, stream: Any, translated: bool = False) -> AsyncIterator[SSEEvent]:
    """Events that carry their name in `type` (Anthropic Messages, OpenAI Responses), as SSE events."""

    async def raw() -> AsyncIterator[bytes]:
        async for item in LITELLM_LOOP.iterate(stream):
            if isinstance(item, bytes | bytearray):
                yield bytes(item)
            else:
                payload = item if isinstance(item, dict) else _to_dict(item)
                kind = payload.get("type")
                # LiteLLM's Responses events type themselves with a str Enum: its value is the event name.
                yield encode(payload, str(getattr(kind, "value", kind)))

    async for event in _guard_stream(route, iter_events(raw()), stream, translated):
        yield event
