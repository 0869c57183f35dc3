"""POST /v1/embeddings (deterministic vectors) and POST /v1/completions (legacy completions), OpenAI's shapes."""

from __future__ import annotations

import base64
import hashlib
import json
import math
import struct
import time
import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gateway.sim.conversation import Turn
from gateway.sim.errors import SimError, invalid_request, openai_error_response
from gateway.sim.exchange import (
    Conversation,
    SseEvent,
    Timing,
    choose_fault,
    json_response,
    read_request,
    split_text,
    stream_response,
)
from gateway.sim.openai_exchange import REJECTED_KEY
from gateway.sim.responses import limit_reply, output_tokens
from gateway.sim.state import SimState
from gateway.sim.tokens import count_tokens, openai_encoding

DEFAULT_DIMENSIONS = 1536  # text-embedding-3-small's
LARGE_DIMENSIONS = 3072  # text-embedding-3-large's, and the most `dimensions` may ask
LEGACY_DEFAULT_MAX_TOKENS = 16  # the completions API's default


# -- embeddings ---------------------------------------------------------------------------------------------


def _inputs(value: Any) -> list[str]:
    """Each input as text: strings, or token arrays (a list of ints, or a list of them)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, int) for v in value):
        return [json.dumps(value)]
    if isinstance(value, list) and value and all(isinstance(v, str | list) for v in value):
        return [v if isinstance(v, str) else json.dumps(v) for v in value]
    raise invalid_request("'$.input' is invalid. Please check the API reference.", param="input")


def vector(model: str, text: str, dimensions: int) -> list[float]:
    """A unit vector that depends only on the model and the text: same input, same embedding."""
    raw = hashlib.shake_256(f"{model}\0{text}".encode()).digest(2 * dimensions)
    values = [v / 32767.5 - 1.0 for v in struct.unpack(f"<{dimensions}H", raw)]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def _dimensions(body: dict[str, Any], model: str) -> int:
    asked = body.get("dimensions")
    if asked is None:
        return LARGE_DIMENSIONS if "large" in model else DEFAULT_DIMENSIONS
    if not isinstance(asked, int) or isinstance(asked, bool) or not 1 <= asked <= LARGE_DIMENSIONS:
        raise invalid_request(f"Invalid value for 'dimensions': must be between 1 and {LARGE_DIMENSIONS}.")
    return asked


def _encoded(values: list[float], encoding_format: Any) -> list[float] | str:
    if encoding_format == "base64":  # what the openai SDKs ask for by default
        return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()
    return values


async def _read_with_model(request: Request, state: SimState) -> tuple[dict[str, Any], str]:
    _, body = await read_request(request, state, "openai", REJECTED_KEY)
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise invalid_request("you must provide a model parameter", param="model")
    return body, model


async def embeddings(request: Request) -> Response:
    state: SimState = request.app.state.sim
    try:
        body, model = await _read_with_model(request, state)
        texts = _inputs(body.get("input"))
        dimensions = _dimensions(body, model)
        if body.get("encoding_format", "float") not in ("float", "base64"):
            raise invalid_request("Invalid value for 'encoding_format'.", param="encoding_format")
    except SimError as error:
        state.stats.count_error(error.status)
        return openai_error_response(error)
    tokens = sum(count_tokens(text, "cl100k_base") for text in texts)
    state.stats.count(model, requests=1, input_tokens=tokens)
    form = body.get("encoding_format")
    data = [
        {"object": "embedding", "index": i, "embedding": _encoded(vector(model, text, dimensions), form)}
        for i, text in enumerate(texts)
    ]
    usage = {"prompt_tokens": tokens, "total_tokens": tokens}
    return JSONResponse({"object": "list", "data": data, "model": model, "usage": usage})


# -- legacy completions -------------------------------------------------------------------------------------


def _prompt(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    if isinstance(value, list):  # token arrays: no directives to read
        return ""
    raise invalid_request("'prompt' is required: a string or an array.", param="prompt")


def _choice(text: str, finish_reason: str | None) -> dict[str, Any]:
    return {"text": text, "index": 0, "logprobs": None, "finish_reason": finish_reason}


async def completions(request: Request) -> Response:
    state: SimState = request.app.state.sim
    try:
        body, model = await _read_with_model(request, state)
        prompt = _prompt(body.get("prompt"))
        conversation = Conversation.of([[Turn("user", prompt)]])
        fault = await choose_fault(request, state, model, conversation.directives)
        reply = conversation.reply(state.replay, "call_", None)
    except SimError as error:
        state.stats.count_error(error.status)
        return openai_error_response(error)
    encoding = openai_encoding(model)
    max_tokens = body.get("max_tokens")
    reply = limit_reply(reply, max_tokens if isinstance(max_tokens, int) else LEGACY_DEFAULT_MAX_TOKENS, encoding)
    produced, prompt_tokens = output_tokens(reply, encoding), count_tokens(prompt, encoding)
    state.stats.count(model, requests=1, input_tokens=prompt_tokens, output_tokens=produced)
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": produced, "total_tokens": prompt_tokens + produced}
    finish = "length" if reply.truncated else "stop"
    head = {"id": f"cmpl-{uuid.uuid4().hex[:24]}", "object": "text_completion", "created": int(time.time())}
    head["model"] = model
    timing = Timing.simulated(state.settings.latency, prompt_tokens, 0, produced)
    if body.get("stream"):
        pieces = split_text(reply.text, state.settings.stream_chunk_words)
        events = [SseEvent(json.dumps({**head, "choices": [_choice(p, None)]}), carries_output=True) for p in pieces]
        events.append(SseEvent(json.dumps({**head, "choices": [_choice("", finish)]})))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append(SseEvent(json.dumps({**head, "choices": [], "usage": usage})))
        events.append(SseEvent("[DONE]"))
        return stream_response(events, timing, lambda: None, fault)
    payload = {**head, "choices": [_choice(reply.text, finish)], "usage": usage}
    return await json_response(payload, timing, lambda: None, fault)
