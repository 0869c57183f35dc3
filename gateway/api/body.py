"""Reading a request body within the configured size limit and a nesting-depth limit."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from starlette.requests import Request

from gateway.errors import ErrorKind, GatewayError, bad_request

# Levels of JSON nesting a request may have (the body object is level 1). Real requests are shallow
# (tool arguments travel as strings; a content block inside a tool result is level 7, JSON schemas of
# tools rarely pass 20), while orjson refuses to write more than 254 levels (so a deeper body could be
# read but never forwarded) and to read more than 1024; recursive stage helpers are bounded by it too.
MAX_JSON_DEPTH = 64
ORJSON_DEPTH_ERROR = "depth limit exceeded"
# Bodies larger than this have their depth checked in a worker thread: the walk is pure Python (35-60 ms
# for 100,000 messages), and there the interpreter hands the event loop the GIL every few milliseconds.
# Below it the walk (~2 ms a MiB) runs inline: for an agent's 100-200 KB history (~0.1 ms), handing it to a
# thread and back cost two to three times the walk's CPU.
THREADED_DEPTH_CHECK_BYTES = 1024 * 1024


def too_deep() -> GatewayError:
    return bad_request(f"Request body nests JSON more than {MAX_JSON_DEPTH} levels deep (the nesting depth limit).")


def json_depth_exceeds(value: Any, limit: int) -> bool:
    """True when containers nest more than `limit` levels. Level by level, iterative (no recursion on
    hostile input) and visiting only containers: ~4 ms for a 2 MB conversation."""
    level = [value]
    for _ in range(limit):
        below = []
        for node in level:
            for child in node.values() if type(node) is dict else node:
                if type(child) is dict or type(child) is list:  # exact types: what orjson builds
                    below.append(child)
        if not below:
            return False
        level = below
    return True


async def read_json(request: Request, limit: int) -> Any:
    return await parse_json(await read_bytes(request, limit))


async def read_bytes(request: Request, limit: int) -> bytes:
    """The body's bytes, refused past `limit`."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise GatewayError(ErrorKind.TOO_LARGE, f"Request body exceeds the {limit}-byte limit.")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise GatewayError(ErrorKind.TOO_LARGE, f"Request body exceeds the {limit}-byte limit.")
        chunks.append(chunk)
    return b"".join(chunks)


async def parse_json(raw: bytes) -> Any:
    """The JSON value of a body, refused when empty, invalid or nested past MAX_JSON_DEPTH."""
    body = load_json(raw)
    await check_depth(body, len(raw))
    return body


def load_json(raw: bytes) -> Any:
    """The JSON value of a body, refused when empty or invalid (its depth not checked yet: `check_depth`)."""
    if not raw:
        raise bad_request("Request body is empty; expected a JSON object.")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if exc.msg == ORJSON_DEPTH_ERROR:
            raise too_deep() from exc
        raise bad_request(f"Request body is not valid JSON: {exc.msg} (position {exc.pos}).") from exc


async def check_depth(value: Any, size: int) -> None:
    """Refuse a value nested past MAX_JSON_DEPTH (`size`: its JSON's bytes, which decide the thread)."""
    if type(value) in (dict, list):
        if size > THREADED_DEPTH_CHECK_BYTES:
            deep = await asyncio.to_thread(json_depth_exceeds, value, MAX_JSON_DEPTH)
        else:
            deep = json_depth_exceeds(value, MAX_JSON_DEPTH)
        if deep:
            raise too_deep()
