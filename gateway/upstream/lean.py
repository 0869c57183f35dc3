"""The lean path: the caller's wire format sent as is to a provider that speaks it, over one shared
HTTP session. It skips LiteLLM's per-call conversion, cost and logging plumbing (~7 ms of CPU a call).

The session is aiohttp's: httpx's connection pool checks every pooled connection on each request (a
readability syscall per connection), which cost ~2 ms of CPU a request at 32 requests in flight, ten
times aiohttp's whole request (bench/overhead).
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import AsyncIterator
from functools import lru_cache
from typing import Any
from urllib.parse import quote

import aiohttp
import certifi
import orjson
from aiohttp.helpers import get_env_proxy_for_url
from yarl import URL

from gateway.config import ModelConfig
from gateway.pools.headroom import note_rate_limits
from gateway.upstream.errors import UpstreamError, UpstreamTimeout, parse_retry_after
from gateway.wire.fields import forwarded_headers
from gateway.wire.sse import SSEEvent, iter_events

ANTHROPIC_VERSION = "2023-06-01"

log = logging.getLogger("cachegate.upstream")


def request_headers(wire: str, api_key: str | None, incoming: dict[str, str]) -> dict[str, str]:
    headers = {"content-type": "application/json"}
    headers.update(forwarded_headers(incoming))
    if wire == "anthropic":
        headers.setdefault("anthropic-version", ANTHROPIC_VERSION)
        if api_key:
            headers["x-api-key"] = api_key
    elif wire == "gemini":
        if api_key:
            headers["x-goog-api-key"] = api_key  # never `?key=`: query strings end up in proxies' logs
    elif api_key:
        headers["authorization"] = f"Bearer {api_key}"
    return headers


ENDPOINTS = {"openai": "/chat/completions", "responses": "/responses", "anthropic": "/v1/messages"}
# Gemini names the model and the streaming form in the path, not in the body.
GEMINI_METHODS = {False: ":generateContent", True: ":streamGenerateContent?alt=sse"}


def endpoint(wire: str, api_base: str, model: str = "", *, stream: bool = False) -> str:
    base = api_base.rstrip("/")
    if wire == "gemini":  # a base with its version (as LiteLLM takes it) or the host alone
        version = "" if base.endswith(("/v1beta", "/v1")) else "/v1beta"
        return f"{base}{version}/models/{quote(model, safe='')}{GEMINI_METHODS[stream]}"
    return base + ENDPOINTS[wire]


def with_model(wire: str, body: dict[str, Any], route: ModelConfig) -> dict[str, Any]:
    """The body naming the route's provider model, where the wire names it in the body."""
    return body if wire == "gemini" else {**body, "model": route.model}


def timeout(route: ModelConfig) -> aiohttp.ClientTimeout:
    """Like httpx.Timeout(timeout_s, connect=min(timeout_s, 10)): per read, not for the whole response."""
    return aiohttp.ClientTimeout(
        total=None, connect=route.timeout_s, sock_connect=min(route.timeout_s, 10.0), sock_read=route.timeout_s
    )


@lru_cache(maxsize=256)
def env_proxy(url: str) -> tuple[URL | None, aiohttp.BasicAuth | None]:
    """The environment's proxy for a URL (HTTP(S)_PROXY, NO_PROXY), read once per URL as httpx did per
    client: aiohttp's trust_env would re-read the environment and ~/.netrc on every request."""
    try:
        return get_env_proxy_for_url(URL(url))
    except LookupError:
        return None, None


def new_session() -> aiohttp.ClientSession:
    # The same trust as httpx had: certifi's CAs. An idle connection is dropped after 4 s, before a server
    # with the common 5 s idle timeout (uvicorn's, Node's) closes it: reusing one the server is closing
    # resets the request sent on it.
    connector = aiohttp.TCPConnector(
        limit=1000, limit_per_host=0, keepalive_timeout=4.0, ssl=ssl.create_default_context(cafile=certifi.where())
    )
    return aiohttp.ClientSession(connector=connector)


async def _error(route: ModelConfig, response: aiohttp.ClientResponse) -> UpstreamError:
    """Only the provider's JSON error object can reach the caller (scrubbed); any other body is dropped."""
    return UpstreamError.from_provider(
        response.status,
        await response.read(),
        secrets=(route.api_key(), _qualified(response.url.host)),
        retry_after=parse_retry_after(response.headers.get("retry-after")),
    )


def _qualified(host: str | None) -> str | None:
    """The provider's host name, a secret when internal; a single label ("api") would also hit plain words."""
    return host if host and "." in host else None


def _unreachable(route: ModelConfig, exc: aiohttp.ClientError, what: str) -> UpstreamError:
    # The exception's class and text (addresses, proxy URLs) go to the log, not to the caller.
    log.warning("lean upstream: %s for model %s (%s)", what, route.name, type(exc).__name__)
    return UpstreamError(502, f"The gateway {what}.")


class LeanUpstream:
    def __init__(self) -> None:
        # The aiohttp session opens on first use, inside the serving event loop.
        self._session: aiohttp.ClientSession | None = None

    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = new_session()
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def _post(
        self, wire: str, route: ModelConfig, url: str, payload: dict[str, Any], headers: dict[str, str]
    ) -> aiohttp.ClientResponse:
        proxy, proxy_auth = env_proxy(url)
        response = await self.session().post(
            url,
            data=orjson.dumps(payload),
            headers=request_headers(wire, route.api_key(), headers),
            timeout=timeout(route),
            proxy=proxy,
            proxy_auth=proxy_auth,
        )
        note_rate_limits(response.headers)  # the deployment's headroom (gateway/pools/headroom.py)
        return response

    async def post_json(
        self, wire: str, route: ModelConfig, url: str, body: dict[str, Any], headers: dict[str, str]
    ) -> dict[str, Any]:
        """One JSON POST to a provider endpoint (chat, count_tokens, embeddings, completions) with the
        route's provider model in `model`."""
        try:
            async with await self._post(wire, route, url, with_model(wire, body, route), headers) as response:
                if response.status >= 400:
                    raise await _error(route, response)
                content = await response.read()
        except TimeoutError as exc:
            raise UpstreamTimeout() from exc
        except aiohttp.ClientError as exc:
            raise _unreachable(route, exc, "could not reach the provider") from exc
        return _json(content)

    async def post_stream(
        self, wire: str, route: ModelConfig, url: str, body: dict[str, Any], headers: dict[str, str]
    ) -> AsyncIterator[SSEEvent]:
        """Like post_json for a streamed answer: the provider's events, once its status is known."""
        try:
            response = await self._post(wire, route, url, with_model(wire, body, route), headers)
            if response.status >= 400:
                async with response:
                    raise await _error(route, response)
        except TimeoutError as exc:
            raise UpstreamTimeout() from exc
        except aiohttp.ClientError as exc:
            raise _unreachable(route, exc, "could not reach the provider") from exc
        return _events(route, response)

    async def complete(
        self, wire: str, route: ModelConfig, api_base: str | None, body: dict[str, Any], headers: dict[str, str]
    ) -> dict[str, Any]:
        return await self.post_json(wire, route, _chat_url(wire, route, api_base, stream=False), body, headers)

    async def open_stream(
        self, wire: str, route: ModelConfig, api_base: str | None, body: dict[str, Any], headers: dict[str, str]
    ) -> AsyncIterator[SSEEvent]:
        """Open the stream and wait for its status, so errors can still be retried before any byte."""
        if wire == "openai":
            body = {**body, "stream_options": {**(body.get("stream_options") or {}), "include_usage": True}}
        return await self.post_stream(wire, route, _chat_url(wire, route, api_base, stream=True), body, headers)


def _chat_url(wire: str, route: ModelConfig, api_base: str | None, *, stream: bool) -> str:
    assert api_base, "the router resolves a base URL for every lean route"
    return endpoint(wire, api_base, route.model, stream=stream)


def _json(content: bytes) -> dict[str, Any]:
    try:
        result = orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        raise UpstreamError(502, "The provider sent a malformed response.") from exc
    if not isinstance(result, dict):
        raise UpstreamError(502, "The provider sent a malformed response.")
    return result


async def _events(route: ModelConfig, response: aiohttp.ClientResponse) -> AsyncIterator[SSEEvent]:
    try:
        async for event in iter_events(response.content.iter_any()):
            yield event
    except TimeoutError as exc:
        raise UpstreamTimeout("The provider stopped sending mid-stream.") from exc
    except aiohttp.ClientError as exc:
        raise _unreachable(route, exc, "lost the provider's stream") from exc
    finally:
        # A stream left unread (the client went away, the gateway cut it) closes its connection.
        response.release()
