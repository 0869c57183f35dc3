"""Upstream failures, and how each reaches the client after retries.

A caller sees our own message, by status ("The provider rejected the request (400).") and, for request
validation errors only, the provider's own message from its JSON error body, scrubbed of URLs, addresses
and key-like tokens and shortened: it says what to fix ("max_tokens: ... too large"). Never LiteLLM's text,
exception class names, internal URLs or keys; a 429's text can name the gateway's provider organisation
and a 5xx's text is of no use to the caller, so neither is shown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import orjson

from gateway.errors import ErrorKind, GatewayError

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}
# Statuses whose provider message tells the caller what to fix in its request.
PROVIDER_TEXT_STATUSES = {400, 404, 413, 422}
MAX_PROVIDER_TEXT_CHARS = 300

_SCRUB = [
    re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://\S*"),  # URLs of any scheme
    re.compile(r"\b(?:sk|pk|rk|org|proj|key|sess)-[A-Za-z0-9*_.\-]{4,}", re.IGNORECASE),  # keys, org ids
    re.compile(r"\bBearer\s+\S+", re.IGNORECASE),
    re.compile(r"[A-Za-z0-9_\-+/=]{40,}"),  # long opaque tokens
    re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"),  # IPv4 addresses
    re.compile(r"\b[\w.-]+:\d{2,5}\b"),  # host:port
]
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def scrub(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Provider text fit for a caller: no URLs, hosts, key-like tokens or control characters; short."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    for pattern in _SCRUB:
        text = pattern.sub("***", text)
    text = _CONTROL.sub(" ", text).strip()
    return text[:MAX_PROVIDER_TEXT_CHARS].rstrip() + ("…" if len(text) > MAX_PROVIDER_TEXT_CHARS else "")


def provider_json_message(content: bytes | str | dict[str, Any]) -> str | None:
    """The `error.message` (or top-level `message`) of a provider's JSON error body, if it has one."""
    try:
        payload: Any = content if isinstance(content, dict) else orjson.loads(content)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(payload, dict):
        return None
    error = payload.get("error", payload)
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) and message.strip() else None


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
    """`message` is the gateway's own text (safe for callers); `provider_message` the provider's, scrubbed."""

    def __init__(
        self, status: int, message: str, *, retry_after: float | None = None, provider_message: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after
        self.provider_message = provider_message

    @classmethod
    def from_provider(
        cls,
        status: int,
        provider_text: str | None,
        *,
        secrets: Iterable[str | None] = (),
        retry_after: float | None = None,
    ) -> UpstreamError:
        """A provider's HTTP error: our message for its status, its own text only where it helps the caller."""
        shown = scrub(provider_text, secrets) if provider_text and status in PROVIDER_TEXT_STATUSES else None
        return cls(status, describe(status), retry_after=retry_after, provider_message=shown or None)

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
        message = self.message
        if self.provider_message:
            message = f"{message.rstrip('.')}: {self.provider_message}"
        return GatewayError(kind, message, status=status, retry_after=self.retry_after)


class UpstreamTimeout(UpstreamError):
    def __init__(self, message: str = "The upstream provider did not answer in time.") -> None:
        super().__init__(504, message)


def parse_retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value else None
    except ValueError:
        return None
