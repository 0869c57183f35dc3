"""Errors the gateway answers itself, rendered later in the caller's API shape (see gateway/wire)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class ErrorKind(Enum):
    """One error class; each wire format maps it to its own `type` string."""

    INVALID_REQUEST = "invalid_request"
    AUTHENTICATION = "authentication"
    PERMISSION = "permission"
    NOT_FOUND = "not_found"
    TOO_LARGE = "request_too_large"
    RATE_LIMIT = "rate_limit"
    UPSTREAM = "upstream"
    OVERLOADED = "overloaded"
    TIMEOUT = "timeout"
    AGENT_STOPPED = "agent_loop_stopped"
    BUDGET = "budget_exceeded"
    INTERNAL = "internal"


STATUS_BY_KIND: dict[ErrorKind, int] = {
    ErrorKind.INVALID_REQUEST: 400,
    ErrorKind.AUTHENTICATION: 401,
    ErrorKind.PERMISSION: 403,
    ErrorKind.NOT_FOUND: 404,
    ErrorKind.TOO_LARGE: 413,
    ErrorKind.RATE_LIMIT: 429,
    ErrorKind.UPSTREAM: 502,
    ErrorKind.OVERLOADED: 529,
    ErrorKind.TIMEOUT: 504,
    ErrorKind.AGENT_STOPPED: 400,  # each wire picks its own: WireFormat.block_status
    ErrorKind.INTERNAL: 500,
    ErrorKind.BUDGET: 402,  # not 429: a retry cannot help until the window resets
}


@dataclass(frozen=True, slots=True)
class ProviderError:
    """A provider's own error object, scrubbed of secrets (gateway/upstream/errors.py), in the API shape it
    came in: "openai" (type, code, param), "anthropic" (type) or "gemini" (code, status, details). A caller
    of the same shape gets those fields back as sent; every caller gets the message."""

    shape: str
    message: str
    fields: dict[str, Any]
    # Top-level fields beside the error object (Anthropic's `request_id`: the provider's id of the request).
    envelope: dict[str, Any] = field(default_factory=dict)

    def fields_for(self, shape: str) -> dict[str, Any]:
        return self.fields if shape == self.shape else {}

    def envelope_for(self, shape: str) -> dict[str, Any]:
        return self.envelope if shape == self.shape else {}


class GatewayError(Exception):
    """An error answered to the client; `status` defaults from the kind."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        param: str | None = None,
        code: str | None = None,
        retry_after: float | None = None,
        should_retry: bool | None = None,
        provider: ProviderError | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status if status is not None else STATUS_BY_KIND[kind]
        self.param = param
        self.code = code
        self.retry_after = retry_after
        # False: the answer carries `x-should-retry: false`, which the OpenAI and Anthropic SDKs (and the
        # clients built on them) obey over their status-based retry rules. For refusals a retry cannot fix.
        self.should_retry = should_retry
        self.provider = provider  # the provider's error this one passes on, if any


def bad_request(message: str, param: str | None = None) -> GatewayError:
    return GatewayError(ErrorKind.INVALID_REQUEST, message, param=param)
