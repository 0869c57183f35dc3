"""OpenAI Chat Completions wire format."""

from __future__ import annotations

import time
import uuid
from typing import Any

from gateway.errors import ErrorKind, GatewayError, bad_request
from gateway.usage import Usage
from gateway.wire.base import StreamAccumulator, WireFormat, positive_int
from gateway.wire.checks import (
    check_sampling,
    check_stream_options,
    expect,
    optional,
    optional_type,
    pairing_start,
    require_list,
    require_object,
    require_str,
    typed_object,
)
from gateway.wire.fields import OPENAI_CHAT_FIELDS
from gateway.wire.notes import joined, with_note
from gateway.wire.sse import USAGE_EXTRA_KEY, SSEEvent, encode
from gateway.wire.tools import with_tool

ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
CONTENT_OPTIONAL_ROLES = {"assistant", "function"}

# A stream chunk's envelope: the keys that say nothing beyond which stream it belongs to. A chunk with
# usage, no choice that carries anything and nothing outside these keys is the usage chunk that
# `include_usage` adds; anything else (Azure's `prompt_filter_results`, a provider's extras) is content.
CHUNK_ENVELOPE = frozenset(
    {"id", "object", "created", "model", "system_fingerprint", "service_tier", "obfuscation", "choices", "usage"}
)

ERROR_TYPES: dict[ErrorKind, str] = {
    ErrorKind.INVALID_REQUEST: "invalid_request_error",
    ErrorKind.AUTHENTICATION: "authentication_error",
    ErrorKind.PERMISSION: "permission_error",
    ErrorKind.NOT_FOUND: "invalid_request_error",
    ErrorKind.TOO_LARGE: "invalid_request_error",
    ErrorKind.RATE_LIMIT: "rate_limit_error",
    ErrorKind.UPSTREAM: "api_error",
    ErrorKind.OVERLOADED: "api_error",
    ErrorKind.TIMEOUT: "timeout_error",
    ErrorKind.AGENT_STOPPED: "agent_loop_stopped",
    ErrorKind.INTERNAL: "server_error",
    ErrorKind.BUDGET: "budget_exceeded",
}


def _valid_message(message: Any) -> bool:
    """`_check_message`'s rules, answered without spelling a path: formatting `messages[12].tool_calls[0]`
    for every field was most of a long history's validation. False: `_check_message` names what is wrong."""
    if not isinstance(message, dict):
        return False
    role = message.get("role")
    if not isinstance(role, str) or role not in ROLES:
        return False
    content = message.get("content")
    if content is None:
        if role not in CONTENT_OPTIONAL_ROLES:
            return False
    elif isinstance(content, list):
        if not all(map(_valid_part, content)):  # map, not a generator: one per message cost as much as its checks
            return False
    elif not isinstance(content, str):
        return False
    if role == "tool":
        return isinstance(message.get("tool_call_id"), str)
    calls = message.get("tool_calls") if role == "assistant" else None
    return calls is None or (isinstance(calls, list) and all(map(_valid_call, calls)))


def _valid_part(part: Any) -> bool:
    """`_check_part`'s rules."""
    if not isinstance(part, dict) or not isinstance(kind := part.get("type"), str):
        return False
    return kind != "text" or isinstance(part.get("text"), str)


def _valid_call(call: Any) -> bool:
    """`_check_call`'s rules."""
    if not isinstance(call, dict) or not isinstance(call.get("id"), str):
        return False
    kind = call.get("type")
    if kind is not None and not isinstance(kind, str):
        return False
    spec = call.get("custom" if kind == "custom" else "function")
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
        return False
    argument = spec.get("input" if kind == "custom" else "arguments")
    return argument is None or isinstance(argument, str)


def _check_message(index: int, message: Any) -> dict[str, Any]:
    where = f"messages[{index}]"
    if not isinstance(message, dict):
        raise bad_request(f"{where} must be an object.", param=where)
    role = message.get("role")
    if not isinstance(role, str) or role not in ROLES:
        raise bad_request(f"{where}.role must be one of {sorted(ROLES)}.", param=f"{where}.role")
    content = message.get("content")
    if content is not None and not isinstance(content, str | list):
        raise bad_request(f"{where}.content must be a string or an array of parts.", param=where)
    if content is None and role not in CONTENT_OPTIONAL_ROLES:
        raise bad_request(f"{where}.content is required for role '{role}'.", param=where)
    if isinstance(content, list):
        for position, part in enumerate(content):
            _check_part(f"{where}.content[{position}]", part)
    if role == "tool":
        expect(f"{where}.tool_call_id", message.get("tool_call_id"), (str,), "a string")
    if role == "assistant" and message.get("tool_calls") is not None:
        calls = message["tool_calls"]
        expect(f"{where}.tool_calls", calls, (list,), "an array")
        for position, call in enumerate(calls):
            _check_call(f"{where}.tool_calls[{position}]", call)
    return message


def _check_part(where: str, part: Any) -> None:
    """Stages read the text of text parts; other part types pass through for the provider to judge."""
    part = typed_object(where, part)
    if part["type"] == "text":
        expect(f"{where}.text", part.get("text"), (str,), "a string")


def _check_call(where: str, call: Any) -> None:
    """The guard reads each call's name and arguments (function calls) or input (custom tool calls)."""
    expect(where, call, (dict,), "an object")
    expect(f"{where}.id", call.get("id"), (str,), "a string")
    optional(f"{where}.type", call.get("type"), (str,), "a string")
    kind = "custom" if call.get("type") == "custom" else "function"
    spec = call.get(kind)
    expect(f"{where}.{kind}", spec, (dict,), "an object")
    expect(f"{where}.{kind}.name", spec.get("name"), (str,), "a string")
    argument = "input" if kind == "custom" else "arguments"
    optional(f"{where}.{kind}.{argument}", spec.get(argument), (str,), "a string")


def _check_tool(where: str, tool: Any) -> None:
    """Function and custom tools need a named spec (stages read the names); other tool types pass."""
    tool = typed_object(where, tool)
    if tool["type"] in ("function", "custom"):
        spec = tool.get(tool["type"])
        expect(f"{where}.{tool['type']}", spec, (dict,), "an object")
        expect(f"{where}.{tool['type']}.name", spec.get("name"), (str,), "a string")


def _check_tool_pairing(messages: list[dict[str, Any]], start: int = 0) -> None:
    """Like the OpenAI API: tool calls must be answered by tool messages right after them (from `start`,
    a message before which none is pending)."""
    pending: set[str] = set()
    for index in range(start, len(messages)):
        message = messages[index]
        role = message["role"]
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                raise bad_request(
                    f"messages[{index}] with role 'tool' must be a response to a preceding message "
                    f"with 'tool_calls' (tool_call_id {call_id!r} not found).",
                    param=f"messages[{index}].tool_call_id",
                )
            pending.discard(call_id)
            continue
        if pending:
            raise bad_request(
                "An assistant message with 'tool_calls' must be followed by tool messages responding "
                f"to each 'tool_call_id'. Missing responses for: {sorted(pending)}.",
                param=f"messages[{index}]",
            )
        calls = message.get("tool_calls") if role == "assistant" else None
        if calls is not None:
            if not isinstance(calls, list):
                raise bad_request(f"messages[{index}].tool_calls must be an array.", param="tool_calls")
            pending = {str(c.get("id")) for c in calls if isinstance(c, dict)}


class OpenAIChat(WireFormat):
    name = "openai"

    def output_cap(self, body: dict[str, Any]) -> int | None:
        return positive_int(body.get("max_completion_tokens")) or positive_int(body.get("max_tokens"))

    upstream_fields = OPENAI_CHAT_FIELDS

    def validate(self, body: Any, known: int = 0) -> None:
        body = require_object(body)
        require_str(body, "model")
        messages = require_list(body, "messages")
        for index in range(known, len(messages)):
            if not _valid_message(message := messages[index]):
                _check_message(index, message)
        check_sampling(body)
        optional_type(body, "max_tokens", (int,), "an integer")
        optional_type(body, "max_completion_tokens", (int,), "an integer")
        optional_type(body, "n", (int,), "an integer")
        check_stream_options(body)
        optional("tool_choice", body.get("tool_choice"), (str, dict), "a string or an object")
        for index, tool in enumerate(body.get("tools") or []):
            _check_tool(f"tools[{index}]", tool)
        _check_tool_pairing(messages, pairing_start(messages, known, ("tool",)))

    def error_body(self, error: GatewayError) -> dict[str, Any]:
        body = {"message": error.message, "type": ERROR_TYPES[error.kind], "param": error.param, "code": error.code}
        if error.provider:  # an OpenAI-shaped provider's own type, code and param, as it sent them
            body.update(error.provider.fields_for("openai"))
        return {"error": body}

    def session_fallback(self, body: dict[str, Any]) -> str | None:
        value = body.get("prompt_cache_key") or body.get("user")
        return value if isinstance(value, str) and value else None

    def text_reply(self, model: str, text: str, *, stop_reason: str = "stop") -> dict[str, Any]:
        return {
            "id": f"chatcmpl-cg-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": stop_reason,
                }
            ],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }

    def replay_events(self, response: dict[str, Any], *, include_usage: bool = False) -> list[bytes]:
        base = {
            "id": response.get("id", f"chatcmpl-cg-{uuid.uuid4().hex[:24]}"),
            "object": "chat.completion.chunk",
            "created": response.get("created", int(time.time())),
            "model": response.get("model", ""),
        }

        def chunk(index: int, delta: dict[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}
            return encode({**base, "choices": [choice]})

        events: list[bytes] = []
        for choice in response.get("choices", []):
            index, message = choice.get("index", 0), choice.get("message") or {}
            events.append(chunk(index, {"role": "assistant", "content": ""}))
            text = message.get("content") or ""
            events.extend(chunk(index, {"content": text[i : i + 64]}) for i in range(0, len(text), 64))
            for position, call in enumerate(message.get("tool_calls") or []):
                delta = {"tool_calls": [{"index": position, **call}]}
                events.append(chunk(index, delta))
            events.append(chunk(index, {}, choice.get("finish_reason") or "stop"))
        if include_usage:
            events.append(encode({**base, "choices": [], "usage": response.get("usage")}))
        events.append(b"data: [DONE]\n\n")
        return events

    def closing_events(self, partial: dict[str, Any]) -> list[bytes]:
        chunk: dict[str, Any] = {
            "id": partial.get("id"),
            "object": "chat.completion.chunk",
            "created": partial.get("created"),
            "model": partial.get("model"),
            "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}],
        }
        return [encode(chunk), b"data: [DONE]\n\n"]

    def stream_error_event(self, error: GatewayError) -> bytes:
        return encode(self.error_body(error))

    def is_usage_only(self, event: SSEEvent) -> bool:
        """The chunk `include_usage` adds: usage and nothing else (OpenAI's has no choices; LiteLLM's one
        empty choice). The bytes test spares parsing every other chunk."""
        if b'"usage":{' not in event.raw and b'"usage": {' not in event.raw:
            return False
        data = event.json()
        if not isinstance(data, dict) or not isinstance(data.get("usage"), dict):
            return False
        extras = (value for key, value in data.items() if key not in CHUNK_ENVELOPE)
        choices = data.get("choices")
        return not any(map(_carries, extras)) and isinstance(choices, list) and all(map(_empty_choice, choices))

    def usage_requested(self, body: dict[str, Any]) -> bool:
        options = body.get("stream_options")
        return isinstance(options, dict) and bool(options.get("include_usage"))

    def accumulator(self) -> StreamAccumulator:
        return OpenAIStreamAccumulator()

    def usage(self, response: dict[str, Any]) -> Usage:
        return Usage.from_openai(response.get("usage"))

    def with_zero_usage(self, response: dict[str, Any]) -> dict[str, Any]:
        return {**response, "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}

    def is_stream_done(self, event: SSEEvent) -> bool:
        return event.data == "[DONE]"

    def is_final_usage(self, event: SSEEvent) -> bool:
        """The chunk with the whole request's usage: OpenAI's `include_usage` chunk (no choices), or the
        LiteLLM path's (an empty delta). The bytes test spares parsing every other chunk."""
        raw = event.raw
        if b'"usage":{' not in raw and b'"usage": {' not in raw:
            return False
        data = event.json()
        choices = data.get("choices") or []
        # A provider that puts usage on content chunks too: only the contentless one is the final usage.
        empty = all(
            not (c.get("delta") or {}).get("content") and not (c.get("delta") or {}).get("tool_calls")
            for c in choices
            if isinstance(c, dict)
        )
        return isinstance(data.get("usage"), dict) and empty

    def with_usage_extra(self, event: SSEEvent, extra: dict[str, Any]) -> bytes:
        data = event.json()
        data["usage"] = {**data["usage"], USAGE_EXTRA_KEY: extra}
        return encode(data)

    # --- Loop guard (methods of WireFormat's loop-guard block) ---

    def with_guard_note(self, body: dict[str, Any], text: str) -> dict[str, Any] | None:
        def add(message: dict[str, Any]) -> dict[str, Any]:
            return {**message, "content": joined(message.get("content"), text, {"type": "text", "text": text}, text)}

        return with_note(body, "messages", lambda message: message.get("role") in ("user", "tool"), add)

    def reply_text(self, response: dict[str, Any]) -> str:
        choices = response.get("choices") or []
        return str((choices[0].get("message") or {}).get("content") or "") if choices else ""

    def reply_tool_calls(self, response: dict[str, Any]) -> int:
        choices = response.get("choices") or []
        return sum(len((choice.get("message") or {}).get("tool_calls") or []) for choice in choices)

    def with_text_only(self, response: dict[str, Any], text: str) -> dict[str, Any]:
        choices = response.get("choices") or [{"index": 0}]
        message = {"role": "assistant", "content": text, "refusal": None}
        return {**response, "choices": [{**choices[0], "message": message, "finish_reason": "stop"}, *choices[1:]]}

    def with_function_tool(
        self, body: dict[str, Any], name: str, description: str, schema: dict[str, Any]
    ) -> dict[str, Any] | None:
        tool = {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}
        return with_tool(body, name, tool, lambda existing: (existing.get("function") or {}).get("name"))

    def tool_call(self, response: dict[str, Any], name: str) -> Any:
        choices = response.get("choices") or []
        message = (choices[0].get("message") or {}) if choices else {}
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            if function.get("name") == name:
                return function.get("arguments") or ""
        return None


def _carries(value: Any) -> bool:
    """A value that says something: not null, empty or false (LiteLLM fills absent fields with null)."""
    if isinstance(value, dict):
        return any(map(_carries, value.values()))
    return value not in (None, "", [], False)


def _empty_choice(choice: Any) -> bool:
    return isinstance(choice, dict) and not any(_carries(value) for key, value in choice.items() if key != "index")


class OpenAIStreamAccumulator(StreamAccumulator):
    def __init__(self) -> None:
        self.head: dict[str, Any] = {}
        self.texts: dict[int, list[str]] = {}
        self.calls: dict[int, dict[int, dict[str, Any]]] = {}
        self.finish: dict[int, str | None] = {}
        self.usage: dict[str, Any] | None = None

    def feed(self, event: SSEEvent) -> str:
        if event.data == "[DONE]":
            return ""
        chunk = event.json()
        for key in ("id", "created", "model", "system_fingerprint"):
            # Azure's first chunk (prompt_filter_results) has an empty id and model: take the first real ones.
            if not self.head.get(key):
                self.head[key] = chunk.get(key)
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        added = []
        for choice in chunk.get("choices") or []:
            index, delta = choice.get("index", 0), choice.get("delta") or {}
            if text := delta.get("content"):
                self.texts.setdefault(index, []).append(text)
                added.append(text)
            for call in delta.get("tool_calls") or []:
                slot = self.calls.setdefault(index, {}).setdefault(
                    call.get("index", 0), {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
                )
                slot["id"] = call.get("id") or slot["id"]
                function = call.get("function") or {}
                slot["function"]["name"] += function.get("name") or ""
                slot["function"]["arguments"] += function.get("arguments") or ""
            if choice.get("finish_reason"):
                self.finish[index] = choice["finish_reason"]
            self.texts.setdefault(index, [])
        return "".join(added)

    def result(self) -> dict[str, Any]:
        choices = []
        for index in sorted(self.texts):
            message: dict[str, Any] = {"role": "assistant", "content": "".join(self.texts[index]) or None}
            if index in self.calls:
                message["tool_calls"] = [self.calls[index][i] for i in sorted(self.calls[index])]
            choices.append(
                {"index": index, "message": message, "logprobs": None, "finish_reason": self.finish.get(index)}
            )
        return {**self.head, "object": "chat.completion", "choices": choices, "usage": self.usage}


OPENAI = OpenAIChat()
