"""Errors the gateway answers itself, rendered later in the caller's API shape (see gateway/wire)."""

from __future__ import annotations

from enum import Enum


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
    ErrorKind.AGENT_STOPPED: 403,  # not 409: SDKs and Claude Code retry 409 (docs/loop-guard.md)
    ErrorKind.INTERNAL: 500,
    ErrorKind.BUDGET: 402,  # not 429: a retry cannot help until the window resets
}


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


def bad_request(message: str, param: str | None = None) -> GatewayError:
    return GatewayError(ErrorKind.INVALID_REQUEST, message, param=param)
