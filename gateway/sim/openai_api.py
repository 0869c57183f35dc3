"""POST /v1/chat/completions in OpenAI's Chat Completions wire format."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from gateway.sim.conversation import openai_turns
from gateway.sim.directives import parse_directives
from gateway.sim.errors import SimError, openai_error_response
from gateway.sim.exchange import (
    SseEvent,
    Timing,
    api_key,
    directive_text,
    flat_turns,
    json_response,
    read_body,
    split_json,
    split_text,
    stream_response,
)
from gateway.sim.faults import FAULT_HEADER, raise_error_fault
from gateway.sim.latency import decode_time, time_to_first_token
from gateway.sim.openai_cache import OpenAICachePlan, render_prompt
from gateway.sim.responses import Reply, limit_reply, output_tokens, plan_reply
from gateway.sim.state import SimState
from gateway.sim.tokens import encode, openai_encoding
from gateway.sim.validation import check_openai_request

_REJECTED_KEY = "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."


def _usage(plan: OpenAICachePlan, output_tokens: int) -> dict[str, Any]:
    return {
        "prompt_tokens": plan.prompt_tokens,
        "completion_tokens": output_tokens,
        "total_tokens": plan.prompt_tokens + output_tokens,
        "prompt_tokens_details": {"cached_tokens": plan.cached_tokens, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _tool_calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for c in reply.tool_calls
    ]


def _forced_tool(body: dict[str, Any]) -> str | None:
    """The tool that `tool_choice` ("required" or a named function) makes the model call."""
    choice, tools = body.get("tool_choice"), body.get("tools") or []
    if isinstance(choice, dict):
        return str((choice.get("function") or {}).get("name"))
    if choice == "required" and tools:
        return str(tools[0].get("function", {}).get("name"))
    return None


def _finish_reason(reply: Reply) -> str:
    if reply.truncated:
        return "length"
    return "tool_calls" if reply.tool_calls else "stop"


def _completion(reply: Reply, model: str, usage: dict[str, Any], completion_id: str) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": reply.text if reply.text or not reply.tool_calls else None,
        "refusal": None,
        "annotations": [],
    }
    if reply.tool_calls:
        message["tool_calls"] = _tool_calls(reply)
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": _finish_reason(reply)}],
        "usage": usage,
        "service_tier": "default",
        "system_fingerprint": "fp_sim",
    }


def _chunks(
    reply: Reply, model: str, usage: dict[str, Any], completion_id: str, include_usage: bool, words: int
) -> list[SseEvent]:
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None, output: bool = False) -> SseEvent:
        payload: dict[str, Any] = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": "fp_sim",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if include_usage:
            payload["usage"] = None
        return SseEvent(json.dumps(payload), carries_output=output)

    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    events += [chunk({"content": piece}, output=True) for piece in split_text(reply.text, words)]
    for index, call in enumerate(reply.tool_calls):
        head = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        events.append(chunk({"tool_calls": [head]}, output=True))
        events += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}, output=True)
            for piece in split_json(call.arguments)
        ]
    events.append(chunk({}, finish=_finish_reason(reply)))
    if include_usage:
        tail = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": "fp_sim",
            "choices": [],
            "usage": usage,
        }
        events.append(SseEvent(json.dumps(tail)))
    events.append(SseEvent("[DONE]"))
    return events


async def chat_completions(request: Request) -> Response:
    state: SimState = request.app.state.sim
    settings = state.settings
    try:
        key = api_key(request, settings, _REJECTED_KEY)
        body = await read_body(request)
        state.stats.record_request("openai", request.url.path, dict(request.headers), body)
        check_openai_request(body)
        model = body["model"]
        grouped = openai_turns(body["messages"])
        directives = parse_directives(directive_text(grouped))
        fault = state.faults.choose(model, request.headers.get(FAULT_HEADER), directives.fault)
        if fault is not None:
            state.stats.count(model, **{f"fault_{fault.value}": 1})
            await raise_error_fault(fault, settings)
        encoding = openai_encoding(model)
        extended = body.get("prompt_cache_retention") == "24h"
        ttl_s = settings.openai_extended_ttl_s if extended else settings.openai_in_memory_ttl_s
        namespace = (key, model)
        plan = state.openai_cache.plan(namespace, encode(render_prompt(body), encoding), ttl_s)
        reply = plan_reply(
            flat_turns(grouped),
            directives,
            state.replay,
            tool_id_prefix="call_",
            forced_tool=_forced_tool(body),
        )
    except SimError as error:
        state.stats.count_error(error.status)
        return openai_error_response(error)

    reply = limit_reply(reply, body.get("max_completion_tokens") or body.get("max_tokens"), encoding)
    produced = output_tokens(reply, encoding)
    state.stats.count(
        model,
        requests=1,
        input_tokens=plan.prompt_tokens - plan.cached_tokens,
        cache_read_tokens=plan.cached_tokens,
        output_tokens=produced,
    )
    usage = _usage(plan, produced)
    timing = Timing(
        time_to_first_token(settings.latency, plan.prompt_tokens - plan.cached_tokens, plan.cached_tokens),
        decode_time(settings.latency, produced),
    )
    completion_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"

    def on_start() -> None:
        state.openai_cache.commit(namespace, plan)

    if body.get("stream"):
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        events = _chunks(reply, model, usage, completion_id, include_usage, settings.stream_chunk_words)
        return stream_response(events, timing, on_start, fault)
    return await json_response(_completion(reply, model, usage, completion_id), timing, on_start, fault)
