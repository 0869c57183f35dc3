"""Which tiers a request may be answered from and stored into, and why not.

The exact tier only ever returns the answer to the very same canonical request, so it is safe for any
request the caller did not opt out of. The semantic tier returns another prompt's answer, so by default
it is limited to requests where that is what a caller expects (see config/response_cache.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.config.response_cache import ResponseCacheConfig
from gateway.response_cache.controls import Controls
from gateway.response_cache.keys import SAMPLING_DEFAULTS, SemanticScope, carries_tool_results


@dataclass(frozen=True, slots=True)
class Decision:
    exact: bool  # the exact tier takes part
    serve: bool  # may answer from the cache
    store: bool  # may store the upstream answer
    semantic: bool  # the semantic tier takes part (lookup if serve, store if store)
    namespace: str
    ttl_s: float
    max_age_s: float | None
    semantic_skip: str | None  # why the semantic tier sits out, for metrics


def temperature(wire: str, body: dict[str, Any]) -> float:
    value = body.get("temperature")
    return float(value) if isinstance(value, int | float) else SAMPLING_DEFAULTS[wire]["temperature"]


def _semantic_skip(
    wire: str, body: dict[str, Any], scope: SemanticScope | None, controls: Controls, policy: ResponseCacheConfig
) -> str | None:
    if not policy.semantic or controls.semantic is False:
        return "disabled"
    if scope is None:
        return "not_text_turn"
    if len(scope.prompt) > policy.max_prompt_chars:
        return "prompt_too_long"
    if not policy.semantic_with_tool_results and carries_tool_results(wire, body.get("messages") or []):
        return "tool_results"
    opted_in = controls.semantic is True and policy.allow_opt_in
    if temperature(wire, body) > policy.semantic_max_temperature and not opted_in:
        return "temperature"
    return None


def decide(
    wire: str, body: dict[str, Any], scope: SemanticScope | None, controls: Controls, policy: ResponseCacheConfig
) -> Decision:
    ttl = min(controls.ttl_s if controls.ttl_s is not None else policy.ttl_s, policy.max_ttl_s)
    skip = _semantic_skip(wire, body, scope, controls, policy)
    return Decision(
        exact=policy.enabled and policy.exact,
        serve=policy.enabled and not (controls.no_cache or controls.no_store),
        store=policy.enabled and not controls.no_store and ttl > 0,
        semantic=policy.enabled and skip is None,
        namespace=controls.namespace or policy.namespace,
        ttl_s=ttl,
        max_age_s=controls.max_age_s,
        semantic_skip=skip,
    )


def storable(wire: str, response: dict[str, Any], tool_calls_allowed: bool, *, gateway_written: bool = False) -> bool:
    """A complete, successful answer of the model: not cut short, not an error, a tool call only if
    allowed, and not written or cut by the gateway (a loop guard's stop, an answer cut for chanting, the
    terminate tool's final answer: they belong to one session's state, and look like a normal answer)."""
    if gateway_written:
        return False
    if wire == "responses":
        output = response.get("output") or []
        calls = any(isinstance(item, dict) and item.get("type") == "function_call" for item in output)
        return response.get("status") == "completed" and bool(output) and (tool_calls_allowed or not calls)
    if wire == "gemini":
        candidates = response.get("candidates") or []
        calls = any("functionCall" in part for c in candidates for part in (c.get("content") or {}).get("parts") or [])
        return (
            bool(candidates)
            and all(c.get("finishReason") == "STOP" for c in candidates)
            and (tool_calls_allowed or not calls)
        )
    if wire == "openai":
        finishes = {"stop", "tool_calls"} if tool_calls_allowed else {"stop"}
        choices = response.get("choices") or []
        return bool(choices) and all(c.get("finish_reason") in finishes for c in choices)
    stops = {"end_turn", "stop_sequence", "tool_use"} if tool_calls_allowed else {"end_turn", "stop_sequence"}
    return response.get("type", "message") == "message" and response.get("stop_reason") in stops
