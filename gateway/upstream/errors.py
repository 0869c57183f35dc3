"""Upstream failures, and how each reaches the client after retries.

A caller sees our own message, by status ("The provider rejected the request (400)."), except for request
validation errors (400/404/413/422): there the provider's own error object passes through (its message,
and the type, code, param, status and details a caller of the same API shape reads), scrubbed only of
secrets: the route's key, key-like tokens, bearer tokens, URLs and hosts. Ids in the text (`rs_...`,
`call_...`) are the caller's own and stay. Never LiteLLM's text, exception class names, internal URLs or
keys; a 429's text can name the gateway's provider organisation and a 5xx's text is of no use to the
caller, so neither is shown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import orjson

from gateway.errors import ErrorKind, GatewayError, ProviderError

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}
# Statuses whose provider error tells the caller what to fix in its request.
PROVIDER_TEXT_STATUSES = {400, 404, 413, 422}
# A bound on what a provider can make us echo; real validation messages are a few hundred characters.
MAX_PROVIDER_TEXT_CHARS = 4000

# Secrets only: what would tell a caller the gateway's credentials or where its providers are.
_SECRETS = [
    re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://\S*"),  # URLs of any scheme (internal endpoints, proxies)
    re.compile(r"\b(?:sk|sess)-[A-Za-z0-9*_.\-]{4,}"),  # OpenAI/Anthropic-style keys (sk-, sk-proj-, sk-ant-)
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),  # Google API keys
    re.compile(r"\bBearer\s+\S+", re.IGNORECASE),
    re.compile(r"\beyJ[\w-]+\.[\w-]+\.[\w-]*"),  # JWTs (bearer tokens by another name)
    re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"),  # IPv4 addresses
    re.compile(r"\b(?:localhost|[\w-]+(?:\.[\w-]+)+):\d{2,5}\b"),  # host:port
]
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]+")  # newlines and tabs are text; JSON escapes them

# The fields of each shape's error object that a caller of the same shape gets back as sent.
_SHAPE_FIELDS = {
    "openai": ("type", "code", "param"),
    "anthropic": ("type",),
    "gemini": ("code", "status", "details"),
}


def scrub(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Provider text fit for a caller: no keys, tokens, URLs, hosts or control characters; bounded."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    for pattern in _SECRETS:
        text = pattern.sub("***", text)
    text = _CONTROL.sub(" ", text)
    return text if len(text) <= MAX_PROVIDER_TEXT_CHARS else text[:MAX_PROVIDER_TEXT_CHARS] + "…"


def _scrubbed(value: Any, secrets: tuple[str | None, ...], depth: int = 0) -> Any:
    """Every string inside a field (Gemini's `details` nest a few levels), scrubbed; deeper nesting dropped."""
    if isinstance(value, str):
        return scrub(value, secrets)
    if depth > 8:
        return None
    if isinstance(value, list):
        return [_scrubbed(item, secrets, depth + 1) for item in value]
    if isinstance(value, dict):
        return {str(key): _scrubbed(item, secrets, depth + 1) for key, item in value.items()}
    return value


def _payload(content: bytes | str | dict[str, Any] | list[Any]) -> dict[str, Any] | None:
    try:
        payload: Any = orjson.loads(content) if isinstance(content, bytes | str) else content
    except orjson.JSONDecodeError:
        return None
    if isinstance(payload, list) and len(payload) == 1:  # Gemini's streaming endpoint wraps it in an array
        payload = payload[0]
    return payload if isinstance(payload, dict) else None


def provider_error(
    content: bytes | str | dict[str, Any] | list[Any], secrets: Iterable[str | None] = ()
) -> ProviderError | None:
    """The error object of a provider's JSON error body (OpenAI `{"error": {message, type, param, code}}`,
    Anthropic `{"type": "error", "error": {type, message}}`, Gemini `{"error": {code, message, status,
    details}}`), scrubbed of secrets; None without a message."""
    payload = _payload(content)
    error = payload.get("error", payload) if payload else None
    message = error.get("message") if isinstance(error, dict) else None
    if not isinstance(error, dict) or not isinstance(message, str) or not message.strip():
        return None
    if payload is not None and payload.get("type") == "error":
        shape = "anthropic"
    elif isinstance(error.get("status"), str) and isinstance(error.get("code"), int):
        shape = "gemini"
    else:
        shape = "openai"
    hidden = tuple(secrets)
    fields = {key: _scrubbed(error[key], hidden) for key in _SHAPE_FIELDS[shape] if key in error}
    request_id = payload.get("request_id") if payload is not None and shape == "anthropic" else None
    envelope = {"request_id": _scrubbed(request_id, hidden)} if isinstance(request_id, str) else {}
    return ProviderError(shape=shape, message=scrub(message, hidden), fields=fields, envelope=envelope)


def describe(status: int) -> str:
    """Our own words for a provider's HTTP status."""
    if status == 429:
        return "The provider is rate limiting requests (429)."
    if status in (529, 503):
        return f"The provider is overloaded ({status})."
    if 400 <= status < 500:
        return f"The provider rejected the request ({status})."
    return f"The provider failed to answer ({status})."


class UpstreamError(Exception):
    """`message` is the gateway's own text (safe for callers); `provider` the provider's error, scrubbed."""

    def __init__(
        self, status: int, message: str, *, retry_after: float | None = None, provider: ProviderError | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after
        self.provider = provider

    @classmethod
    def from_provider(
        cls,
        status: int,
        body: bytes | str | dict[str, Any] | list[Any] | None,
        *,
        secrets: Iterable[str | None] = (),
        retry_after: float | None = None,
    ) -> UpstreamError:
        """A provider's HTTP error: our message for its status; its own error object (`body`, its JSON error
        body) only where it helps the caller."""
        shown = provider_error(body, secrets) if body is not None and status in PROVIDER_TEXT_STATUSES else None
        return cls(status, describe(status), retry_after=retry_after, provider=shown)

    @property
    def retryable(self) -> bool:
        return self.status in RETRYABLE_STATUS

    def to_gateway_error(self) -> GatewayError:
        kind = {
            400: ErrorKind.INVALID_REQUEST,
            404: ErrorKind.NOT_FOUND,
            413: ErrorKind.TOO_LARGE,
            422: ErrorKind.INVALID_REQUEST,
            429: ErrorKind.RATE_LIMIT,
            503: ErrorKind.OVERLOADED,
            504: ErrorKind.TIMEOUT,
            529: ErrorKind.OVERLOADED,
        }.get(self.status, ErrorKind.UPSTREAM)
        if self.status in (401, 403):
            # The client's key is ours; a provider refusing ours is a gateway-side problem.
            # A retry meets the same credentials: tell the client's SDK not to (the status stays a 502).
            return GatewayError(
                ErrorKind.UPSTREAM, "The upstream provider rejected the gateway's credentials.", should_retry=False
            )
        status = self.status if kind is not ErrorKind.UPSTREAM else 502
        message = self.provider.message if self.provider else self.message
        return GatewayError(kind, message, status=status, retry_after=self.retry_after, provider=self.provider)


class UpstreamTimeout(UpstreamError):
    def __init__(self, message: str = "The upstream provider did not answer in time.") -> None:
        super().__init__(504, message)


def parse_retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value else None
    except ValueError:
        return None
