"""POST /v1/messages in Anthropic's Messages wire format."""

from __future__ import annotations

import json
import uuid
from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gateway.sim.anthropic_cache import AnthropicCachePlan, min_cacheable_tokens, prompt_blocks
from gateway.sim.conversation import anthropic_turns
from gateway.sim.errors import SimError, anthropic_error_response
from gateway.sim.exchange import (
    Conversation,
    SseEvent,
    Timing,
    choose_fault,
    json_response,
    read_request,
    split_json,
    split_text,
    stream_response,
)
from gateway.sim.json_mode import anthropic_schema
from gateway.sim.responses import Reply, limit_reply, output_tokens
from gateway.sim.state import SimState
from gateway.sim.tokens import ANTHROPIC_ENCODING
from gateway.sim.validation import check_anthropic_request


def _usage(plan: AnthropicCachePlan, output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": plan.uncached_tokens,
        "cache_creation_input_tokens": plan.write_5m_tokens + plan.write_1h_tokens,
        "cache_read_input_tokens": plan.read_tokens,
        "cache_creation": {
            "ephemeral_5m_input_tokens": plan.write_5m_tokens,
            "ephemeral_1h_input_tokens": plan.write_1h_tokens,
        },
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


def _tool_input(arguments: str) -> dict[str, Any]:
    try:
        parsed = json.loads(arguments or "{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _content(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text or not reply.tool_calls else []
    blocks += [
        {"type": "tool_use", "id": c.id, "name": c.name, "input": _tool_input(c.arguments)} for c in reply.tool_calls
    ]
    return blocks


def _forced_tool(body: dict[str, Any]) -> str | None:
    """The tool that `tool_choice` ({"type": "any"} or {"type": "tool", "name": ...}) makes the model call."""
    choice, tools = body.get("tool_choice") or {}, body.get("tools") or []
    if choice.get("type") == "tool":
        return str(choice.get("name"))
    if choice.get("type") == "any" and tools:
        return str(tools[0].get("name"))
    return None


def _stop_reason(reply: Reply) -> str:
    if reply.truncated:
        return "max_tokens"
    return "tool_use" if reply.tool_calls else "end_turn"


def _message(reply: Reply, model: str, usage: dict[str, Any], message_id: str) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _content(reply),
        "stop_reason": _stop_reason(reply),
        "stop_sequence": None,
        "usage": usage,
    }


def _event(name: str, payload: dict[str, Any], output: bool = False) -> SseEvent:
    return SseEvent(json.dumps({"type": name, **payload}), event=name, carries_output=output)


def _events(reply: Reply, model: str, usage: dict[str, Any], message_id: str, words: int) -> list[SseEvent]:
    start = _message(reply, model, {**usage, "output_tokens": 1}, message_id)
    start.update(content=[], stop_reason=None)
    events = [_event("message_start", {"message": start}), _event("ping", {})]
    for index, block in enumerate(_content(reply)):
        if block["type"] == "text":
            events.append(
                _event("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}})
            )
            deltas = [{"type": "text_delta", "text": piece} for piece in split_text(block["text"], words)]
        else:
            opening = {**block, "input": {}}
            events.append(_event("content_block_start", {"index": index, "content_block": opening}))
            arguments = json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in split_json(arguments)]
        events += [_event("content_block_delta", {"index": index, "delta": d}, output=True) for d in deltas]
        events.append(_event("content_block_stop", {"index": index}))
    final_usage = {
        k: usage[k] for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
    }
    events.append(
        _event(
            "message_delta",
            {"delta": {"stop_reason": _stop_reason(reply), "stop_sequence": None}, "usage": final_usage},
        )
    )
    events.append(_event("message_stop", {}))
    return events


async def messages(request: Request) -> Response:
    state: SimState = request.app.state.sim
    settings = state.settings
    try:
        key, body = await read_request(request, state, "anthropic", "invalid x-api-key")
        check_anthropic_request(body)
        model = body["model"]
        blocks = prompt_blocks(body)
        conversation = Conversation.of(anthropic_turns(body["messages"]))
        fault = await choose_fault(request, state, model, conversation.directives)
        namespace = (key, model)
        min_tokens = min_cacheable_tokens(model, settings.anthropic_min_tokens)
        plan = state.anthropic_cache.plan(namespace, blocks, min_tokens)
        # Cache reads do not count against Anthropic's input-token limit.
        headers = state.rate_limits.admit(namespace, plan.total_tokens - plan.read_tokens, "anthropic")
        schema = anthropic_schema(body)
        reply = conversation.reply(state.replay, "toolu_", _forced_tool(body), schema, bool(body.get("tools")))
    except SimError as error:
        state.stats.count_error(error.status)
        return anthropic_error_response(error)

    reply = limit_reply(reply, body["max_tokens"], ANTHROPIC_ENCODING)
    produced = output_tokens(reply, ANTHROPIC_ENCODING)
    state.stats.count(
        model,
        requests=1,
        input_tokens=plan.uncached_tokens,
        cache_read_tokens=plan.read_tokens,
        cache_write_5m_tokens=plan.write_5m_tokens,
        cache_write_1h_tokens=plan.write_1h_tokens,
        output_tokens=produced,
    )
    usage = _usage(plan, produced)
    timing = Timing.simulated(settings.latency, plan.total_tokens - plan.read_tokens, plan.read_tokens, produced)
    message_id = f"msg_sim{uuid.uuid4().hex[:20]}"
    on_start = partial(state.anthropic_cache.commit, namespace, plan)
    if body.get("stream"):
        events = _events(reply, model, usage, message_id, settings.stream_chunk_words)
        return stream_response(events, timing, on_start, fault, headers)
    return await json_response(_message(reply, model, usage, message_id), timing, on_start, fault, headers)


async def count_tokens(request: Request) -> Response:
    """POST /v1/messages/count_tokens: the prompt's input tokens (cl100k_base approximation)."""
    state: SimState = request.app.state.sim
    try:
        _, body = await read_request(request, state, "anthropic", "invalid x-api-key")
        blocks = prompt_blocks(body)
    except SimError as error:
        return anthropic_error_response(error)
    return JSONResponse({"input_tokens": blocks[-1].end_tokens if blocks else 0})
