"""The parts of one request/response exchange that both APIs share: auth, body, directives, faults, timing."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from gateway.sim.conversation import Turn
from gateway.sim.directives import Directives, parse_directives
from gateway.sim.errors import ErrorKind, SimError, invalid_request
from gateway.sim.faults import FAULT_HEADER, SimulatedDisconnect, raise_error_fault
from gateway.sim.json_mode import JsonSchema
from gateway.sim.latency import decode_time, pause, time_to_first_token
from gateway.sim.replay import ReplayIndex
from gateway.sim.responses import Reply, plan_reply
from gateway.sim.settings import FaultKind, LatencySettings, SimSettings
from gateway.sim.state import SimState


def api_key(request: Request, settings: SimSettings, rejection: str) -> str:
    """The caller's key (Bearer or x-api-key); cache state is kept per key."""
    authorization = request.headers.get("authorization", "")
    key = request.headers.get("x-api-key") or authorization.removeprefix("Bearer ").strip()
    if settings.require_key is not None and key != settings.require_key:
        raise SimError(401, ErrorKind.AUTHENTICATION, rejection, code="invalid_api_key")
    return key


async def read_body(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.body())
    except ValueError as error:
        raise invalid_request(f"We could not parse the JSON body of your request. ({error})") from error
    if not isinstance(body, dict):
        raise invalid_request("The request body must be a JSON object.")
    return body


async def read_request(request: Request, state: SimState, api: str, rejection: str) -> tuple[str, dict[str, Any]]:
    """The caller's key and JSON body; the body is recorded for /sim/requests (when
    record_requests is on) before any API rule is checked."""
    key = api_key(request, state.settings, rejection)
    body = await read_body(request)
    if state.settings.record_requests:
        state.stats.record_request(api, request.url.path, dict(request.headers), body)
    return key, body


def _directive_text(grouped: list[list[Turn]]) -> str:
    """User-written text of the LAST message (system messages after it aside): directives anywhere else
    are history, not instructions."""
    spoken = [turns for turns in grouped if any(turn.kind != "system" for turn in turns)]
    if not spoken:
        return ""
    return "\n".join(turn.text for turn in spoken[-1] if turn.kind == "user")


def _loop_directive(grouped: list[list[Turn]]) -> tuple[str, dict[str, Any]] | None:
    """A `loop` directive in any user-written text: it stays in force while tool results follow (agents
    add their own text, such as reminders, to the messages that carry tool results)."""
    for turns in reversed(grouped):
        for turn in turns:
            if turn.kind == "user" and "[[sim:loop" in turn.text:
                loop = parse_directives(turn.text).loop
                if loop is not None:
                    return loop
    return None


@dataclass(frozen=True)
class Conversation:
    """The request's turns (grouped per message) and the directives of its last message."""

    grouped: list[list[Turn]]
    directives: Directives

    @classmethod
    def of(cls, grouped: list[list[Turn]]) -> Conversation:
        directives = parse_directives(_directive_text(grouped))
        if directives.loop is None:
            directives = replace(directives, loop=_loop_directive(grouped))
        return cls(grouped, directives)

    def reply(
        self,
        replay: ReplayIndex | None,
        tool_id_prefix: str,
        forced_tool: str | None,
        json_schema: JsonSchema | None = None,
        tools_offered: bool = True,
    ) -> Reply:
        turns = [turn for turns in self.grouped for turn in turns if turn.kind != "system"]
        return plan_reply(
            turns,
            self.directives,
            replay,
            tool_id_prefix=tool_id_prefix,
            forced_tool=forced_tool,
            json_schema=json_schema,
            tools_offered=tools_offered,
        )


async def choose_fault(request: Request, state: SimState, model: str, directives: Directives) -> FaultKind | None:
    """The fault this response gets (header, directive or random); an error fault is raised as its SimError."""
    fault = state.faults.choose(model, request.headers.get(FAULT_HEADER), directives.fault)
    if fault is not None:
        state.stats.count(model, **{f"fault_{fault.value}": 1})
        await raise_error_fault(fault, state.settings)
    return fault


@dataclass(frozen=True)
class SseEvent:
    data: str
    event: str | None = None  # Anthropic names its events; OpenAI sends bare `data:` lines
    carries_output: bool = False  # paced by the decode time

    def encode(self) -> bytes:
        head = f"event: {self.event}\n" if self.event else ""
        return f"{head}data: {self.data}\n\n".encode()

    def broken(self) -> bytes:
        """The same event cut in the middle of its JSON (a malformed stream)."""
        head = f"event: {self.event}\n" if self.event else ""
        return f"{head}data: {self.data[: len(self.data) // 2]}\n\n".encode()


@dataclass(frozen=True)
class Timing:
    ttft_s: float
    decode_s: float

    @classmethod
    def simulated(
        cls, latency: LatencySettings, uncached_tokens: int, cached_tokens: int, output_tokens: int
    ) -> Timing:
        return cls(time_to_first_token(latency, uncached_tokens, cached_tokens), decode_time(latency, output_tokens))


def stream_response(
    events: list[SseEvent],
    timing: Timing,
    on_start: Callable[[], None],
    fault: FaultKind | None,
    headers: dict[str, str] | None = None,
) -> StreamingResponse:
    """SSE response paced by the latency model; `on_start` runs when the first token is produced.
    `headers`: the provider's own (rate limits)."""
    paced = [event for event in events if event.carries_output]
    per_event_s = timing.decode_s / len(paced) if paced else 0.0

    async def body() -> AsyncIterator[bytes]:
        await pause(timing.ttft_s)
        on_start()
        outputs = 0
        for event in events:
            if event.carries_output:
                outputs += 1
                if outputs == 2 and fault is FaultKind.MALFORMED_STREAM:
                    yield event.broken()
                    return
                if outputs == 2 and fault is FaultKind.DISCONNECT:
                    raise SimulatedDisconnect("simulated disconnect mid-stream")
                await pause(per_event_s)
            yield event.encode()

    return StreamingResponse(
        body(), media_type="text/event-stream", headers={"cache-control": "no-cache", **(headers or {})}
    )


async def json_response(
    payload: dict[str, Any],
    timing: Timing,
    on_start: Callable[[], None],
    fault: FaultKind | None,
    headers: dict[str, str] | None = None,
) -> Response:
    """Non-streaming answer: wait prefill, mark the response started, wait decode, send the body.
    `headers`: the provider's own (rate limits)."""
    await pause(timing.ttft_s)
    on_start()
    await pause(timing.decode_s)
    text = json.dumps(payload)
    if fault is FaultKind.MALFORMED_STREAM:
        return Response(text[: len(text) // 2], media_type="application/json", headers=headers)
    if fault is FaultKind.DISCONNECT:
        partial = _partial_then_drop(text[: len(text) // 2])
        return StreamingResponse(partial, media_type="application/json", headers=headers)
    return JSONResponse(payload, headers=headers)


async def _partial_then_drop(partial: str) -> AsyncIterator[bytes]:
    yield partial.encode()
    raise SimulatedDisconnect("simulated disconnect mid-response")


def split_text(text: str, words: int) -> list[str]:
    """Stream deltas of `words` words each (whitespace kept, so the deltas join back to the text)."""
    pieces = re.findall(r"\s*\S+\s*", text) or ([text] if text else [])
    return ["".join(pieces[i : i + words]) for i in range(0, len(pieces), words)]


def split_json(arguments: str, size: int = 24) -> list[str]:
    return [arguments[i : i + size] for i in range(0, len(arguments), size)] or [""]
