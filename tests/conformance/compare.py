"""What counts as the same request and the same answer when a recorded exchange passes through the gateway.

The gateway changes a request only in documented ways, which `documented_request` undoes before comparing:
- the prompt-cache stage places `cache_control` breakpoints (Anthropic) and sets `prompt_cache_key`
  (OpenAI) where the caller did not;
- the lean OpenAI path asks a stream for its usage (`stream_options.include_usage`) and removes that
  usage chunk again where the caller did not ask for it;
- tools are sent sorted by name (`canonical_tools`: a client that reorders its tools keeps its prefix);
- `store` is sent as false where the caller did not say (provider-side state stays off);
- `previous_response_id` is answered from the gateway's own store: the provider gets the stored turns
  before the request's own input, and never the field (not even as null).
An answer may gain only the gateway's own fields: `usage.cachegate` and `: cachegate` SSE comments.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from gateway.prompt_cache.canonical import tool_name
from tests.conformance.cassette import Exchange


def _without_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_control(v) for v in value]
    return value


def _system_blocks(body: dict[str, Any]) -> dict[str, Any]:
    system = body.get("system")
    if isinstance(system, str):
        return {**body, "system": [{"type": "text", "text": system}]}
    return body


def documented_request(exchange: Exchange, sent: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(recorded, sent) with the gateway's documented changes undone on both."""
    recorded = copy.deepcopy(exchange.request)
    sent = copy.deepcopy(sent)
    if exchange.wire == "anthropic":
        recorded, sent = _system_blocks(_without_cache_control(recorded)), _system_blocks(_without_cache_control(sent))
    for body in (recorded, sent):
        if isinstance(body.get("tools"), list) and exchange.wire != "gemini":
            body["tools"] = sorted(body["tools"], key=tool_name)
    for added in ("prompt_cache_key", "stream_options", "store"):
        if added not in recorded:
            sent.pop(added, None)
    if "previous_response_id" in recorded and recorded["previous_response_id"] is None:
        del recorded["previous_response_id"]
    if recorded.get("previous_response_id") and "previous_response_id" not in sent:
        sent["input"] = _expanded_tail(recorded.get("input"), sent.get("input"))
        sent["previous_response_id"] = recorded["previous_response_id"]
    asked = recorded.get("stream_options")
    if isinstance(sent.get("stream_options"), dict) and isinstance(asked, dict) and "include_usage" not in asked:
        sent["stream_options"].pop("include_usage", None)
    return recorded, sent


def _expanded_tail(recorded: Any, sent: Any) -> Any:
    """The gateway answers `previous_response_id` from its own store: the provider gets the stored turns
    followed by the request's own input. Only that tail is the caller's."""
    own = [{"role": "user", "content": recorded}] if isinstance(recorded, str) else recorded
    if isinstance(own, list) and isinstance(sent, list) and len(sent) > len(own):
        tail = sent[len(sent) - len(own) :]
        return recorded if tail == own else sent
    return sent


def sse_events(raw: bytes) -> list[tuple[str | None, Any]]:
    """(event name, parsed data) of each SSE event; comments dropped, `[DONE]` kept as the string."""
    events: list[tuple[str | None, Any]] = []
    text = raw.decode("utf-8").replace("\r\n", "\n")
    for block in text.split("\n\n"):
        name: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if not data:
            continue
        joined = "\n".join(data)
        try:
            events.append((name, json.loads(joined)))
        except ValueError:
            events.append((name, joined))
    return events


def without_gateway_fields(value: Any) -> Any:
    """The answer less `usage.cachegate` (wherever a usage object sits)."""
    if isinstance(value, dict):
        return {
            k: without_gateway_fields(v)
            for k, v in value.items()
            if not (k == "cachegate" and isinstance(v, dict) and "cost_usd" in v)
        }
    if isinstance(value, list):
        return [without_gateway_fields(v) for v in value]
    return value


def answer_of(exchange: Exchange, raw: bytes) -> Any:
    if exchange.stream and exchange.status < 400:
        return [(name, without_gateway_fields(data)) for name, data in sse_events(raw)]
    return without_gateway_fields(json.loads(raw))


def first_difference(recorded: Any, got: Any, where: str = "") -> str | None:
    """Where two JSON values first differ, as a short path and the two values; None when equal."""
    if type(recorded) is not type(got):
        return f"{where or '/'}: recorded {_short(recorded)}, got {_short(got)}"
    if isinstance(recorded, dict):
        for key in sorted(set(recorded) | set(got)):
            if key not in got:
                return f"{where}/{key}: missing (recorded {_short(recorded[key])})"
            if key not in recorded:
                return f"{where}/{key}: added ({_short(got[key])})"
            if found := first_difference(recorded[key], got[key], f"{where}/{key}"):
                return found
        return None
    if isinstance(recorded, list | tuple):
        for i, (a, b) in enumerate(zip(recorded, got, strict=False)):
            if found := first_difference(a, b, f"{where}[{i}]"):
                return found
        if len(recorded) != len(got):
            return f"{where or '/'}: {len(recorded)} items recorded, {len(got)} got"
        return None
    return None if recorded == got else f"{where or '/'}: recorded {_short(recorded)}, got {_short(got)}"


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 160 else text[:157] + "..."
