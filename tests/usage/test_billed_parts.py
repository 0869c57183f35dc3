"""Every billed part of a recorded usage object is priced, at hand-computed list prices (issue #27, item 2).

The fixtures in recorded/ are real provider answers, copied from pydantic-ai's VCR cassettes (each file
names its source): an Anthropic compaction exchange with a 5-minute cache write in the compaction step, an
advisor call run on another model, Anthropic and OpenAI web searches, and Gemini answers from models
LiteLLM's map lacks.
Rates are USD per million tokens, written out by hand from the providers' price pages (see
gateway/usage/prices.yaml) and LiteLLM's bundled map, so that a pricing bug shows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway.config import ModelConfig
from gateway.usage import Cost, Usage, route_price
from gateway.wire import WIRES

RECORDED = Path(__file__).parent / "recorded"
M = 1e-6  # per million


def recorded(name: str) -> dict[str, Any]:
    fixture: dict[str, Any] = json.loads((RECORDED / f"{name}.json").read_text())
    return fixture


def bill(name: str, provider: str, wire: str, model: str | None = None, **route: Any) -> tuple[Usage, Cost]:
    """What the gateway charges for the recorded answer on a route to `model` (default: the one the client
    asked for)."""
    fixture = recorded(name)
    config = ModelConfig(name="route", provider=provider, model=model or fixture["request_model"], **route)
    usage = WIRES[wire].usage(fixture["response"])
    return usage, Cost.of(usage, route_price(config))


def test_compaction_step_is_billed() -> None:
    """The top level holds only the final message step; the compaction step wrote 55,096 tokens to the
    cache. Billed $0.2096 (the gateway charged $0.00076 before)."""
    usage, cost = bill("anthropic_compaction_with_cache", "anthropic", "anthropic")
    compaction = 100 * 3 * M + 55_096 * 3.75 * M + 131 * 15 * M  # claude-sonnet-4-6
    message = 229 * 3 * M + 5 * 15 * M
    assert cost.usd == pytest.approx(compaction + message, rel=1e-9)
    assert cost.usd == pytest.approx(0.209637, rel=1e-9)
    assert (usage.uncached_input, usage.cache_write_5m, usage.output) == (329, 55_096, 136)  # token budgets see it
    assert not cost.estimated


def test_advisor_step_is_billed_at_the_advisor_models_rates() -> None:
    """The executor (claude-sonnet-5, $2/$10) called an advisor (claude-opus-4-8, $5/$25) in between."""
    usage, cost = bill("anthropic_advisor", "anthropic", "anthropic")
    executor = (1128 + 1262) * 2 * M + (110 + 11) * 10 * M
    advisor = 2518 * 5 * M + 22 * 25 * M
    assert cost.usd == pytest.approx(executor + advisor, rel=1e-9)
    assert (usage.input_total, usage.output) == (1128 + 2518 + 1262, 110 + 22 + 11)
    assert usage.other_models == (("claude-opus-4-8", Usage(uncached_input=2518, output=22)),)


@pytest.mark.parametrize(
    ("model", "rates"),
    [
        ("claude-sonnet-4-0", (3.0, 15.0)),  # not in LiteLLM's map: the price table's
        ("claude-haiku-4-5", (1.0, 5.0)),  # in the map, without a search rate: Anthropic's for every model
    ],
)
def test_web_search_is_billed_per_search(model: str, rates: tuple[float, float]) -> None:
    """One search at $10 per 1,000, on top of the tokens."""
    usage, cost = bill("anthropic_web_search", "anthropic", "anthropic", model=model)
    assert usage.web_search_requests == 1
    assert cost.usd == pytest.approx(8984 * rates[0] * M + 520 * rates[1] * M + 0.01, rel=1e-9)
    assert not cost.estimated


def test_openai_web_search_calls_are_billed_and_reasoning_is_not_counted_twice() -> None:
    """gpt-5 on the Responses API ($1.25 in, $0.125 cached, $10 out): one `web_search_call` item at $10 per
    1,000 calls, which its usage does not count; the 512 reasoning tokens are inside output_tokens."""
    usage, cost = bill("openai_responses_web_search", "openai", "responses")
    assert (usage.uncached_input, usage.cache_read, usage.output, usage.web_search_requests) == (851, 8448, 577, 1)
    assert cost.usd == pytest.approx(851 * 1.25 * M + 8448 * 0.125 * M + 577 * 10 * M + 0.01, rel=1e-9)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # promptTokenCount 107 at $2; candidatesTokenCount 23 plus thoughtsTokenCount 123 at the $12 output rate
        ("gemini_3_pro_preview_thoughts", 107 * 2 * M + (23 + 123) * 12 * M),
        ("gemini_2_0_flash", 13 * 0.1 * M + 8 * 0.4 * M),
    ],
)
def test_gemini_models_the_map_lacks_are_priced(name: str, expected: float) -> None:
    _, cost = bill(name, "gemini", "gemini")
    assert cost.usd == pytest.approx(expected, rel=1e-9)
    assert not cost.estimated


def test_a_deployments_own_prices_come_first() -> None:
    """A route's `prices` (say, a negotiated rate) over LiteLLM's map; unset cache rates follow input."""
    prices = {"input": 1.0, "output": 2.0, "web_search_per_1k": 5.0}
    _, cost = bill("anthropic_compaction_with_cache", "anthropic", "anthropic", prices=prices)
    assert cost.usd == pytest.approx((100 + 55_096 + 229) * 1.0 * M + (131 + 5) * 2.0 * M, rel=1e-9)


def test_an_unpriced_model_is_charged_at_the_fallback_rates_and_marked() -> None:
    """Never a silent 0: a model priced nowhere costs the table's fallback rates ($15/$75 per million)."""
    fixture = recorded("gemini_2_0_flash")
    config = ModelConfig(name="route", provider="gemini", model="gemini-cachegate-unlisted")
    usage = WIRES["gemini"].usage(fixture["response"])
    cost = Cost.of(usage, route_price(config))
    assert cost.estimated
    assert cost.usd == pytest.approx(13 * 15 * M + 8 * 75 * M, rel=1e-9)


@pytest.mark.parametrize(
    ("model", "short", "long"),
    [
        ("gemini-3-pro-preview", (2.0, 12.0), (4.0, 18.0)),  # the price table's tiers
        ("gemini-2.5-pro", (1.25, 10.0), (2.5, 15.0)),  # LiteLLM's map's *_above_200k_tokens rates
    ],
)
def test_a_prompt_over_200k_tokens_is_billed_at_the_long_context_rates(
    model: str, short: tuple[float, float], long: tuple[float, float]
) -> None:
    """Google bills every token of a prompt over 200,000 tokens at the higher tier: the recorded
    gemini-3-pro-preview answer, its promptTokenCount raised past the line and to it."""
    response = recorded("gemini_3_pro_preview_thoughts")["response"]
    price = route_price(ModelConfig(name="route", provider="gemini", model=model))
    output = 23 + 123  # candidates and thoughts
    for prompt, (rate_in, rate_out) in ((250_000, long), (200_000, short)):
        meta = {**response["usageMetadata"], "promptTokenCount": prompt}
        cost = Cost.of(WIRES["gemini"].usage({**response, "usageMetadata": meta}), price)
        assert cost.usd == pytest.approx(prompt * rate_in * M + output * rate_out * M, rel=1e-9)
