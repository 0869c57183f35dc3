"""POST /v1/responses in OpenAI's Responses wire format (stream and not), with OpenAI's prompt caching.

The reply rules are the Chat Completions ones (directives in the last user message, replay, tool_choice,
an answer to a function_call_output, else an echo); the cached prefix is the rendered request (tools,
instructions, then every input item in order), as gateway/sim/openai_cache.py applies the rules.

A directed call of a tool the request offers as a custom (freeform) tool, at the top level, in a
namespace, or in an `additional_tools` input item (Codex's code mode: its `exec` tool runs JavaScript that
calls the MCP tools), is a `custom_tool_call` whose input is the directive's `"input"` argument.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from gateway.sim.conversation import Turn, TurnKind
from gateway.sim.errors import SimError, invalid_request, openai_error_response
from gateway.sim.exchange import (
    SseEvent,
    json_response,
    split_text,
    stream_response,
)
from gateway.sim.json_mode import responses_schema
from gateway.sim.openai_exchange import OpenAIShape, begin, settle
from gateway.sim.responses import Reply, ToolCall
from gateway.sim.state import SimState
from gateway.wire.responses import content_text, input_items, item_type, message_item, response_object

CUSTOM_CALL = "custom_tool_call"
CALLS = ("function_call", CUSTOM_CALL)
OUTPUTS = ("function_call_output", "custom_tool_call_output")


def responses_turns(body: dict[str, Any]) -> list[list[Turn]]:
    """Turns grouped by input item."""
    grouped: list[list[Turn]] = []
    for item in input_items(body):
        kind = item_type(item)
        if kind == "message":
            role = item.get("role")
            turn_kind: TurnKind = "user"
            if role in ("system", "developer"):
                turn_kind = "system"
            elif role == "assistant":
                turn_kind = "assistant"
            grouped.append([Turn(turn_kind, content_text(item.get("content")))])
        elif kind in CALLS:
            grouped.append([Turn("assistant", "")])
        elif kind in OUTPUTS:
            output = item.get("output")
            text = output if isinstance(output, str) else content_text(output)
            grouped.append([Turn("tool", text, item.get("call_id"))])
    return grouped


def render_prompt(body: dict[str, Any]) -> str:
    """The request prefix as the model sees it: tools, instructions, then each input item in order."""
    parts = []
    if body.get("tools"):
        parts.append("<|tools|>" + json.dumps(body["tools"], ensure_ascii=False))
    if isinstance(body.get("instructions"), str):
        parts.append(f"<|im_start|>system\n{body['instructions']}<|im_end|>")
    for item in input_items(body):
        if item_type(item) == "message":
            parts.append(f"<|im_start|>{item.get('role')}\n{content_text(item.get('content'))}<|im_end|>")
        else:
            parts.append(json.dumps(item, ensure_ascii=False))
    return "\n".join(parts)


def check_request(body: dict[str, Any]) -> None:
    """What the real API refuses: no model, no input, and unpaired function calls and outputs."""
    if not body.get("model"):
        raise invalid_request("Missing required parameter: 'model'.", param="model")
    if not isinstance(body.get("input"), str | list) or not body["input"]:
        raise invalid_request("Missing required parameter: 'input'.", param="input")
    calls = {str(i.get("call_id")) for i in input_items(body) if item_type(i) in CALLS}
    answered = {str(i.get("call_id")) for i in input_items(body) if item_type(i) in OUTPUTS}
    if unknown := sorted(answered - calls):
        raise invalid_request(f"No tool call found for function call output with call_id {unknown[0]}.", param="input")
    if missing := sorted(calls - answered):
        raise invalid_request(f"No tool output found for function call {missing[0]}.", param="input")


def _forced_tool(body: dict[str, Any]) -> str | None:
    choice = body.get("tool_choice")
    functions = [t for t in body.get("tools") or [] if isinstance(t, dict) and t.get("type") == "function"]
    if isinstance(choice, dict) and choice.get("type") == "function":
        return str(choice.get("name"))
    if choice == "required" and functions:
        return str(functions[0].get("name"))
    return None


def _custom_tools(body: dict[str, Any]) -> set[str]:
    """The names of the custom tools the request offers (in `tools`, namespaces, `additional_tools` items)."""
    pending = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    pending += [t for i in input_items(body) if item_type(i) == "additional_tools" for t in i.get("tools") or []]
    names: set[str] = set()
    while pending:
        tool = pending.pop()
        if isinstance(tool, dict) and tool.get("type") == "custom":
            names.add(str(tool.get("name")))
        elif isinstance(tool, dict) and tool.get("type") == "namespace":
            pending += tool.get("tools") or []
    return names


def _call_item(call: ToolCall, custom: set[str]) -> dict[str, Any]:
    item = {"id": f"fc_{uuid.uuid4().hex[:24]}", "status": "completed", "call_id": call.id, "name": call.name}
    if call.name in custom:
        given = json.loads(call.arguments).get("input", "")
        return {**item, "type": CUSTOM_CALL, "input": given if isinstance(given, str) else json.dumps(given)}
    return {**item, "type": "function_call", "arguments": call.arguments}


def _output(reply: Reply, body: dict[str, Any]) -> list[dict[str, Any]]:
    items = (
        [message_item(reply.text, item_id=f"msg_{uuid.uuid4().hex[:24]}")] if reply.text or not reply.tool_calls else []
    )
    custom = _custom_tools(body) if reply.tool_calls else set()
    return items + [_call_item(call, custom) for call in reply.tool_calls]


def _usage(prompt_tokens: int, cached_tokens: int, produced: int) -> dict[str, Any]:
    return {
        "input_tokens": prompt_tokens,
        "input_tokens_details": {"cached_tokens": cached_tokens},
        "output_tokens": produced,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt_tokens + produced,
    }


def _events(response: dict[str, Any], words: int) -> list[SseEvent]:
    """The full Responses event sequence; text deltas of `words` words (paced as output)."""
    sequence = iter(range(1_000_000))

    def event(kind: str, output: bool = False, **fields: Any) -> SseEvent:
        data = {"type": kind, "sequence_number": next(sequence), **fields}
        return SseEvent(json.dumps(data), event=kind, carries_output=output)

    opening = {**response, "status": "in_progress", "output": [], "usage": None}
    events = [event("response.created", response=opening), event("response.in_progress", response=opening)]
    for index, item in enumerate(response["output"]):
        if item["type"] == "message":
            events.append(
                event(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "content": [], "status": "in_progress"},
                )
            )
            part = item["content"][0]
            where = {"item_id": item["id"], "output_index": index, "content_index": 0}
            events.append(event("response.content_part.added", **where, part={**part, "text": ""}))
            events += [
                event("response.output_text.delta", True, **where, delta=piece, logprobs=[])
                for piece in split_text(part["text"], words)
            ]
            events.append(event("response.output_text.done", **where, text=part["text"], logprobs=[]))
            events.append(event("response.content_part.done", **where, part=part))
        else:
            field, stream = (
                ("input", "custom_tool_call_input")
                if item["type"] == CUSTOM_CALL
                else ("arguments", "function_call_arguments")
            )
            opening_item = {**item, field: "", "status": "in_progress"}
            events.append(event("response.output_item.added", output_index=index, item=opening_item))
            where = {"item_id": item["id"], "output_index": index}
            events.append(event(f"response.{stream}.delta", True, **where, delta=item[field]))
            events.append(event(f"response.{stream}.done", **where, **{field: item[field]}))
        events.append(event("response.output_item.done", output_index=index, item=item))
    final = "response.incomplete" if response["status"] == "incomplete" else "response.completed"
    events.append(event(final, response=response))
    return events


RESPONSES = OpenAIShape(
    check=check_request,
    turns=responses_turns,
    render=render_prompt,
    forced_tool=_forced_tool,
    json_schema=responses_schema,
)


async def responses(request: Request) -> Response:
    state: SimState = request.app.state.sim
    try:
        exchange = await begin(request, state, RESPONSES)
    except SimError as error:
        state.stats.count_error(error.status)
        return openai_error_response(error)

    body = exchange.body
    answer = settle(state, exchange, body.get("max_output_tokens"))
    usage = _usage(exchange.plan.prompt_tokens, exchange.plan.cached_tokens, answer.produced)
    status = "incomplete" if answer.reply.truncated else "completed"
    output = _output(answer.reply, body)
    response = {**response_object(exchange.model, output, usage=usage, status=status), "id": f"resp_{uuid.uuid4().hex}"}
    for field in ("instructions", "tools", "tool_choice", "metadata", "store", "previous_response_id"):
        if field in body:
            response[field] = body[field]
    if body.get("stream"):
        events = _events(response, state.settings.stream_chunk_words)
        return stream_response(events, answer.timing, answer.on_start, exchange.fault, exchange.headers)
    return await json_response(response, answer.timing, answer.on_start, exchange.fault, exchange.headers)
