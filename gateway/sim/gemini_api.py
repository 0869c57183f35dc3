"""POST /v1beta/models/{model}:generateContent and :streamGenerateContent?alt=sse in Gemini's wire format.

What it models of Google's API, from its reference and from recorded exchanges (tests/conformance):
- the key in `x-goog-api-key` (or `?key=`), the model in the path, errors as `{"error": {code, message,
  status}}`;
- implicit prompt caching by prefix (reported as `cachedContentTokenCount`, which `promptTokenCount`
  includes), with OpenAI's prefix rules (1,024 tokens, 128-token steps) as the simulator's reading;
- thinking: 2.5 and 3 models think unless `thinkingConfig.thinkingBudget` is 0, reported as
  `thoughtsTokenCount` (billed as output, outside `candidatesTokenCount`);
- thought signatures: a Gemini 3 model signs each function call (`thoughtSignature` on the part) and
  refuses a history whose function calls come back without the signature it gave, as Google's API does;
- every stream chunk carries `usageMetadata` so far; the last one has the `finishReason`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gateway.sim.conversation import Turn
from gateway.sim.errors import ErrorKind, SimError, invalid_request
from gateway.sim.exchange import (
    Conversation,
    SseEvent,
    Timing,
    choose_fault,
    json_response,
    read_body,
    split_text,
    stream_response,
)
from gateway.sim.json_mode import gemini_schema
from gateway.sim.responses import Reply, limit_reply, output_tokens
from gateway.sim.state import SimState
from gateway.sim.tokens import encode

ENCODING = "o200k_base"  # the simulator's stand-in for Gemini's tokenizer
PATH = re.compile(r"([^/:]+):(generateContent|streamGenerateContent)")
THOUGHT_TOKENS = 24  # what a thinking model spends before each answer
_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def gemini_error_response(error: SimError) -> JSONResponse:
    body = {"error": {"code": error.status, "message": error.message, "status": _STATUS.get(error.status, "UNKNOWN")}}
    return JSONResponse(body, status_code=error.status, headers=error.headers)


def _signs_calls(model: str) -> bool:
    return model.startswith("gemini-3")


def _thinks(model: str, body: dict[str, Any]) -> bool:
    thinking = (body.get("generationConfig") or {}).get("thinkingConfig") or {}
    budget = thinking.get("thinkingBudget", thinking.get("thinking_budget"))  # proto JSON takes both
    return model.startswith(("gemini-2.5", "gemini-3")) and budget != 0


def signature(name: str, args: Any) -> bytes:
    """The signature the simulated model gives a call (what it needs back to keep its reasoning)."""
    return hashlib.sha256(f"sim-thought:{name}:{json.dumps(args, sort_keys=True)}".encode()).digest() * 3


def _signed(part: dict[str, Any], call: dict[str, Any]) -> bool:
    """Proto JSON bytes: standard or URL-safe base64 (google-genai sends back the URL-safe form)."""
    sent = part.get("thoughtSignature")
    if not isinstance(sent, str):
        return False
    try:
        decoded = base64.urlsafe_b64decode(sent.replace("+", "-").replace("/", "_") + "=" * (-len(sent) % 4))
    except ValueError:
        return False
    return decoded == signature(call.get("name", ""), call.get("args"))


def _part_text(part: dict[str, Any]) -> str:
    return part["text"] if isinstance(part.get("text"), str) and not part.get("thought") else ""


def _turns(body: dict[str, Any]) -> list[list[Turn]]:
    grouped: list[list[Turn]] = []
    system = body.get("systemInstruction") or body.get("system_instruction")
    if isinstance(system, dict):
        grouped.append([Turn("system", "".join(_part_text(p) for p in system.get("parts") or []))])
    for content in body["contents"]:
        parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
        if content.get("role") == "model":
            grouped.append([Turn("assistant", "".join(_part_text(p) for p in parts))])
            continue
        turns = [
            Turn("tool", json.dumps(p["functionResponse"].get("response")), p["functionResponse"].get("id"))
            for p in parts
            if isinstance(p.get("functionResponse"), dict)
        ]
        text = "".join(_part_text(p) for p in parts)
        grouped.append([*turns, Turn("user", text)] if text or not turns else turns)
    return grouped


def _check(model: str, body: dict[str, Any]) -> None:
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise invalid_request("* GenerateContentRequest.contents: contents is not specified")
    for index, content in enumerate(contents):
        if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
            raise invalid_request(
                f"* GenerateContentRequest.contents[{index}].parts: contents.parts must not be empty."
            )
        if not _signs_calls(model) or content.get("role") != "model":
            continue
        for part in content["parts"]:
            call = part.get("functionCall") if isinstance(part, dict) else None
            if isinstance(call, dict) and not _signed(part, call):
                raise invalid_request(
                    f"Function call is missing a thought_signature in functionCall parts. This is required for "
                    f"tools to work correctly, and missing thought_signature may lead to degraded model "
                    f"performance. Additional data, function call `{call.get('name')}` , position {index + 1}."
                )


def _forced_tool(body: dict[str, Any]) -> str | None:
    config = (body.get("toolConfig") or {}).get("functionCallingConfig") or {}
    if config.get("mode") not in ("ANY", "VALIDATED"):
        return None
    allowed = config.get("allowedFunctionNames") or []
    tools = body.get("tools")
    declared = [
        d.get("name")
        for t in ([tools] if isinstance(tools, dict) else tools or [])
        for d in t.get("functionDeclarations") or []
    ]
    names = [name for name in allowed or declared if isinstance(name, str)]
    return names[0] if names else None


def _parts(reply: Reply, model: str) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"text": reply.text}] if reply.text or not reply.tool_calls else []
    for call in reply.tool_calls:
        args = json.loads(call.arguments or "{}")
        part: dict[str, Any] = {"functionCall": {"name": call.name, "args": args}}
        if _signs_calls(model):
            part["thoughtSignature"] = base64.b64encode(signature(call.name, args)).decode()
        parts.append(part)
    return parts


def _usage(prompt: int, cached: int, candidates: int, thoughts: int) -> dict[str, Any]:
    usage: dict[str, Any] = {"promptTokenCount": prompt, "candidatesTokenCount": candidates}
    if cached:
        usage["cachedContentTokenCount"] = cached
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    usage["totalTokenCount"] = prompt + candidates + thoughts
    usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": prompt}]
    return usage


def _key(request: Request, state: SimState) -> str:
    key = request.headers.get("x-goog-api-key") or request.query_params.get("key") or ""
    if state.settings.require_key is not None and key != state.settings.require_key:
        raise SimError(400, ErrorKind.INVALID_REQUEST, "API key not valid. Please pass a valid API key.")
    return key


async def generate_content(request: Request) -> Response:
    state: SimState = request.app.state.sim
    match = PATH.fullmatch(request.path_params["target"])
    if match is None:
        return gemini_error_response(SimError(404, ErrorKind.NOT_FOUND, "Method not found."))
    model, method = match.groups()
    stream = method == "streamGenerateContent"
    try:
        key = _key(request, state)
        body = await read_body(request)
        if state.settings.record_requests:
            state.stats.record_request("gemini", request.url.path, dict(request.headers), body)
        _check(model, body)
        conversation = Conversation.of(_turns(body))
        fault = await choose_fault(request, state, model, conversation.directives)
        tools_offered = bool(body.get("tools"))
        reply = conversation.reply(state.replay, "call_", _forced_tool(body), gemini_schema(body), tools_offered)
    except SimError as error:
        state.stats.count_error(error.status)
        return gemini_error_response(error)
    cap = (body.get("generationConfig") or {}).get("maxOutputTokens")
    reply = limit_reply(reply, cap if isinstance(cap, int) else None, ENCODING)
    produced = output_tokens(reply, ENCODING)
    thoughts = THOUGHT_TOKENS if _thinks(model, body) else 0
    prompt_tokens = encode(json.dumps([body.get("systemInstruction"), body.get("tools"), body["contents"]]), ENCODING)
    namespace = (key, f"gemini:{model}")
    plan = state.openai_cache.plan(namespace, prompt_tokens, state.settings.openai_in_memory_ttl_s)
    try:
        state.rate_limits.admit(namespace, plan.prompt_tokens, "gemini")  # Gemini reports no limits in headers
    except SimError as error:
        state.stats.count_error(error.status)
        return gemini_error_response(error)
    cached = plan.cached_tokens
    state.stats.count(
        model,
        requests=1,
        input_tokens=plan.prompt_tokens - cached,
        cache_read_tokens=cached,
        output_tokens=produced + thoughts,
    )
    usage = _usage(plan.prompt_tokens, cached, produced, thoughts)
    timing = Timing.simulated(state.settings.latency, plan.prompt_tokens - cached, cached, produced + thoughts)
    head = {"modelVersion": model, "responseId": uuid.uuid4().hex[:22]}
    finish = "MAX_TOKENS" if reply.truncated else "STOP"
    commit = lambda: state.openai_cache.commit(namespace, plan)  # noqa: E731
    if not stream:
        candidate = {"content": {"parts": _parts(reply, model), "role": "model"}, "finishReason": finish, "index": 0}
        return await json_response({"candidates": [candidate], "usageMetadata": usage, **head}, timing, commit, fault)
    events = _chunks(reply, model, plan.prompt_tokens, cached, thoughts, produced, finish, head, state)
    return stream_response(events, timing, commit, fault)


def _chunks(
    reply: Reply,
    model: str,
    prompt: int,
    cached: int,
    thoughts: int,
    produced: int,
    finish: str,
    head: dict[str, Any],
    state: SimState,
) -> list[SseEvent]:
    pieces: list[dict[str, Any]] = [{"text": t} for t in split_text(reply.text, state.settings.stream_chunk_words)]
    pieces += [part for part in _parts(reply, model) if "functionCall" in part]
    pieces = pieces or [{"text": ""}]
    events: list[SseEvent] = []
    so_far = 0
    for index, part in enumerate(pieces):
        so_far = (
            produced
            if index == len(pieces) - 1
            else min(produced, so_far + output_tokens(Reply(part.get("text", "")), ENCODING))
        )
        candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}, "index": 0}
        if index == len(pieces) - 1:
            candidate["finishReason"] = finish
        chunk = {"candidates": [candidate], "usageMetadata": _usage(prompt, cached, so_far, thoughts), **head}
        events.append(SseEvent(json.dumps(chunk), carries_output=True))
    return events
