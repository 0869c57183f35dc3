"""Anthropic Messages wire format."""

from __future__ import annotations

import uuid
from typing import Any

import orjson

from gateway.errors import ErrorKind, GatewayError, bad_request
from gateway.usage import Usage
from gateway.wire.base import StreamAccumulator, WireFormat
from gateway.wire.checks import (
    check_sampling,
    expect,
    optional,
    optional_type,
    pairing_start,
    require_list,
    require_object,
    require_str,
    typed_object,
)
from gateway.wire.fields import ANTHROPIC_MESSAGES_FIELDS
from gateway.wire.notes import joined, with_note
from gateway.wire.sse import USAGE_EXTRA_KEY, SSEEvent, encode
from gateway.wire.tools import with_tool

ERROR_TYPES: dict[ErrorKind, str] = {
    ErrorKind.INVALID_REQUEST: "invalid_request_error",
    ErrorKind.AUTHENTICATION: "authentication_error",
    ErrorKind.PERMISSION: "permission_error",
    ErrorKind.NOT_FOUND: "not_found_error",
    ErrorKind.TOO_LARGE: "request_too_large",
    ErrorKind.RATE_LIMIT: "rate_limit_error",
    ErrorKind.UPSTREAM: "api_error",
    ErrorKind.OVERLOADED: "overloaded_error",
    ErrorKind.TIMEOUT: "timeout_error",
    ErrorKind.AGENT_STOPPED: "agent_loop_stopped",
    ErrorKind.INTERNAL: "api_error",
    ErrorKind.BUDGET: "billing_error",  # Anthropic's own 402 type
}

ZERO_USAGE = {
    "input_tokens": 0,
    "output_tokens": 0,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}


# `system` messages are not in the API, yet some clients send them: the provider judges them, untouched.
ROLES = {"user", "assistant", "system"}


def _valid_message(message: Any) -> bool:
    """`_check_message`'s rules, answered without spelling a path: formatting `messages.12.content.3` for
    every field was most of a long history's validation. False: `_check_message` names what is wrong."""
    if not isinstance(message, dict):
        return False
    role = message.get("role")
    if not isinstance(role, str) or role not in ROLES:
        return False
    content = message.get("content")
    return isinstance(content, str) or _valid_blocks(content)


def _valid_blocks(content: Any) -> bool:
    # map, not a generator: one per message cost as much as its checks
    return isinstance(content, list) and all(map(_valid_block, content))


def _valid_block(block: Any) -> bool:
    """`_check_block`'s rules."""
    if not isinstance(block, dict) or not isinstance(kind := block.get("type"), str):
        return False
    if kind == "text":
        return isinstance(block.get("text"), str)
    if kind == "thinking":
        return isinstance(block.get("thinking"), str)
    if kind in ("tool_use", "server_tool_use"):
        return (
            isinstance(block.get("id"), str)
            and isinstance(block.get("name"), str)
            and isinstance(block.get("input"), dict)
        )
    if kind == "tool_result":
        if not isinstance(block.get("tool_use_id"), str):
            return False
        content = block.get("content")
        return content is None or isinstance(content, str) or _valid_blocks(content)
    return True


def _check_message(index: int, message: Any) -> dict[str, Any]:
    where = f"messages.{index}"
    if not isinstance(message, dict):
        raise bad_request(f"{where}: message must be an object.")
    if not isinstance(message.get("role"), str) or message["role"] not in ROLES:
        raise bad_request(f"{where}.role: Input should be 'user' or 'assistant'.")
    content = message.get("content")
    if not isinstance(content, str | list):
        raise bad_request(f"{where}.content: must be a string or an array of content blocks.")
    if isinstance(content, list):
        for position, block in enumerate(content):
            _check_block(f"{where}.content.{position}", block)
    return message


def _check_block(where: str, block: Any) -> None:
    """What stages read of a content block: text and thinking strings, tool_use names and inputs,
    tool_result contents. Other block types pass through for the provider to judge."""
    block = typed_object(where, block)
    kind = block["type"]
    if kind == "text":
        expect(f"{where}.text", block.get("text"), (str,), "a string")
    elif kind == "thinking":
        expect(f"{where}.thinking", block.get("thinking"), (str,), "a string")
    elif kind in ("tool_use", "server_tool_use"):
        expect(f"{where}.id", block.get("id"), (str,), "a string")
        expect(f"{where}.name", block.get("name"), (str,), "a string")
        expect(f"{where}.input", block.get("input"), (dict,), "an object")
    elif kind == "tool_result":
        expect(f"{where}.tool_use_id", block.get("tool_use_id"), (str,), "a string")
        content = block.get("content")
        optional(f"{where}.content", content, (str, list), "a string or an array of content blocks")
        for position, inner in enumerate(content if isinstance(content, list) else []):
            _check_block(f"{where}.content.{position}", inner)


def _check_system(system: Any) -> None:
    optional("system", system, (str, list), "a string or an array of text blocks")
    for position, block in enumerate(system if isinstance(system, list) else []):
        _check_block(f"system.{position}", block)


def _block_ids(content: Any, kind: str, field: str) -> set[str]:
    """`field` of each `kind` block of a message's content (a string content has no such block)."""
    if not isinstance(content, list):
        return set()
    return {str(b.get(field)) for b in content if isinstance(b, dict) and b.get("type") == kind}


def _check_tool_pairing(messages: list[dict[str, Any]], start: int = 0) -> None:
    """Like the Anthropic API: tool_use ids must be answered by tool_result in the next user message (from
    `start`, a message before which none is pending)."""
    pending: set[str] = set()
    for index in range(start, len(messages)):
        message = messages[index]
        role = message["role"]
        if role == "system":  # not the API's; left to the provider
            continue
        if role == "user":
            results = _block_ids(message["content"], "tool_result", "tool_use_id")
            if results == pending:  # the usual case: every call answered, nothing else
                pending = set()
                continue
            if unknown := results - pending:
                raise bad_request(
                    f"messages.{index}.content: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{sorted(unknown)}. Each `tool_result` block must have a corresponding `tool_use` "
                    "block in the previous message."
                )
            if missing := pending - results:
                raise bad_request(
                    f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {sorted(missing)}. Each `tool_use` block must have a "
                    "corresponding `tool_result` block in the next message."
                )
            pending = set()
        else:
            if pending:
                raise bad_request(
                    f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {sorted(pending)}."
                )
            pending = _block_ids(message["content"], "tool_use", "id")


class AnthropicMessages(WireFormat):
    name = "anthropic"
    upstream_fields = ANTHROPIC_MESSAGES_FIELDS
    request_id_headers = ("x-request-id", "request-id")  # Anthropic's SDKs read `request-id`
    # Not 400: on a 400 Claude Code resends the request without its betas, up to 5 more times (403: it
    # prints "Failed to authenticate"). A 409 with `x-should-retry: false` it shows once, as do the SDKs.
    block_status = 409

    def validate(self, body: Any, known: int = 0) -> None:
        body = require_object(body)
        require_str(body, "model")
        max_tokens = body.get("max_tokens")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise bad_request("max_tokens: Field required (a positive integer).", param="max_tokens")
        messages = require_list(body, "messages")
        for index in range(known, len(messages)):
            if not _valid_message(message := messages[index]):
                _check_message(index, message)
        check_sampling(body)
        _check_system(body.get("system"))
        optional_type(body, "metadata", (dict,), "an object")
        optional("tool_choice", body.get("tool_choice"), (dict,), "an object")
        for index, tool in enumerate(body.get("tools") or []):
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                raise bad_request(f"tools.{index}: each tool needs a 'name'.")
            optional(
                f"tools.{index}.type", tool.get("type"), (str,), "a string"
            )  # server tools: the prompt cache reads it
        _check_tool_pairing(messages, pairing_start(messages, known, ("user", "system")))

    def error_body(self, error: GatewayError) -> dict[str, Any]:
        body: dict[str, Any] = {"type": ERROR_TYPES[error.kind], "message": error.message}
        if error.provider:  # an Anthropic provider's own error type, as it sent it
            body.update(error.provider.fields_for("anthropic"))
        if error.code:  # not in Anthropic's own errors; carries e.g. the guard's stop reason
            body["code"] = error.code
        return {"type": "error", "error": body, **(error.provider.envelope_for("anthropic") if error.provider else {})}

    def session_fallback(self, body: dict[str, Any]) -> str | None:
        """`metadata.user_id`; Claude Code sends a JSON string `{"device_id", "account_uuid", "session_id"}`
        there, whose `session_id` is the session (the device id is the same for every session)."""
        metadata = body.get("metadata")
        value = metadata.get("user_id") if isinstance(metadata, dict) else None
        if not isinstance(value, str) or not value:
            return None
        if value.startswith("{"):
            try:
                parsed = orjson.loads(value)
            except orjson.JSONDecodeError:
                return value
            session = parsed.get("session_id") if isinstance(parsed, dict) else None
            if isinstance(session, str) and session:
                return session
        return value

    def text_reply(self, model: str, text: str, *, stop_reason: str = "end_turn") -> dict[str, Any]:
        return {
            "id": f"msg_cg{uuid.uuid4().hex[:22]}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": dict(ZERO_USAGE),
        }

    def replay_events(self, response: dict[str, Any], *, include_usage: bool = False) -> list[bytes]:
        start = {**response, "content": [], "stop_reason": None, "stop_sequence": None}
        start["usage"] = {**(response.get("usage") or ZERO_USAGE), "output_tokens": 0}
        events = [encode({"type": "message_start", "message": start}, "message_start")]
        for index, block in enumerate(response.get("content") or []):
            kind = block.get("type")
            if kind == "text":
                opening, delta = {**block, "text": ""}, {"type": "text_delta", "text": block.get("text", "")}
            elif kind == "tool_use":
                opening = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": orjson.dumps(block.get("input")).decode()}
            else:
                opening, delta = block, None
            events.append(
                encode({"type": "content_block_start", "index": index, "content_block": opening}, "content_block_start")
            )
            if delta is not None:
                events.append(
                    encode({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta")
                )
            events.append(encode({"type": "content_block_stop", "index": index}, "content_block_stop"))
        closing = {
            "type": "message_delta",
            "delta": {"stop_reason": response.get("stop_reason"), "stop_sequence": response.get("stop_sequence")},
            "usage": {"output_tokens": (response.get("usage") or {}).get("output_tokens", 0)},
        }
        events.append(encode(closing, "message_delta"))
        events.append(encode({"type": "message_stop"}, "message_stop"))
        return events

    def closing_events(self, partial: dict[str, Any]) -> list[bytes]:
        events = [
            encode({"type": "content_block_stop", "index": index}, "content_block_stop")
            for index in range(len(partial.get("content") or []))[-1:]
        ]
        closing = {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": (partial.get("usage") or {}).get("output_tokens", 0)},
        }
        return [*events, encode(closing, "message_delta"), encode({"type": "message_stop"}, "message_stop")]

    def stream_error_event(self, error: GatewayError) -> bytes:
        return encode(self.error_body(error), "error")

    def is_usage_only(self, event: SSEEvent) -> bool:
        return False

    def accumulator(self) -> StreamAccumulator:
        return AnthropicStreamAccumulator()

    def usage(self, response: dict[str, Any]) -> Usage:
        model = response.get("model")
        return Usage.from_anthropic(response.get("usage"), model if isinstance(model, str) else None)

    def with_zero_usage(self, response: dict[str, Any]) -> dict[str, Any]:
        return {**response, "usage": dict(ZERO_USAGE)}

    def is_stream_done(self, event: SSEEvent) -> bool:
        return event.event == "message_stop"

    def is_final_usage(self, event: SSEEvent) -> bool:
        """`message_delta`: the stream's cumulative usage, just before `message_stop`."""
        return event.event == "message_delta"

    def with_usage_extra(self, event: SSEEvent, extra: dict[str, Any]) -> bytes:
        data = event.json()
        data["usage"] = {**(data.get("usage") or {}), USAGE_EXTRA_KEY: extra}
        return encode(data, "message_delta")

    # --- Loop guard (methods of WireFormat's loop-guard block) ---

    guard_format = "anthropic"

    def with_guard_note(self, body: dict[str, Any], text: str) -> dict[str, Any] | None:
        part = {"type": "text", "text": text}  # after the message's tool_result blocks

        def add(message: dict[str, Any]) -> dict[str, Any]:
            return {**message, "content": joined(message.get("content"), text, part, [part])}

        return with_note(body, "messages", lambda message: message.get("role") == "user", add)

    def reply_text(self, response: dict[str, Any]) -> str:
        return "".join(b.get("text", "") for b in response.get("content") or [] if b.get("type") == "text")

    def reply_tool_calls(self, response: dict[str, Any]) -> int:
        return sum(1 for block in response.get("content") or [] if block.get("type") == "tool_use")

    def with_text_only(self, response: dict[str, Any], text: str) -> dict[str, Any]:
        content = [{"type": "text", "text": text}]
        return {**response, "content": content, "stop_reason": "end_turn", "stop_sequence": None}

    def with_function_tool(
        self, body: dict[str, Any], name: str, description: str, schema: dict[str, Any]
    ) -> dict[str, Any] | None:
        tool = {"name": name, "description": description, "input_schema": schema}
        return with_tool(body, name, tool, lambda existing: existing.get("name"))

    def tool_call(self, response: dict[str, Any], name: str) -> Any:
        for block in response.get("content") or []:
            if block.get("type") == "tool_use" and block.get("name") == name:
                return block.get("input") or {}
        return None


class AnthropicStreamAccumulator(StreamAccumulator):
    def __init__(self) -> None:
        self.message: dict[str, Any] = {}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.partial_json: dict[int, list[str]] = {}

    def feed(self, event: SSEEvent) -> str:
        data = event.json()
        kind = data.get("type")
        if kind == "message_start":
            self.message = dict(data.get("message") or {})
        elif kind == "content_block_start":
            self.blocks[data["index"]] = dict(data.get("content_block") or {})
        elif kind == "content_block_delta":
            return self._apply_delta(data["index"], data.get("delta") or {})
        elif kind == "content_block_stop":
            parts = self.partial_json.pop(data["index"], None)
            if parts is not None:
                self.blocks[data["index"]]["input"] = orjson.loads("".join(parts) or "{}")
        elif kind == "message_delta":
            self.message.update(data.get("delta") or {})
            self.message["usage"] = {**(self.message.get("usage") or {}), **(data.get("usage") or {})}
        return ""

    def _apply_delta(self, index: int, delta: dict[str, Any]) -> str:
        block = self.blocks.setdefault(index, {"type": "text", "text": ""})
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + delta.get("text", "")
            return str(delta.get("text", ""))
        if kind == "input_json_delta":
            self.partial_json.setdefault(index, []).append(delta.get("partial_json", ""))
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
        elif kind == "signature_delta":
            block["signature"] = delta.get("signature", "")
        return ""

    def result(self) -> dict[str, Any]:
        return {**self.message, "content": [self.blocks[i] for i in sorted(self.blocks)]}


ANTHROPIC = AnthropicMessages()
