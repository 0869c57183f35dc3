"""Unknown paths and methods: 404/405 in the shape the path implies, instead of FastAPI's {"detail": ...}.

/v1/messages* answers in Anthropic's shape, /v1beta/* in Gemini's, anything else in OpenAI's (whose own
answer to an unknown URL is a 404 `invalid_request_error` with code `unknown_url`). Counted in
cachegate_requests_total with the bounded api label "unknown". Errors raised on purpose by a route (an
admin endpoint's own 404) keep their detail.
"""

from __future__ import annotations

import re
from http import HTTPStatus
from typing import Any

import orjson
from fastapi import Request
from fastapi.exception_handlers import http_exception_handler
from starlette.exceptions import HTTPException
from starlette.responses import Response

from gateway.errors import ErrorKind, GatewayError
from gateway.services import Services
from gateway.wire import ANTHROPIC, OPENAI

MAX_ECHOED_PATH_CHARS = 100
_UNPRINTABLE = re.compile(r"[^\x21-\x7e]")
GEMINI_STATUS = {404: "NOT_FOUND", 405: "UNIMPLEMENTED"}


def _shown(path: str) -> str:
    """The caller's path as it may appear in a message: printable, short."""
    text = _UNPRINTABLE.sub("?", path[:MAX_ECHOED_PATH_CHARS])
    return text + ("..." if len(path) > MAX_ECHOED_PATH_CHARS else "")


def _message(status: int, method: str, path: str) -> str:
    if status == 405:
        return f"Method {_shown(method)} is not allowed on {_shown(path)}."
    return f"Unknown request URL: {_shown(method)} {_shown(path)}. Please check the URL for typos."


def error_body(status: int, method: str, path: str) -> tuple[str, dict[str, Any]]:
    """(api label for the error counter, body) for a route-level miss on `path`."""
    message = _message(status, method, path)
    if path.startswith("/v1beta/"):
        return "gemini", {"error": {"code": status, "message": message, "status": GEMINI_STATUS[status]}}
    kind = ErrorKind.NOT_FOUND if status == 404 else ErrorKind.INVALID_REQUEST
    if path.startswith("/v1/messages"):
        return ANTHROPIC.name, ANTHROPIC.error_body(GatewayError(kind, message, status=status))
    code = "unknown_url" if status == 404 else "method_not_allowed"
    return OPENAI.name, OPENAI.error_body(GatewayError(kind, message, status=status, code=code))


async def route_miss(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    routed_miss = exc.status_code in GEMINI_STATUS and exc.detail == HTTPStatus(exc.status_code).phrase
    if not routed_miss:
        return await http_exception_handler(request, exc)
    api, body = error_body(exc.status_code, request.method, request.url.path)
    services: Services = request.app.state.services
    services.metrics.requests.labels("unknown", "unknown", "unknown", "none", str(exc.status_code)).inc()
    services.metrics.errors.labels(api, "not_found" if exc.status_code == 404 else "method_not_allowed").inc()
    return Response(orjson.dumps(body), status_code=exc.status_code, media_type="application/json", headers=exc.headers)
