"""OpenAI Responses wire format (POST /v1/responses): Codex, the OpenAI Agents SDK, pydantic-ai's and
LangChain's Responses models.

Validation covers what stages read (input items of the kinds below, tool names); every other item and
tool type (reasoning, web_search, namespace, custom ...) passes through for the provider to judge.
Streams are the Responses event sequence, each event `event: <type>` + `data: {"type", "sequence_number", ...}`.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import orjson

from gateway.errors import GatewayError
from gateway.usage import Usage
from gateway.wire.base import StreamAccumulator, WireFormat, positive_int
from gateway.wire.checks import (
    check_sampling,
    expect,
    optional,
    optional_type,
    require_object,
    require_str,
    typed_object,
)
from gateway.wire.fields import OPENAI_RESPONSES_FIELDS
from gateway.wire.notes import joined, with_note
from gateway.wire.openai import OPENAI
from gateway.wire.sse import USAGE_EXTRA_KEY, SSEEvent, encode
from gateway.wire.tools import with_tool

ZERO_USAGE: dict[str, Any] = {
    "input_tokens": 0,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 0,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 0,
}
FINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")
TEXT_CHUNK_CHARS = 64


def new_id(prefix: str) -> str:
    return f"{prefix}_cg{uuid.uuid4().hex[:24]}"


def input_items(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's input as a list of items (a string input is one user message)."""
    value = body.get("input")
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def item_type(item: dict[str, Any]) -> str:
    """An item's type; an easy input message ({"role", "content"}) has none."""
    kind = item.get("type")
    return kind if isinstance(kind, str) else "message"


def content_text(content: Any) -> str:
    """The text of a message's content: a string, or its input_text / output_text / text parts."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    kinds = ("input_text", "output_text", "text")
    return "".join(p["text"] for p in content if isinstance(p, dict) and p.get("type") in kinds and "text" in p)


def output_text(response: dict[str, Any]) -> str:
    """All assistant text of a response's output."""
    return "".join(
        content_text(item.get("content"))
        for item in response.get("output") or []
        if isinstance(item, dict) and item_type(item) == "message"
    )


def _check_item(index: int, item: Any) -> None:
    where = f"input[{index}]"
    expect(where, item, (dict,), "an object")
    optional(f"{where}.type", item.get("type"), (str,), "a string")
    kind = item_type(item)
    if kind == "message":
        expect(f"{where}.role", item.get("role"), (str,), "a string")
        content = item.get("content")
        expect(f"{where}.content", content, (str, list), "a string or an array of content parts")
        for position, part in enumerate(content if isinstance(content, list) else []):
            part = typed_object(f"{where}.content[{position}]", part)
            if part["type"] in ("input_text", "output_text"):
                expect(f"{where}.content[{position}].text", part.get("text"), (str,), "a string")
    elif kind == "function_call":
        expect(f"{where}.call_id", item.get("call_id"), (str,), "a string")
        expect(f"{where}.name", item.get("name"), (str,), "a string")
        expect(f"{where}.arguments", item.get("arguments"), (str,), "a string")
    elif kind == "function_call_output":
        expect(f"{where}.call_id", item.get("call_id"), (str,), "a string")
        expect(f"{where}.output", item.get("output"), (str, list), "a string or an array of content parts")


def _check_tool(where: str, tool: Any) -> None:
    """Function tools carry their name at the top level (stages read it); other tool types pass."""
    tool = typed_object(where, tool)
    if tool["type"] in ("function", "custom"):
        expect(f"{where}.name", tool.get("name"), (str,), "a string")


def response_object(
    model: str, output: list[dict[str, Any]], *, usage: dict[str, Any] | None, status: str = "completed"
) -> dict[str, Any]:
    """A Response with every field the SDKs read."""
    return {
        "id": new_id("resp"),
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": None,
        "max_output_tokens": None,
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "metadata": {},
    }


def message_item(text: str, *, item_id: str | None = None) -> dict[str, Any]:
    return {
        "id": item_id or new_id("msg"),
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


class _Events:
    """Numbers the events of one stream."""

    def __init__(self, start: int = 0) -> None:
        self.events: list[bytes] = []
        self.sequence = start

    def add(self, kind: str, **fields: Any) -> None:
        self.events.append(encode({"type": kind, "sequence_number": self.sequence, **fields}, kind))
        self.sequence += 1

    def item(self, index: int, item: dict[str, Any]) -> None:
        """The events of one complete output item."""
        kind, item_id = item_type(item), item.get("id")
        if kind == "message":
            self.add(
                "response.output_item.added", output_index=index, item={**item, "status": "in_progress", "content": []}
            )
            for position, part in enumerate(item.get("content") or []):
                self._part(index, str(item_id), position, part)
        elif kind == "function_call":
            opening = {**item, "status": "in_progress", "arguments": ""}
            self.add("response.output_item.added", output_index=index, item=opening)
            arguments = str(item.get("arguments") or "")
            where = {"item_id": item_id, "output_index": index}
            self.add("response.function_call_arguments.delta", **where, delta=arguments)
            self.add("response.function_call_arguments.done", **where, arguments=arguments)
        else:
            self.add("response.output_item.added", output_index=index, item=item)
        self.add("response.output_item.done", output_index=index, item=item)

    def _part(self, index: int, item_id: str, position: int, part: dict[str, Any]) -> None:
        where = {"item_id": item_id, "output_index": index, "content_index": position}
        if part.get("type") != "output_text":
            self.add("response.content_part.added", **where, part=part)
            self.add("response.content_part.done", **where, part=part)
            return
        text = str(part.get("text") or "")
        self.add("response.content_part.added", **where, part={**part, "text": ""})
        for start in range(0, len(text), TEXT_CHUNK_CHARS):
            self.add("response.output_text.delta", **where, delta=text[start : start + TEXT_CHUNK_CHARS], logprobs=[])
        self.add("response.output_text.done", **where, text=text, logprobs=[])
        self.add("response.content_part.done", **where, part=part)


def _final_event(response: dict[str, Any]) -> str:
    status = response.get("status")
    return (
        "response.incomplete"
        if status == "incomplete"
        else "response.failed"
        if status == "failed"
        else "response.completed"
    )


class OpenAIResponses(WireFormat):
    name = "responses"

    def output_cap(self, body: dict[str, Any]) -> int | None:
        return positive_int(body.get("max_output_tokens"))

    upstream_fields = OPENAI_RESPONSES_FIELDS
    lean_wire = "openai"  # OpenAI-compatible providers serve it at {api_base}/responses
    history_field = "input"

    def validate(self, body: Any, known: int = 0) -> None:
        body = require_object(body)
        require_str(body, "model")
        value = body.get("input")
        optional("input", value, (str, list), "a string or an array of input items")
        items = value if isinstance(value, list) else []
        for index in range(known, len(items)):  # an item's check reads that item alone
            _check_item(index, items[index])
        check_sampling(body)
        optional_type(body, "instructions", (str,), "a string")
        optional_type(body, "max_output_tokens", (int,), "an integer")
        optional_type(body, "previous_response_id", (str,), "a string")
        optional_type(body, "store", (bool,), "a boolean")
        optional_type(body, "prompt_cache_key", (str,), "a string")
        optional("tool_choice", body.get("tool_choice"), (str, dict), "a string or an object")
        for index, tool in enumerate(body.get("tools") or []):
            _check_tool(f"tools[{index}]", tool)

    def error_body(self, error: GatewayError) -> dict[str, Any]:
        return OPENAI.error_body(error)

    def session_fallback(self, body: dict[str, Any]) -> str | None:
        """`prompt_cache_key` (Codex sends its session id there), then Codex's `client_metadata.session_id`,
        then `user`."""
        metadata = body.get("client_metadata")
        session = metadata.get("session_id") if isinstance(metadata, dict) else None
        for value in (body.get("prompt_cache_key"), session, body.get("user")):
            if isinstance(value, str) and value:
                return value
        return None

    def text_reply(self, model: str, text: str, *, stop_reason: str = "stop") -> dict[str, Any]:
        status = "incomplete" if stop_reason in ("length", "max_tokens") else "completed"
        return response_object(model, [message_item(text)], usage=dict(ZERO_USAGE), status=status)

    def replay_events(self, response: dict[str, Any], *, include_usage: bool = False) -> list[bytes]:
        events = _Events()
        opening = {**response, "status": "in_progress", "output": [], "usage": None}
        events.add("response.created", response=opening)
        events.add("response.in_progress", response=opening)
        for index, item in enumerate(response.get("output") or []):
            events.item(index, item)
        events.add(_final_event(response), response=response)
        return events.events

    def closing_events(self, partial: dict[str, Any]) -> list[bytes]:
        """Close the item in progress (a message cut mid-text) and complete the response with the output so
        far. Sequence numbers continue from the accumulator's (`PartialResponse`)."""
        events = _Events(getattr(partial, "next_sequence", 0))
        output = list(partial.get("output") or [])
        if output and output[-1].get("status") == "in_progress":
            index, item = len(output) - 1, {**output[-1], "status": "completed"}
            if item_type(item) == "message":
                for position, part in enumerate(item.get("content") or []):
                    where = {"item_id": item.get("id"), "output_index": index, "content_index": position}
                    if part.get("type") == "output_text":
                        events.add("response.output_text.done", **where, text=part.get("text", ""), logprobs=[])
                    events.add("response.content_part.done", **where, part=part)
            events.add("response.output_item.done", output_index=index, item=item)
            output[-1] = item
        events.add("response.completed", response={**partial, "status": "completed", "output": output})
        return events.events

    def stream_error_event(self, error: GatewayError) -> bytes:
        # The Responses `error` event; its nested `error` makes the openai SDK raise an APIError.
        detail = self.error_body(error)["error"]
        data = {
            "type": "error",
            "code": detail["code"] or detail["type"],
            "message": error.message,
            "param": error.param,
        }
        return encode({**data, "sequence_number": 0, "error": detail}, "error")

    def is_usage_only(self, event: SSEEvent) -> bool:
        return False

    def accumulator(self) -> StreamAccumulator:
        return ResponsesAccumulator()

    def usage(self, response: dict[str, Any]) -> Usage:
        output = response.get("output")
        return Usage.from_openai_responses(response.get("usage"), output if isinstance(output, list) else None)

    def with_zero_usage(self, response: dict[str, Any]) -> dict[str, Any]:
        return {**response, "usage": dict(ZERO_USAGE)}

    def is_stream_done(self, event: SSEEvent) -> bool:
        return event.event in FINAL_EVENTS or event.event == "error"

    def is_final_usage(self, event: SSEEvent) -> bool:
        """The final event (`response.completed` / `incomplete` / `failed`): its response holds the usage."""
        return event.event in FINAL_EVENTS

    def with_usage_extra(self, event: SSEEvent, extra: dict[str, Any]) -> bytes:
        data = event.json()
        response = data.get("response")
        if not isinstance(response, dict) or not isinstance(response.get("usage"), dict):
            return event.raw  # no usage object to extend (a failed response)
        response["usage"] = {**response["usage"], USAGE_EXTRA_KEY: extra}
        return encode(data, str(event.event))

    # --- Loop guard (methods of WireFormat's loop-guard block) ---

    def guard_history(self, body: dict[str, Any]) -> list[dict[str, Any]] | None:
        return chat_view(body)

    def with_guard_note(self, body: dict[str, Any], text: str) -> dict[str, Any] | None:
        if isinstance(body.get("input"), str):
            return {**body, "input": joined(body["input"], text, {}, text)}
        part = {"type": "input_text", "text": text}

        def takes(item: dict[str, Any]) -> bool:
            kind = item_type(item)
            return kind == "function_call_output" or (kind == "message" and item.get("role") == "user")

        def add(item: dict[str, Any]) -> dict[str, Any]:
            field = "output" if item_type(item) == "function_call_output" else "content"
            return {**item, field: joined(item.get(field), text, part, text)}

        return with_note(body, "input", takes, add)

    def reply_text(self, response: dict[str, Any]) -> str:
        return output_text(response)

    def reply_tool_calls(self, response: dict[str, Any]) -> int:
        calls = ("function_call", "custom_tool_call")
        return sum(1 for item in response.get("output") or [] if isinstance(item, dict) and item.get("type") in calls)

    def with_text_only(self, response: dict[str, Any], text: str) -> dict[str, Any]:
        return {**response, "output": [message_item(text)], "status": "completed", "incomplete_details": None}

    def with_function_tool(
        self, body: dict[str, Any], name: str, description: str, schema: dict[str, Any]
    ) -> dict[str, Any] | None:
        tool = {"type": "function", "name": name, "description": description, "parameters": schema}
        return with_tool(body, name, tool, lambda existing: existing.get("name"))

    def tool_call(self, response: dict[str, Any], name: str) -> Any:
        for item in response.get("output") or []:
            if isinstance(item, dict) and item.get("type") == "function_call" and item.get("name") == name:
                return item.get("arguments") or ""
        return None


class PartialResponse(dict[str, Any]):
    """A response cut short, carrying the sequence number its closing events continue from."""

    next_sequence = 0


class ResponsesAccumulator(StreamAccumulator):
    """The final response: the one in `response.completed` (its output filled from the items seen when a
    provider leaves it empty), else the head of `response.created` with the items seen so far."""

    def __init__(self) -> None:
        self.head: dict[str, Any] = {}
        self.final: dict[str, Any] | None = None
        self.items: dict[int, dict[str, Any]] = {}
        self.sequence: int | None = None

    def feed(self, event: SSEEvent) -> str:
        data = event.json()
        if not isinstance(data, dict):
            return ""
        if isinstance(data.get("sequence_number"), int):
            self.sequence = data["sequence_number"]
        kind = data.get("type")
        index = data.get("output_index", 0)
        if kind in ("response.created", "response.in_progress"):
            self.head = dict(data.get("response") or {})
        elif kind in FINAL_EVENTS:
            self.final = dict(data.get("response") or {})
        elif kind in ("response.output_item.added", "response.output_item.done"):
            self.items[index] = dict(data.get("item") or {})
        elif kind == "response.content_part.added":
            content = self.items.setdefault(index, {"type": "message", "content": []}).setdefault("content", [])
            content.append(dict(data.get("part") or {}))
        elif kind == "response.output_text.delta":
            delta = str(data.get("delta") or "")
            self._text_part(index, int(data.get("content_index", 0)))["text"] += delta
            return delta
        elif kind == "response.function_call_arguments.delta":
            item = self.items.setdefault(index, {"type": "function_call", "arguments": ""})
            item["arguments"] = str(item.get("arguments") or "") + str(data.get("delta") or "")
        return ""

    def _text_part(self, index: int, position: int) -> dict[str, Any]:
        item = self.items.setdefault(index, {"type": "message", "role": "assistant", "status": "in_progress"})
        content = item.setdefault("content", [])
        while len(content) <= position:
            content.append({"type": "output_text", "text": "", "annotations": []})
        part: dict[str, Any] = content[position]
        part.setdefault("text", "")
        return part

    def result(self) -> dict[str, Any]:
        seen = [self.items[i] for i in sorted(self.items)]
        if self.final is not None:
            return {**self.final, "output": self.final.get("output") or seen}
        partial = PartialResponse({**self.head, "output": seen})
        partial.next_sequence = 0 if self.sequence is None else self.sequence + 1
        return partial


def chat_view(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request as chat-shaped messages (instructions, messages, tool calls and their outputs), for
    analysis only (the loop guard's steps): never sent anywhere."""
    messages: list[dict[str, Any]] = []
    if isinstance(body.get("instructions"), str):
        messages.append({"role": "system", "content": body["instructions"]})
    for item in input_items(body):
        kind = item_type(item)
        if kind == "message":
            role = item.get("role")
            messages.append(
                {
                    "role": role if role in ("system", "developer", "user", "assistant") else "user",
                    "content": content_text(item.get("content")),
                }
            )
        elif kind == "function_call":
            call = {
                "id": item.get("call_id"),
                "type": "function",
                "function": {"name": item.get("name"), "arguments": item.get("arguments") or ""},
            }
            if messages and messages[-1]["role"] == "assistant" and "tool_calls" in messages[-1]:
                messages[-1]["tool_calls"].append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            text = output if isinstance(output, str) else orjson.dumps(output).decode()
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": text})
    return messages


RESPONSES = OpenAIResponses()
