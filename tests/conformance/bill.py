"""What a recorded exchange was billed, from the provider's own usage object and its public billing rules,
written apart from the gateway's pricing code so that the two can disagree.

Rates: LiteLLM's bundled cost map (USD per token), else the gateway's shipped price table
(gateway/usage/prices.yaml, USD per million tokens), read as data.
- OpenAI Chat: prompt tokens less cached at the input rate, cached at the cache-read rate, completion
  tokens (reasoning included) at the output rate. Responses: the same with input/output names, plus each
  `web_search_call` output item at the model's per-search rate (OpenAI bills tool calls per call).
- Anthropic: when `usage.iterations` is present the bill is the sum of every iteration (compaction
  steps and advisor calls included, each at its own model's rates); the top level repeats only the
  executor's message iterations. Cache writes by TTL; web searches at $10 per 1,000.
- Gemini: prompt tokens less cached content at the input rate, candidates plus thoughts at the output rate.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tests.conformance.cassette import PROVIDER_BY_WIRE, Exchange
from tests.conformance.compare import sse_events

PRICE_TABLE = Path(__file__).parents[2] / "gateway" / "usage" / "prices.yaml"
PER_MILLION = 1e-6


@cache
def _table() -> dict[str, Any]:
    return yaml.safe_load(PRICE_TABLE.read_text()) if PRICE_TABLE.exists() else {}


def rates(provider: str, model: str) -> dict[str, float] | None:
    """USD per token by kind, or None when neither source prices the model."""
    import litellm

    entry = litellm.model_cost.get(f"{provider}/{model}") or litellm.model_cost.get(model)
    if entry and entry.get("input_cost_per_token") is not None:
        base = float(entry["input_cost_per_token"])
        write = entry.get("cache_creation_input_token_cost")
        return {
            "input": base,
            "output": float(entry.get("output_cost_per_token") or 0.0),
            "cache_read": float(entry.get("cache_read_input_token_cost") or base),
            "cache_write_5m": float(write if write is not None else base * 1.25),
            "cache_write_1h": float(entry.get("cache_creation_input_token_cost_above_1hr") or base * 2),
            "web_search": _per_search(entry),
        }
    listed = _table().get("models", _table()).get(model)
    if not isinstance(listed, dict):
        return None
    base = float(listed["input"]) * PER_MILLION
    return {
        "input": base,
        "output": float(listed["output"]) * PER_MILLION,
        "cache_read": float(listed.get("cache_read", listed["input"])) * PER_MILLION,
        "cache_write_5m": float(listed.get("cache_write_5m", listed["input"] * 1.25)) * PER_MILLION,
        "cache_write_1h": float(listed.get("cache_write_1h", listed["input"] * 2)) * PER_MILLION,
        "web_search": float(listed.get("web_search_per_1k", 0.0)) / 1000,
    }


def _per_search(entry: dict[str, Any]) -> float:
    per_query = entry.get("search_context_cost_per_query")
    listed = per_query.get("search_context_size_medium") if isinstance(per_query, dict) else None
    return float(listed) if isinstance(listed, int | float) else 0.01  # Anthropic: $10 per 1,000 searches


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _anthropic_step(usage: dict[str, Any], price: dict[str, float]) -> float:
    creation = usage.get("cache_creation") or {}
    write_1h = _int(creation.get("ephemeral_1h_input_tokens"))
    write_5m = (
        _int(creation.get("ephemeral_5m_input_tokens")) if creation else _int(usage.get("cache_creation_input_tokens"))
    )
    return (
        _int(usage.get("input_tokens")) * price["input"]
        + write_5m * price["cache_write_5m"]
        + write_1h * price["cache_write_1h"]
        + _int(usage.get("cache_read_input_tokens")) * price["cache_read"]
        + _int(usage.get("output_tokens")) * price["output"]
    )


def _anthropic(usage: dict[str, Any], model: str) -> float | None:
    price = rates("anthropic", model)
    if price is None:
        return None
    searches = _int((usage.get("server_tool_use") or {}).get("web_search_requests")) * price["web_search"]
    iterations = usage.get("iterations")
    if not isinstance(iterations, list) or not iterations:
        return _anthropic_step(usage, price) + searches
    total = searches
    for step in iterations:
        step_price = rates("anthropic", step["model"]) if step.get("model") else price
        if step_price is None:
            return None
        total += _anthropic_step(step, step_price)
    return total


def _openai(usage: dict[str, Any], model: str, prompt: str, completion: str) -> float | None:
    price = rates("openai", model)
    if price is None:
        return None
    details = usage.get(f"{prompt}_details") or {}
    cached = _int(details.get("cached_tokens"))
    return (
        (_int(usage.get(prompt)) - cached) * price["input"]
        + cached * price["cache_read"]
        + _int(usage.get(completion)) * price["output"]
    )


def _gemini(meta: dict[str, Any], model: str) -> float | None:
    price = rates("gemini", model)
    if price is None:
        return None
    prompt = _int(meta.get("promptTokenCount")) + _int(meta.get("toolUsePromptTokenCount"))
    cached = _int(meta.get("cachedContentTokenCount"))
    output = _int(meta.get("candidatesTokenCount")) + _int(meta.get("thoughtsTokenCount"))
    return (prompt - cached) * price["input"] + cached * price["cache_read"] + output * price["output"]


def recorded_usage(exchange: Exchange) -> dict[str, Any] | None:
    """The usage object of the recorded answer (a stream's last, merged for Anthropic)."""
    if exchange.status >= 400:
        return None
    if not exchange.stream:
        body = exchange.response_json()
        return body.get("usageMetadata") if exchange.wire == "gemini" else body.get("usage")
    usage: dict[str, Any] | None = None
    for _, data in sse_events(exchange.response):
        if not isinstance(data, dict):
            continue
        if exchange.wire == "gemini" and data.get("usageMetadata"):
            usage = data["usageMetadata"]
        elif exchange.wire == "openai" and data.get("usage"):
            usage = data["usage"]
        elif exchange.wire == "responses" and isinstance(data.get("response"), dict) and data["response"].get("usage"):
            usage = data["response"]["usage"]
        elif exchange.wire == "anthropic" and data.get("type") == "message_start":
            usage = dict(data["message"].get("usage") or {})
        elif exchange.wire == "anthropic" and data.get("type") == "message_delta" and usage is not None:
            usage.update(data.get("usage") or {})
    return usage


def recorded_bill(exchange: Exchange) -> float | None:
    """USD the provider billed for the exchange; None when the recording holds no usage or no price."""
    usage = recorded_usage(exchange)
    if not usage:
        return None
    if exchange.wire == "anthropic":
        return _anthropic(usage, exchange.model)
    if exchange.wire == "gemini":
        return _gemini(usage, exchange.model)
    if exchange.wire == "openai":
        return _openai(usage, exchange.model, "prompt_tokens", "completion_tokens")
    tokens = _openai(usage, exchange.model, "input_tokens", "output_tokens")
    price = rates("openai", exchange.model)
    if tokens is None or price is None:
        return None
    return tokens + _web_search_calls(exchange) * price["web_search"]


def _web_search_calls(exchange: Exchange) -> int:
    if exchange.stream:
        done = [
            d for _, d in sse_events(exchange.response) if isinstance(d, dict) and d.get("type") == "response.completed"
        ]
        output = done[-1]["response"].get("output") if done else []
    else:
        output = exchange.response_json().get("output")
    return sum(1 for item in output or [] if isinstance(item, dict) and item.get("type") == "web_search_call")


def provider_of(exchange: Exchange) -> str:
    return PROVIDER_BY_WIRE[exchange.wire]
