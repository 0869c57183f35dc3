"""The relay of a provider's stream: events that arrive together leave together, unchanged and in order."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import orjson
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from gateway.wire.sse import encode
from tests.gateway_harness import TENANT_KEYS, running_gateway
from tests.servers import run_app_in_thread

USAGE = {"input_tokens": 12, "output_tokens": 9, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
MESSAGE = {
    "id": "msg_burst",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [],
    "stop_reason": None,
    "stop_sequence": None,
    "usage": {**USAGE, "output_tokens": 1},
}
PIECES = ["Here ", "are ", "the ", "files: ", "a.py, ", "b.py, ", "c.py", "."]


def provider_events() -> list[bytes]:
    events = [
        encode({"type": "message_start", "message": MESSAGE}, "message_start"),
        encode({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
               "content_block_start"),
        *(encode({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}},
                 "content_block_delta") for p in PIECES),
        encode({"type": "content_block_stop", "index": 0}, "content_block_stop"),
        encode({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 9}}, "message_delta"),
        encode({"type": "message_stop"}, "message_stop"),
    ]  # fmt: skip
    return events


async def messages(request: Request) -> Response:
    # The whole stream in one write, as a provider's burst (or a fast answer) reaches the gateway.
    return Response(b"".join(provider_events()), media_type="text/event-stream")


@pytest.fixture(scope="module")
def gateway_url() -> Iterator[str]:
    with run_app_in_thread(Starlette(routes=[Route("/v1/messages", messages, methods=["POST"])])) as provider:
        model = {"name": "burst", "provider": "anthropic", "model": "claude-sonnet-4-5", "api_base": provider}
        with running_gateway(models=[model]) as gw:
            yield gw.url


def chunked_response(url: str, body: bytes, headers: dict[str, str]) -> tuple[bytes, list[bytes]]:
    """The response head and its body's chunks as the gateway wrote them (HTTP/1.1 chunked framing)."""
    host, port = url.removeprefix("http://").split(":")
    head_lines = ["POST /v1/messages HTTP/1.1", f"host: {host}", "connection: close",
                  f"content-length: {len(body)}", *(f"{k}: {v}" for k, v in headers.items())]  # fmt: skip
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(("\r\n".join(head_lines) + "\r\n\r\n").encode() + body)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    chunks = []
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            break
        chunks.append(rest[:size])
        rest = rest[size + 2 :]
    return head, chunks


def test_events_that_arrive_together_are_sent_in_one_write(gateway_url: str) -> None:
    body = orjson.dumps(
        {"model": "burst", "max_tokens": 64, "stream": True, "messages": [{"role": "user", "content": "Files?"}]}
    )
    headers = {"x-api-key": TENANT_KEYS["acme"], "anthropic-version": "2023-06-01", "content-type": "application/json"}
    head, chunks = chunked_response(gateway_url, body, headers)
    assert head.startswith(b"HTTP/1.1 200"), head
    sent = b"".join(chunks)
    expected = provider_events()
    # Every event passes through unchanged and in order; only the final usage gains the gateway's cost.
    events = [event + b"\n\n" for event in sent.split(b"\n\n") if event and not event.startswith(b":")]
    assert len(events) == len(expected)
    for got, want in zip(events, expected, strict=True):
        if b"message_delta" in want:
            assert b'"cachegate"' in got
        else:
            assert got == want
    # 13 events in one provider read: the burst before the held-back end, then the end (one write each),
    # not one write per event.
    assert len(chunks) <= 3, [c[:40] for c in chunks]
