"""Upstream failures, and how each reaches the client after retries."""

from __future__ import annotations

from gateway.errors import ErrorKind, GatewayError

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}


class UpstreamError(Exception):
    def __init__(self, status: int, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after

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
            return GatewayError(ErrorKind.UPSTREAM, "The upstream provider rejected the gateway's credentials.")
        status = self.status if kind is not ErrorKind.UPSTREAM else 502
        return GatewayError(kind, f"Upstream error: {self.message}", status=status, retry_after=self.retry_after)


class UpstreamTimeout(UpstreamError):
    def __init__(self, message: str = "The upstream provider did not answer in time.") -> None:
        super().__init__(504, message)


def parse_retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value else None
    except ValueError:
        return None
