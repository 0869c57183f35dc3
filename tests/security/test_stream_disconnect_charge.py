"""A stream whose client hangs up before the provider's final usage is still charged what the provider
generated: the gateway reads on to the stream's end without the client, then usage, token rate and budgets
run (issue 26, finding 3). A drain is bounded (`stream_drain_s`): past it, and for a provider that reports
no usage, the charge is an estimate of what was streamed, never zero."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from gateway.wire.sse import encode
from tests.core.conftest import CORE_POLICY
from tests.gateway_harness import ADMIN_HEADERS, RunningGateway, running_gateway
from tests.governance.test_rate_limits import limited
from tests.redis_target import empty_redis
from tests.servers import run_app_in_thread

PROMPT_TOKENS, GENERATED = 12, 15_000  # what the provider reports: the client never sees the usage
PAUSE_S = 1.0  # between the answer's end (finish_reason, the last text block) and the provider's usage
STALL_S = 30.0  # a provider that stops sending after the answer's end
PIECES = [f"word{i} " for i in range(60)]
CHAT_HEAD = {"id": "chatcmpl-drain", "object": "chat.completion.chunk", "created": 0, "model": "gpt-4o-mini"}
MESSAGE = {
    "id": "msg_drain",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [],
    "stop_reason": None,
    "stop_sequence": None,
    "usage": {"input_tokens": PROMPT_TOKENS, "output_tokens": 1},
}


def chat_chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    return encode({**CHAT_HEAD, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


async def chat_events(mode: str) -> AsyncIterator[bytes]:
    """A provider's chat stream: the answer, then (after a pause, or a stall) its usage; none in `no-usage`."""
    yield chat_chunk({"role": "assistant", "content": ""})
    for piece in PIECES:
        yield chat_chunk({"content": piece})
    yield chat_chunk({}, "stop")
    if mode == "no-usage":
        yield b"data: [DONE]\n\n"
        return
    await asyncio.sleep(STALL_S if mode == "stall" else PAUSE_S)
    usage = {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": GENERATED, "total_tokens": PROMPT_TOKENS + GENERATED}
    yield encode({**CHAT_HEAD, "choices": [], "usage": usage})
    yield b"data: [DONE]\n\n"


async def message_events(mode: str) -> AsyncIterator[bytes]:
    yield encode({"type": "message_start", "message": MESSAGE}, "message_start")
    block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    yield encode(block, "content_block_start")
    for piece in PIECES:
        delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}
        yield encode(delta, "content_block_delta")
    yield encode({"type": "content_block_stop", "index": 0}, "content_block_stop")
    await asyncio.sleep(STALL_S if mode == "stall" else PAUSE_S)
    end = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": GENERATED}}
    yield encode(end, "message_delta")
    yield encode({"type": "message_stop"}, "message_stop")


def mode_of(body: dict[str, Any]) -> str:
    text = str(body.get("messages"))
    return next((mode for mode in ("no-usage", "stall") if f"[[{mode}]]" in text), "pause")


async def chat(request: Request) -> StreamingResponse:
    return StreamingResponse(chat_events(mode_of(await request.json())), media_type="text/event-stream")


async def messages(request: Request) -> StreamingResponse:
    return StreamingResponse(message_events(mode_of(await request.json())), media_type="text/event-stream")


PROVIDER = Starlette(
    routes=[
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/v1/messages", messages, methods=["POST"]),
    ]
)


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    with run_app_in_thread(PROVIDER) as url:
        yield url


def gateway(provider: str, path: str, **overrides: Any) -> AbstractContextManager[RunningGateway]:
    models = [
        {"name": "gpt-4o-mini", "provider": "openai", "model": "gpt-4o-mini", "api_base": f"{provider}/v1"},
        {"name": "claude-sonnet-4-5", "provider": "anthropic", "model": "claude-sonnet-4-5", "api_base": provider},
    ]
    models = [{**m, "path": path, "retries": 0} for m in models]
    budget = {"budgets": [{"window": "day", "tokens": 10_000_000}]}
    return running_gateway(**limited(budget, models=models, policy=CORE_POLICY, **overrides))


@pytest.fixture(scope="module")
def gw(request: pytest.FixtureRequest, provider: str) -> Iterator[RunningGateway]:
    with gateway(provider, request.param) as running:
        yield running


def in_flight(gw: RunningGateway) -> float:
    return gw.services.metrics.registry.get_sample_value("cachegate_in_flight_requests") or 0.0


def spent(gw: RunningGateway) -> int:
    rows = httpx.get(f"{gw.url}/admin/budgets", headers=ADMIN_HEADERS).json()["budgets"]
    return int(next(r for r in rows if r["tenant"] == "acme" and r["scope"] == "tenant")["tokens_spent"])


def charged_since(gw: RunningGateway, before: int, within_s: float = 15.0) -> int:
    """Tokens charged since `before`, once the charge lands (the drain runs after the client has left)."""
    deadline = time.monotonic() + within_s
    while (now := spent(gw)) == before and time.monotonic() < deadline:
        time.sleep(0.1)
    return now - before


def hang_up_after_the_answer(gw: RunningGateway, wire: str, mode: str = "pause") -> str:
    """Stream a request with a real SDK and close the stream once the answer is complete (OpenAI: its
    finish_reason; Anthropic: its last content block), before the provider's usage arrives."""
    text = f"[[{mode}]] tell me everything"
    seen = []
    if wire == "openai":
        stream = gw.openai().chat.completions.create(
            model="gpt-4o-mini", max_tokens=20_000, stream=True, messages=[{"role": "user", "content": text}]
        )
        for chunk in stream:
            seen += [c.delta.content or "" for c in chunk.choices]
            if any(c.finish_reason for c in chunk.choices):
                break
        stream.close()
    else:
        events = gw.anthropic().messages.create(
            model="claude-sonnet-4-5", max_tokens=20_000, stream=True, messages=[{"role": "user", "content": text}]
        )
        for event in events:
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                seen.append(event.delta.text)
            if event.type == "content_block_stop":
                break
        events.close()
    return "".join(seen)


# LiteLLM's Anthropic pass-through hands the last content block on only with the provider's usage: there a
# client cannot leave in between.
@pytest.mark.parametrize(
    ("gw", "wire"), [("lean", "openai"), ("lean", "anthropic"), ("litellm", "openai")], indirect=["gw"]
)
def test_a_stream_closed_before_its_usage_is_charged_what_the_provider_generated(gw: RunningGateway, wire: str) -> None:
    before = spent(gw)
    assert hang_up_after_the_answer(gw, wire) == "".join(PIECES)
    # Before: the relay was cancelled with its client and gave its hold back, charging nothing.
    assert charged_since(gw, before) == PROMPT_TOKENS + GENERATED


def test_a_drain_past_its_limit_stops_and_charges_an_estimate(provider: str) -> None:
    with gateway(provider, "lean", stream_drain_s=0.5) as gw:
        before = spent(gw)
        started = time.monotonic()
        hang_up_after_the_answer(gw, "openai", mode="stall")
        charged = charged_since(gw, before)
        assert time.monotonic() - started < STALL_S / 2  # stopped at its limit, not at the provider's end
        # The provider's count never came: the input and what was streamed, at 3 characters a token.
        assert len("".join(PIECES)) // 3 < charged < GENERATED
        assert in_flight(gw) == 0  # nothing left running


def test_a_drain_still_running_at_shutdown_is_stopped_and_charged(provider: str) -> None:
    with empty_redis() as url:
        with gateway(provider, "lean", redis_url=url) as gw:
            before = spent(gw)
            hang_up_after_the_answer(gw, "openai", mode="stall")
            time.sleep(0.5)
            assert in_flight(gw) == 1  # the provider stalls: the request is still in flight, drained
            stopping = time.monotonic()
        assert time.monotonic() - stopping < STALL_S / 2  # the shutdown did not wait for the provider
        with gateway(provider, "lean", redis_url=url) as again:  # the charge is in the shared store
            assert spent(again) - before > len("".join(PIECES)) // 3


def test_a_stream_without_usage_is_charged_an_estimate(provider: str) -> None:
    with gateway(provider, "lean") as gw:
        before = spent(gw)
        stream = gw.openai().chat.completions.create(
            model="gpt-4o-mini", stream=True, messages=[{"role": "user", "content": "[[no-usage]] hi"}]
        )
        assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "".join(PIECES)
        # Before: no usage in the stream was a charge of zero.
        assert charged_since(gw, before) > len("".join(PIECES)) // 3
