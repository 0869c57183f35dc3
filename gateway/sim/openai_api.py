"""POST /v1/chat/completions in OpenAI's Chat Completions wire format."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from gateway.sim.conversation import openai_turns
from gateway.sim.errors import SimError, openai_error_response
from gateway.sim.exchange import (
    SseEvent,
    json_response,
    split_json,
    split_text,
    stream_response,
)
from gateway.sim.json_mode import chat_schema
from gateway.sim.openai_cache import OpenAICachePlan, render_prompt
from gateway.sim.openai_exchange import OpenAIShape, begin, settle
from gateway.sim.responses import Reply
from gateway.sim.state import SimState
from gateway.sim.validation import check_openai_request


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
    # every chunk, the final usage-only one included, starts with these fields (in this order)
    head = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_sim",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None, output: bool = False) -> SseEvent:
        payload: dict[str, Any] = {
            **head,
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
        events.append(SseEvent(json.dumps({**head, "choices": [], "usage": usage})))
    events.append(SseEvent("[DONE]"))
    return events


CHAT = OpenAIShape(
    check=check_openai_request,
    turns=lambda body: openai_turns(body["messages"]),
    render=render_prompt,
    forced_tool=_forced_tool,
    json_schema=chat_schema,
)


async def chat_completions(request: Request) -> Response:
    state: SimState = request.app.state.sim
    try:
        exchange = await begin(request, state, CHAT)
    except SimError as error:
        state.stats.count_error(error.status)
        return openai_error_response(error)

    body, model = exchange.body, exchange.model
    answer = settle(state, exchange, body.get("max_completion_tokens") or body.get("max_tokens"))
    usage = _usage(exchange.plan, answer.produced)
    completion_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    if body.get("stream"):
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        events = _chunks(answer.reply, model, usage, completion_id, include_usage, state.settings.stream_chunk_words)
        return stream_response(events, answer.timing, answer.on_start, exchange.fault, exchange.headers)
    completion = _completion(answer.reply, model, usage, completion_id)
    return await json_response(completion, answer.timing, answer.on_start, exchange.fault, exchange.headers)
