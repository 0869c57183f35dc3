"""Provider errors and their two wire shapes (OpenAI and Anthropic)."""

from __future__ import annotations

import uuid
from enum import StrEnum

from starlette.responses import JSONResponse


class ErrorKind(StrEnum):
    INVALID_REQUEST = "invalid_request"
    AUTHENTICATION = "authentication"
    NOT_FOUND = "not_found"
    RATE_LIMIT = "rate_limit"
    SERVER = "server"
    OVERLOADED = "overloaded"
    TIMEOUT = "timeout"


class SimError(Exception):
    """An error answered the way the real provider would answer it."""

    def __init__(
        self,
        status: int,
        kind: ErrorKind,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.param = param
        self.code = code
        self.headers = headers or {}


_OPENAI_TYPES = {
    ErrorKind.INVALID_REQUEST: "invalid_request_error",
    ErrorKind.AUTHENTICATION: "invalid_request_error",
    ErrorKind.NOT_FOUND: "invalid_request_error",
    ErrorKind.RATE_LIMIT: "requests",
    ErrorKind.SERVER: "server_error",
    ErrorKind.OVERLOADED: "server_error",
    ErrorKind.TIMEOUT: "timeout",
}

_ANTHROPIC_TYPES = {
    ErrorKind.INVALID_REQUEST: "invalid_request_error",
    ErrorKind.AUTHENTICATION: "authentication_error",
    ErrorKind.NOT_FOUND: "not_found_error",
    ErrorKind.RATE_LIMIT: "rate_limit_error",
    ErrorKind.SERVER: "api_error",
    ErrorKind.OVERLOADED: "overloaded_error",
    ErrorKind.TIMEOUT: "timeout_error",
}


def openai_error_response(error: SimError) -> JSONResponse:
    body = {
        "error": {
            "message": error.message,
            "type": _OPENAI_TYPES[error.kind],
            "param": error.param,
            "code": error.code,
        }
    }
    return JSONResponse(body, status_code=error.status, headers=error.headers)


def anthropic_error_response(error: SimError) -> JSONResponse:
    request_id = f"req_sim{uuid.uuid4().hex[:20]}"
    body = {
        "type": "error",
        "error": {"type": _ANTHROPIC_TYPES[error.kind], "message": error.message},
        "request_id": request_id,
    }
    headers = {"request-id": request_id, **error.headers}
    return JSONResponse(body, status_code=error.status, headers=headers)


def invalid_request(message: str, *, param: str | None = None) -> SimError:
    return SimError(400, ErrorKind.INVALID_REQUEST, message, param=param)
