"""A trivial OpenAI- and Anthropic-shaped upstream: a fixed completion, streamed or not, no work at all.

    python -m bench.overhead.upstream --port 8901 [--delay 1.5]

`--delay`: every answer waits that long first (a provider stand-in with a fixed latency, for
bench/production_load.py). The input tokens it reports follow the request's size (a token per 4 bytes,
about what the recorded agent sessions' JSON counts): the gateway reads a provider's count of a
session's last turn (gateway/compaction/provider_count.py), so a fixed count would mislead it.

Responses are pre-encoded per model, so the upstream's own cost is the ASGI server's and Starlette's.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator
from functools import cache

import orjson
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

TEXT = "Hello from the bench upstream: a short, fixed completion of a dozen tokens."
PIECES = 8  # streamed text deltas
USAGE = {"prompt_tokens": 24, "completion_tokens": 16, "total_tokens": 40}
ANTHROPIC_USAGE = {
    "input_tokens": 24,
    "output_tokens": 16,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}
CREATED = 1_700_000_000
BYTES_A_TOKEN = 4


def _pieces() -> list[str]:
    step = -(-len(TEXT) // PIECES)
    return [TEXT[i : i + step] for i in range(0, len(TEXT), step)]


def _sse(data: object, event: str | None = None) -> bytes:
    head = b"event: " + event.encode() + b"\n" if event else b""
    return head + b"data: " + orjson.dumps(data) + b"\n\n"


@cache
def openai_body(model: str) -> bytes:
    message = {"role": "assistant", "content": TEXT, "refusal": None}
    return orjson.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": CREATED,
            "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}],
            "usage": USAGE,
        }
    )


@cache
def openai_events(model: str, include_usage: bool) -> tuple[bytes, ...]:
    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": CREATED, "model": model}

    def chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
        return _sse({**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]})

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": piece}) for piece in _pieces()]
    events.append(chunk({}, "stop"))
    if include_usage:
        events.append(_sse({**base, "choices": [], "usage": USAGE}))
    events.append(b"data: [DONE]\n\n")
    return tuple(events)


def _message(model: str) -> dict[str, object]:
    return {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": TEXT}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": ANTHROPIC_USAGE,
    }


@cache
def anthropic_body(model: str) -> bytes:
    return orjson.dumps(_message(model))


@cache
def anthropic_events(model: str) -> tuple[bytes, ...]:
    start = {**_message(model), "content": [], "stop_reason": None, "usage": {**ANTHROPIC_USAGE, "output_tokens": 1}}
    events = [
        _sse({"type": "message_start", "message": start}, "message_start"),
        _sse(
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            "content_block_start",
        ),
    ]
    events += [
        _sse(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}},
            "content_block_delta",
        )
        for piece in _pieces()
    ]
    events.append(_sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
    events.append(
        _sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": ANTHROPIC_USAGE["output_tokens"]},
            },
            "message_delta",
        )
    )
    events.append(_sse({"type": "message_stop"}, "message_stop"))
    return tuple(events)


def input_tokens(raw: bytes) -> int:
    return max(1, len(raw) // BYTES_A_TOKEN)


def _counted(data: bytes, tokens: int) -> bytes:
    """Pre-encoded bytes with the request's input tokens in place of the fixed count."""
    if b'"usage"' not in data:
        return data
    total = tokens + USAGE["completion_tokens"]
    data = data.replace(b'"prompt_tokens":24', b'"prompt_tokens":%d' % tokens)
    data = data.replace(b'"total_tokens":40', b'"total_tokens":%d' % total)
    return data.replace(b'"input_tokens":24', b'"input_tokens":%d' % tokens)


async def _stream(events: tuple[bytes, ...]) -> AsyncIterator[bytes]:
    for event in events:
        yield event


def _answer(body: bytes, events: tuple[bytes, ...] | None, tokens: int) -> Response:
    if events is not None:
        counted = tuple(_counted(event, tokens) for event in events)
        return StreamingResponse(_stream(counted), media_type="text/event-stream")
    return Response(_counted(body, tokens), media_type="application/json")


DELAY_S = 0.0  # set by --delay


async def chat_completions(request: Request) -> Response:
    raw = await request.body()
    payload = orjson.loads(raw)
    if DELAY_S:
        await asyncio.sleep(DELAY_S)
    model = str(payload.get("model", ""))
    if payload.get("stream"):
        include_usage = bool((payload.get("stream_options") or {}).get("include_usage"))
        return _answer(b"", openai_events(model, include_usage), input_tokens(raw))
    return _answer(openai_body(model), None, input_tokens(raw))


async def messages(request: Request) -> Response:
    raw = await request.body()
    payload = orjson.loads(raw)
    if DELAY_S:
        await asyncio.sleep(DELAY_S)
    model = str(payload.get("model", ""))
    if payload.get("stream"):
        return _answer(b"", anthropic_events(model), input_tokens(raw))
    return _answer(anthropic_body(model), None, input_tokens(raw))


async def health(request: Request) -> Response:
    return Response(b"ok")


def create_app() -> Starlette:
    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/health", health),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds every answer waits first")
    args = parser.parse_args()
    global DELAY_S
    DELAY_S = args.delay
    uvicorn.run(
        create_app(),
        host="127.0.0.1",
        port=args.port,
        workers=1,
        loop="uvloop",
        http="httptools",
        log_level="warning",
        access_log=False,
    )


if __name__ == "__main__":
    main()
