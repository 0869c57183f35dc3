"""Reading a request body within the configured size limit."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import Request

from gateway.errors import ErrorKind, GatewayError, bad_request


async def read_json(request: Request, limit: int) -> Any:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise GatewayError(ErrorKind.TOO_LARGE, f"Request body exceeds the {limit}-byte limit.")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise GatewayError(ErrorKind.TOO_LARGE, f"Request body exceeds the {limit}-byte limit.")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw:
        raise bad_request("Request body is empty; expected a JSON object.")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise bad_request(f"Request body is not valid JSON: {exc.msg} (position {exc.pos}).") from exc
