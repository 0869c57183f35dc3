"""Usage and cost headers equal hand-computed values for known simulator scenarios."""

from __future__ import annotations

from typing import Any

import pytest

from tests.gateway_harness import RunningGateway

# Per-token USD prices from LiteLLM's cost map, written out by hand so a pricing bug shows.
GPT_4O_MINI = {"input": 0.15e-6, "cached": 0.075e-6, "output": 0.6e-6}
SONNET_4_5 = {"input": 3e-6, "write_5m": 3.75e-6, "write_1h": 6e-6, "read": 0.3e-6, "output": 15e-6}

LONG_TEXT = " ".join(f"Rule {i}: answer precisely and cite section {i}." for i in range(260))


def assert_usd(header: str, expected: float) -> None:
    assert float(header) == pytest.approx(expected, rel=1e-6, abs=1e-12)


def test_openai_cached_prefix_cost(any_gateway: RunningGateway) -> None:
    any_gateway.reset_sim()
    client = any_gateway.openai()
    messages: list[Any] = [{"role": "system", "content": LONG_TEXT}, {"role": "user", "content": "[[sim:text ok]]"}]
    first = client.chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=messages)
    usage1 = first.parse().usage
    assert usage1 is not None and usage1.prompt_tokens > 1024
    assert first.headers["x-cachegate-cache-read-tokens"] == "0"
    assert_usd(
        first.headers["x-cachegate-cost-usd"],
        usage1.prompt_tokens * GPT_4O_MINI["input"] + usage1.completion_tokens * GPT_4O_MINI["output"],
    )

    second = client.chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=messages)
    usage2 = second.parse().usage
    assert usage2 is not None
    cached = usage2.prompt_tokens_details.cached_tokens  # type: ignore[union-attr]
    # OpenAI's rule: from 1024 tokens, in 128-token steps, never more than the prompt.
    assert cached is not None and cached >= 1024 and cached % 128 == 0 and usage2.prompt_tokens - cached < 128
    assert second.headers["x-cachegate-cache-read-tokens"] == str(cached)
    expected = (
        (usage2.prompt_tokens - cached) * GPT_4O_MINI["input"]
        + cached * GPT_4O_MINI["cached"]
        + usage2.completion_tokens * GPT_4O_MINI["output"]
    )
    assert_usd(second.headers["x-cachegate-cost-usd"], expected)
    assert_usd(second.headers["x-cachegate-saved-usd"], cached * (GPT_4O_MINI["input"] - GPT_4O_MINI["cached"]))


@pytest.mark.parametrize("ttl", ["5m", "1h"])
def test_anthropic_write_then_read_cost(any_gateway: RunningGateway, ttl: str) -> None:
    any_gateway.reset_sim()
    client = any_gateway.anthropic()
    mark: dict[str, str] = {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": "1h"}
    system: Any = [{"type": "text", "text": LONG_TEXT, "cache_control": mark}]
    request: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 64,
        "system": system,
        "messages": [{"role": "user", "content": "[[sim:text fine]]"}],
    }

    first = client.messages.with_raw_response.create(**request)
    usage1 = first.parse().usage
    written = usage1.cache_creation_input_tokens or 0
    assert written > 1024 and (usage1.cache_read_input_tokens or 0) == 0
    assert first.headers["x-cachegate-cache-write-tokens"] == str(written)
    write_price = SONNET_4_5["write_5m"] if ttl == "5m" else SONNET_4_5["write_1h"]
    cost1 = (
        usage1.input_tokens * SONNET_4_5["input"] + written * write_price + usage1.output_tokens * SONNET_4_5["output"]
    )
    assert_usd(first.headers["x-cachegate-cost-usd"], cost1)
    # A write costs more than plain input: the first call's "savings" are negative.
    assert_usd(first.headers["x-cachegate-saved-usd"], -written * (write_price - SONNET_4_5["input"]))

    second = client.messages.with_raw_response.create(**request)
    usage2 = second.parse().usage
    assert usage2.cache_read_input_tokens == written and (usage2.cache_creation_input_tokens or 0) == 0
    cost2 = (
        usage2.input_tokens * SONNET_4_5["input"]
        + written * SONNET_4_5["read"]
        + usage2.output_tokens * SONNET_4_5["output"]
    )
    assert_usd(second.headers["x-cachegate-cost-usd"], cost2)
    assert_usd(second.headers["x-cachegate-saved-usd"], written * (SONNET_4_5["input"] - SONNET_4_5["read"]))


def test_streaming_usage_reported_in_trailer_and_metrics(gw: RunningGateway) -> None:
    import httpx
    import orjson

    body = {"model": "gpt-4o-mini", "stream": True, "messages": [{"role": "user", "content": "[[sim:text a b c]]"}]}
    with httpx.stream(
        "POST", f"{gw.url}/v1/chat/completions", json=body, headers={"authorization": "Bearer sk-globex-test"}
    ) as response:
        lines = [line for line in response.iter_lines() if line]
    trailer = [line for line in lines if line.startswith(": cachegate ")]
    assert trailer, lines
    facts = orjson.loads(trailer[-1][len(": cachegate ") :])
    assert float(facts["x-cachegate-cost-usd"]) > 0
    assert 'cachegate_cost_usd_total{model="gpt-4o-mini",tenant="globex"}' in gw.metrics()
