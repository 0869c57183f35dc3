"""Gemini API wire format (`POST /v1beta/models/{model}:generateContent` / `:streamGenerateContent`).

The model and whether to stream come from the URL, not the body (gateway/api/gemini.py puts them on the
request context). Streams are SSE events of whole `GenerateContentResponse` chunks; there is no done
marker: the last chunk carries `finishReason` (Gemini CLI retries a stream that ends without one).
"""

from __future__ import annotations

import uuid
from typing import Any

from gateway.errors import ErrorKind, GatewayError
from gateway.usage import Usage
from gateway.wire.base import StreamAccumulator, WireFormat, positive_int
from gateway.wire.checks import expect, optional, require_list, require_object
from gateway.wire.fields import GEMINI_GENERATE_FIELDS
from gateway.wire.gemini_convert import chat_messages, tool_list
from gateway.wire.notes import with_note
from gateway.wire.sse import SSEEvent, encode

# google.rpc.Code names, as Google's APIs put them in `error.status`.
STATUS_NAMES: dict[ErrorKind, str] = {
    ErrorKind.INVALID_REQUEST: "INVALID_ARGUMENT",
    ErrorKind.AUTHENTICATION: "UNAUTHENTICATED",
    ErrorKind.PERMISSION: "PERMISSION_DENIED",
    ErrorKind.NOT_FOUND: "NOT_FOUND",
    ErrorKind.TOO_LARGE: "INVALID_ARGUMENT",
    ErrorKind.RATE_LIMIT: "RESOURCE_EXHAUSTED",
    ErrorKind.UPSTREAM: "UNAVAILABLE",
    ErrorKind.OVERLOADED: "UNAVAILABLE",
    ErrorKind.TIMEOUT: "DEADLINE_EXCEEDED",
    ErrorKind.AGENT_STOPPED: "FAILED_PRECONDITION",  # Google's name of a 400 for a state the call needs
    ErrorKind.INTERNAL: "INTERNAL",
    ErrorKind.BUDGET: "RESOURCE_EXHAUSTED",
}
ZERO_USAGE = {"promptTokenCount": 0, "candidatesTokenCount": 0, "totalTokenCount": 0}


def _check_content(where: str, content: Any) -> None:
    """The conversion (gateway/wire/gemini_convert.py) reads roles and parts; part kinds pass through."""
    expect(where, content, (dict,), "an object")
    optional(f"{where}.role", content.get("role"), (str,), "a string")
    parts = content.get("parts")
    expect(f"{where}.parts", parts, (list,), "an array")
    for index, part in enumerate(parts):
        expect(f"{where}.parts[{index}]", part, (dict,), "an object")
        optional(f"{where}.parts[{index}].text", part.get("text"), (str,), "a string")
        for kind in ("functionCall", "functionResponse"):
            if kind in part:
                expect(f"{where}.parts[{index}].{kind}", part[kind], (dict,), "an object")
                expect(f"{where}.parts[{index}].{kind}.name", part[kind].get("name"), (str,), "a string")


def _check_tools(body: dict[str, Any]) -> None:
    optional("tools", body.get("tools"), (list, dict), "an array")
    for index, tool in enumerate(tool_list(body)):
        expect(f"tools[{index}]", tool, (dict,), "an object")
        declarations = tool.get("functionDeclarations")
        optional(f"tools[{index}].functionDeclarations", declarations, (list,), "an array")
        for position, declaration in enumerate(declarations or []):
            where = f"tools[{index}].functionDeclarations[{position}]"
            expect(where, declaration, (dict,), "an object")
            expect(f"{where}.name", declaration.get("name"), (str,), "a string")


def response_text(response: dict[str, Any]) -> str:
    parts = ((response.get("candidates") or [{}])[0].get("content") or {}).get("parts") or []
    return "".join(p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought"))


class Gemini(WireFormat):
    name = "gemini"

    def output_cap(self, body: dict[str, Any]) -> int | None:
        config = body.get("generationConfig")
        return positive_int(config.get("maxOutputTokens")) if isinstance(config, dict) else None

    upstream_fields = GEMINI_GENERATE_FIELDS
    sse_comments = False  # google-genai parses every non-blank line as a chunk
    history_field = "contents"

    def validate(self, body: Any, known: int = 0) -> None:
        body = require_object(body)
        contents = require_list(body, "contents")
        for index in range(known, len(contents)):
            _check_content(f"contents[{index}]", contents[index])
        system = body.get("systemInstruction")
        optional("systemInstruction", system, (dict, str), "an object")
        if isinstance(system, dict):
            _check_content("systemInstruction", {"parts": [], **system})
        _check_tools(body)
        optional("toolConfig", body.get("toolConfig"), (dict,), "an object")
        optional("generationConfig", body.get("generationConfig"), (dict,), "an object")

    def error_body(self, error: GatewayError) -> dict[str, Any]:
        body = {"code": error.status, "message": error.message, "status": STATUS_NAMES[error.kind]}
        if error.provider:  # a Gemini provider's own code, status and details, as it sent them
            body.update(error.provider.fields_for("gemini"))
        return {"error": body}

    def session_fallback(self, body: dict[str, Any]) -> str | None:
        return None  # Gemini requests carry no session id (Gemini CLI sends none either)

    def text_reply(self, model: str, text: str, *, stop_reason: str = "stop") -> dict[str, Any]:
        return {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": dict(ZERO_USAGE),
            "modelVersion": model,
            "responseId": f"cg-{uuid.uuid4().hex[:24]}",
        }

    def replay_events(self, response: dict[str, Any], *, include_usage: bool = False) -> list[bytes]:
        """Text in slices, then one final chunk with the other parts (function calls), finishReason and
        usage: the stream a client would have read from Google."""
        head = {k: response[k] for k in ("modelVersion", "responseId") if k in response}
        events: list[bytes] = []
        candidates = response.get("candidates") or []
        for candidate in candidates:
            index = candidate.get("index", 0)
            parts = (candidate.get("content") or {}).get("parts") or []
            texts = [p for p in parts if isinstance(p.get("text"), str) and not p.get("thought")]
            rest = [p for p in parts if p not in texts]
            for part in texts:
                for start in range(0, len(part["text"]), 64):
                    piece = {"role": "model", "parts": [{**part, "text": part["text"][start : start + 64]}]}
                    events.append(encode({"candidates": [{"content": piece, "index": index}], **head}))
            final = {
                "content": {"role": "model", "parts": rest or [{"text": ""}]},
                "finishReason": candidate.get("finishReason") or "STOP",
                "index": index,
            }
            events.append(encode({"candidates": [final], "usageMetadata": response.get("usageMetadata"), **head}))
        if not candidates:
            events.append(encode({**response}))
        return events

    def closing_events(self, partial: dict[str, Any]) -> list[bytes]:
        final = {"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP", "index": 0}
        usage = partial.get("usageMetadata") or dict(ZERO_USAGE)
        return [encode({"candidates": [final], "usageMetadata": usage, "modelVersion": partial.get("modelVersion")})]

    def stream_error_event(self, error: GatewayError) -> bytes:
        return encode(self.error_body(error))

    def is_usage_only(self, event: SSEEvent) -> bool:
        return False  # every Gemini chunk may carry usageMetadata; the caller always gets it

    def accumulator(self) -> StreamAccumulator:
        return GeminiStreamAccumulator()

    def usage(self, response: dict[str, Any]) -> Usage:
        """`promptTokenCount` includes `cachedContentTokenCount`; thoughts are billed as output."""
        meta = response.get("usageMetadata") or {}
        prompt = int(meta.get("promptTokenCount") or 0) + int(meta.get("toolUsePromptTokenCount") or 0)
        cached = int(meta.get("cachedContentTokenCount") or 0)
        output = int(meta.get("candidatesTokenCount") or 0) + int(meta.get("thoughtsTokenCount") or 0)
        return Usage(uncached_input=max(prompt - cached, 0), cache_read=cached, output=output)

    def with_zero_usage(self, response: dict[str, Any]) -> dict[str, Any]:
        return {**response, "usageMetadata": dict(ZERO_USAGE)}

    def is_stream_done(self, event: SSEEvent) -> bool:
        return False

    # --- Loop guard (methods of WireFormat's loop-guard block) ---

    def guard_history(self, body: dict[str, Any]) -> list[dict[str, Any]] | None:
        contents = body.get("contents")
        return chat_messages(body) if isinstance(contents, list) else None

    def with_guard_note(self, body: dict[str, Any], text: str) -> dict[str, Any] | None:
        def add(content: dict[str, Any]) -> dict[str, Any]:  # after its functionResponse parts
            return {**content, "parts": [*(content.get("parts") or []), {"text": text}]}

        return with_note(body, "contents", lambda content: content.get("role", "user") == "user", add)

    def reply_text(self, response: dict[str, Any]) -> str:
        return response_text(response)

    def reply_tool_calls(self, response: dict[str, Any]) -> int:
        return sum(
            1
            for candidate in response.get("candidates") or []
            for part in (candidate.get("content") or {}).get("parts") or []
            if "functionCall" in part
        )

    def with_text_only(self, response: dict[str, Any], text: str) -> dict[str, Any]:
        candidates = response.get("candidates") or [{"index": 0}]
        first = {**candidates[0], "content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
        return {**response, "candidates": [first, *candidates[1:]]}

    def with_function_tool(
        self, body: dict[str, Any], name: str, description: str, schema: dict[str, Any]
    ) -> dict[str, Any] | None:
        tools = tool_list(body)
        functions = [t for t in tools if isinstance(t, dict) and isinstance(t.get("functionDeclarations"), list)]
        if not functions or any(
            isinstance(d, dict) and d.get("name") == name for t in functions for d in t["functionDeclarations"]
        ):
            return None  # only next to the caller's own functions (built-in tools may not mix with them)
        declaration = {"name": name, "description": description, "parametersJsonSchema": schema}
        first = {**functions[0], "functionDeclarations": [*functions[0]["functionDeclarations"], declaration]}
        return {**body, "tools": [first if tool is functions[0] else tool for tool in tools]}

    def tool_call(self, response: dict[str, Any], name: str) -> Any:
        parts = ((response.get("candidates") or [{}])[0].get("content") or {}).get("parts") or []
        for part in parts:
            call = part.get("functionCall")
            if isinstance(call, dict) and call.get("name") == name:
                return call.get("args") or {}
        return None


class GeminiStreamAccumulator(StreamAccumulator):
    """Chunks -> one response: consecutive text parts joined, other parts kept, the last finishReason and
    usageMetadata (each chunk's usage is cumulative)."""

    def __init__(self) -> None:
        self.head: dict[str, Any] = {}
        self.parts: dict[int, list[dict[str, Any]]] = {}
        self.finish: dict[int, str] = {}
        self.usage: dict[str, Any] | None = None

    def feed(self, event: SSEEvent) -> str:
        chunk = event.json()
        if not isinstance(chunk, dict):
            raise ValueError("a Gemini stream chunk must be an object")
        for key in ("modelVersion", "responseId"):
            if key in chunk:
                self.head[key] = chunk[key]
        if chunk.get("usageMetadata"):
            self.usage = chunk["usageMetadata"]
        added: list[str] = []
        for candidate in chunk.get("candidates") or []:
            index = candidate.get("index", 0)
            parts = self.parts.setdefault(index, [])
            for part in (candidate.get("content") or {}).get("parts") or []:
                text = part.get("text")
                if isinstance(text, str) and set(part) == {"text"}:
                    if not text:
                        continue
                    if parts and set(parts[-1]) == {"text"}:
                        parts[-1] = {"text": parts[-1]["text"] + text}
                    else:
                        parts.append({"text": text})
                    added.append(text)
                else:
                    parts.append(part)
            if candidate.get("finishReason"):
                self.finish[index] = candidate["finishReason"]
        return "".join(added)

    def result(self) -> dict[str, Any]:
        candidates = [
            {
                "content": {"role": "model", "parts": self.parts[index]},
                "finishReason": self.finish.get(index),
                "index": index,
            }
            for index in sorted(self.parts)
        ]
        return {"candidates": candidates, "usageMetadata": self.usage, **self.head}


GEMINI = Gemini()
