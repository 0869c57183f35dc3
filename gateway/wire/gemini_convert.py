"""Gemini generateContent <-> OpenAI Chat Completions, so a Gemini-shaped caller can reach any route.

Requests: `contents` -> messages (functionCall parts -> assistant tool_calls, functionResponse parts ->
tool messages), `systemInstruction` -> a system message, functionDeclarations -> function tools,
toolConfig -> tool_choice (allowedFunctionNames -> OpenAI's allowed_tools), generationConfig -> sampling
fields. Responses and stream chunks come back the other way (reasoning tokens as thoughtsTokenCount). What
OpenAI cannot express (topK, thinkingConfig, safetySettings, Google-hosted tools) is left out.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson

from gateway.wire.sse import SSEEvent, encode, parse_event

FINISH_REASONS = {"stop": "STOP", "length": "MAX_TOKENS", "tool_calls": "STOP", "content_filter": "SAFETY"}
CALLING_MODES = {"AUTO": "auto", "ANY": "required", "NONE": "none", "VALIDATED": "auto"}
SAMPLING = {
    "temperature": "temperature",
    "topP": "top_p",
    "maxOutputTokens": "max_tokens",
    "candidateCount": "n",
    "seed": "seed",
    "presencePenalty": "presence_penalty",
    "frequencyPenalty": "frequency_penalty",
}


def _text(parts: list[dict[str, Any]]) -> str:
    return "".join(p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought"))


def _user_part(part: dict[str, Any]) -> dict[str, Any] | None:
    if isinstance(part.get("text"), str) and not part.get("thought"):
        return {"type": "text", "text": part["text"]}
    inline = part.get("inlineData")
    if isinstance(inline, dict) and str(inline.get("mimeType", "")).startswith("image/"):
        return {"type": "image_url", "image_url": {"url": f"data:{inline['mimeType']};base64,{inline.get('data', '')}"}}
    return None


def _schema(value: Any) -> Any:
    """Gemini's OpenAPI subset spells types in upper case (OBJECT, STRING); JSON Schema wants lower case."""
    if isinstance(value, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else _schema(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_schema(v) for v in value]
    return value


def tool_list(body: dict[str, Any]) -> list[Any]:
    """`tools` as a list: Google's JSON parser also takes one Tool object where the API says array (and
    clients send it so), which must reach the model as it would reach Google."""
    tools = body.get("tools")
    return [tools] if isinstance(tools, dict) else tools if isinstance(tools, list) else []


def _tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    tools = []
    for tool in tool_list(body):
        for declaration in tool.get("functionDeclarations") or []:
            function: dict[str, Any] = {"name": declaration["name"]}
            if declaration.get("description"):
                function["description"] = declaration["description"]
            parameters = declaration.get("parametersJsonSchema") or _schema(declaration.get("parameters"))
            function["parameters"] = parameters or {"type": "object", "properties": {}}
            tools.append({"type": "function", "function": function})
    return tools


def _tool_choice(body: dict[str, Any]) -> Any:
    config = (body.get("toolConfig") or {}).get("functionCallingConfig") or {}
    mode = CALLING_MODES.get(str(config.get("mode", "")).upper())
    listed = config.get("allowedFunctionNames")
    names = [name for name in listed if isinstance(name, str)] if isinstance(listed, list) else []
    if mode == "none" or not names:
        return mode
    if mode == "required" and len(names) == 1:
        return {"type": "function", "function": {"name": names[0]}}
    # Several allowed names (or an allow-list without forcing a call): OpenAI's allowed_tools keeps both.
    allowed = [{"type": "function", "function": {"name": name}} for name in names]
    return {"type": "allowed_tools", "allowed_tools": {"mode": mode or "auto", "tools": allowed}}


def _generation(config: dict[str, Any]) -> dict[str, Any]:
    out = {name: config[key] for key, name in SAMPLING.items() if config.get(key) is not None}
    if config.get("stopSequences"):
        out["stop"] = config["stopSequences"]
    if config.get("responseMimeType") == "application/json":
        schema = config.get("responseJsonSchema") or _schema(config.get("responseSchema"))
        out["response_format"] = (
            {"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}
            if schema
            else {"type": "json_object"}
        )
    return out


class _Calls:
    """Gemini may leave function calls without ids; OpenAI pairs tool messages with calls by id."""

    def __init__(self) -> None:
        self.pending: list[tuple[str, str]] = []  # (id, name) of calls not answered yet
        self.count = 0

    def new(self, call: dict[str, Any]) -> str:
        self.count += 1
        call_id = str(call.get("id") or f"call_{self.count}")
        self.pending.append((call_id, call["name"]))
        return call_id

    def answer(self, response: dict[str, Any]) -> str:
        wanted = response.get("id")
        for position, (call_id, name) in enumerate(self.pending):
            if call_id == wanted or (not wanted and name == response["name"]):
                del self.pending[position]
                return call_id
        return str(wanted or f"call_{response['name']}")


def chat_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """`systemInstruction` and `contents` as Chat Completions messages."""
    messages: list[dict[str, Any]] = []
    system = body.get("systemInstruction")
    system_text = system if isinstance(system, str) else _text((system or {}).get("parts") or [])
    if system_text:
        messages.append({"role": "system", "content": system_text})
    calls = _Calls()
    for content in body.get("contents") or []:
        parts = content.get("parts") or []
        if content.get("role") == "model":
            message: dict[str, Any] = {"role": "assistant", "content": _text(parts) or None}
            tool_calls = [
                {
                    "id": calls.new(p["functionCall"]),
                    "type": "function",
                    "function": {
                        "name": p["functionCall"]["name"],
                        "arguments": orjson.dumps(p["functionCall"].get("args") or {}).decode(),
                    },
                }
                for p in parts
                if "functionCall" in p
            ]
            if tool_calls:
                message["tool_calls"] = tool_calls
            messages.append(message)
            continue
        answers = [part["functionResponse"] for part in parts if "functionResponse" in part]
        for response in answers:
            output = response.get("response")
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": calls.answer(response),
                    "content": output if isinstance(output, str) else orjson.dumps(output or {}).decode(),
                }
            )
        user = [converted for part in parts if (converted := _user_part(part)) is not None]
        if user or not answers:
            # A user turn with nothing OpenAI can express stays, empty, so the turns keep their order
            # (a conversation must not start with the model's turn).
            messages.append({"role": "user", "content": user or ""})
    return messages


def to_openai(body: dict[str, Any], stream: bool) -> dict[str, Any]:
    """The Chat Completions request for a generateContent body (model added by the upstream path)."""
    messages = chat_messages(body)
    request: dict[str, Any] = {
        "messages": messages,
        "stream": stream,
        **_generation(body.get("generationConfig") or {}),
    }
    if tools := _tools(body):
        request["tools"] = tools
        if choice := _tool_choice(body):
            request["tool_choice"] = choice
    return request


def _usage(usage: dict[str, Any] | None) -> dict[str, Any]:
    """OpenAI's completion_tokens include the reasoning tokens; Gemini reports thoughts apart from the
    candidates (both billed as output)."""
    usage = usage or {}
    prompt, output = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    thoughts = min(output, int((usage.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0))
    meta: dict[str, Any] = {"promptTokenCount": prompt, "candidatesTokenCount": output - thoughts}
    cached = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
    if cached:
        meta["cachedContentTokenCount"] = cached
    if thoughts:
        meta["thoughtsTokenCount"] = thoughts
    meta["totalTokenCount"] = prompt + output
    return meta


def _call_part(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    try:
        args = orjson.loads(function.get("arguments") or "{}")
    except orjson.JSONDecodeError:
        args = {"arguments": function.get("arguments")}
    part: dict[str, Any] = {"name": function.get("name") or "", "args": args if isinstance(args, dict) else {}}
    if call.get("id"):
        part["id"] = call["id"]
    return {"functionCall": part}


def _candidate(index: int, parts: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": index}
    if finish:
        candidate["finishReason"] = FINISH_REASONS.get(finish, "OTHER")
    return candidate


def from_openai(response: dict[str, Any], model: str) -> dict[str, Any]:
    """A generateContent response for a Chat Completions response."""
    candidates = []
    for choice in response.get("choices") or []:
        message = choice.get("message") or {}
        parts: list[dict[str, Any]] = [{"text": message["content"]}] if message.get("content") else []
        parts += [_call_part(call) for call in message.get("tool_calls") or []]
        candidates.append(
            _candidate(choice.get("index", 0), parts or [{"text": ""}], choice.get("finish_reason") or "stop")
        )
    return {
        "candidates": candidates,
        "usageMetadata": _usage(response.get("usage")),
        "modelVersion": model,
        "responseId": str(response.get("id") or ""),
    }


async def stream_from_openai(events: AsyncIterator[SSEEvent], model: str) -> AsyncIterator[SSEEvent]:
    """Gemini chunks for a Chat Completions stream: text as it comes; tool calls (their arguments arrive
    in pieces), finishReason and usage together in one final chunk once the provider's stream ends."""
    head = {"modelVersion": model}
    calls: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    usage: dict[str, Any] | None = None
    try:
        async for event in events:
            if event.data == "[DONE]":
                break
            chunk = event.json()
            head["responseId"] = str(chunk.get("id") or "")
            usage = chunk.get("usage") or usage
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                if text := delta.get("content"):
                    parts = [{"text": text}]
                    yield parse_event(encode({"candidates": [_candidate(0, parts, None)], **head}))
                for call in delta.get("tool_calls") or []:
                    slot = calls.setdefault(
                        call.get("index", 0), {"id": None, "function": {"name": "", "arguments": ""}}
                    )
                    slot["id"] = call.get("id") or slot["id"]
                    function = call.get("function") or {}
                    slot["function"]["name"] += function.get("name") or ""
                    slot["function"]["arguments"] += function.get("arguments") or ""
                finish = choice.get("finish_reason") or finish
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()  # the provider's connection, when the client left early
    parts = [_call_part(calls[i]) for i in sorted(calls)] or [{"text": ""}]
    final = {"candidates": [_candidate(0, parts, finish or "stop")], "usageMetadata": _usage(usage), **head}
    yield parse_event(encode(final))
