"""Accounting: hit ratio, write tokens and savings net of write premiums, per request, session, tenant."""

from __future__ import annotations

import re
from typing import Any

import pytest

from gateway.prompt_cache import CacheTotals, hit_ratio, write_premium_usd
from gateway.usage import Cost, Price, Usage, price_for
from tests.gateway_harness import RunningGateway
from tests.prompt_cache.conftest import anthropic_client, long_text, new_session

PRICE = Price(input=3e-6, cache_read=3e-7, cache_write_5m=3.75e-6, cache_write_1h=6e-6, output=15e-6)


def test_hit_ratio_counts_writes_in_the_denominator() -> None:
    assert hit_ratio(read=800, uncached=100, write=100) == pytest.approx(0.8)
    assert hit_ratio(0, 0, 0) == 0.0


def test_savings_are_net_of_write_premiums() -> None:
    totals = CacheTotals()
    first = Usage(uncached_input=10, cache_write_5m=1000, output=5)  # writes only: costs more than no cache
    totals.add(first, Cost.of(first, PRICE), PRICE)
    assert totals.saved_usd == pytest.approx(-1000 * 0.75e-6)
    assert totals.write_premium_usd == pytest.approx(1000 * 0.75e-6)
    second = Usage(uncached_input=10, cache_read=1000, cache_write_1h=200, output=5)
    totals.add(second, Cost.of(second, PRICE), PRICE)
    # read 1000 saves 0.9 x input each; the 1h write costs 1 x input extra per token; the 5m one 0.25 x.
    assert totals.saved_usd == pytest.approx(1000 * 2.7e-6 - 200 * 3e-6 - 1000 * 0.75e-6)
    assert write_premium_usd(second, PRICE) == pytest.approx(200 * 3e-6)
    assert totals.hit_ratio == pytest.approx(1000 / (20 + 1000 + 1200))
    assert CacheTotals.from_json(totals.to_json()) == totals


def test_headers_and_metrics_follow_the_providers_usage(gw: RunningGateway) -> None:
    session, client = new_session(), anthropic_client(gw)
    messages: list[Any] = [{"role": "user", "content": "[[sim:text ok]] " + long_text("acct", 1500)}]
    usages: list[Any] = []
    for turn in range(2):
        raw = client.messages.with_raw_response.create(
            model="claude-sonnet-4-5", max_tokens=50, messages=messages, extra_headers={"x-session-id": session}
        )
        usages.append(raw.parse().usage)
        messages += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": f"[[sim:text ok]] {turn}"}]
    read = sum(u.cache_read_input_tokens for u in usages)
    write = sum(u.cache_creation_input_tokens for u in usages)
    uncached = sum(u.input_tokens for u in usages)
    price = price_for("anthropic/claude-sonnet-4-5")
    saved = read * (price.input - price.cache_read) - write * (price.cache_write_5m - price.input)
    assert read > 0 and write > 0
    assert float(raw.headers["x-cachegate-session-cache-hit-ratio"]) == pytest.approx(
        read / (read + write + uncached), abs=1e-4
    )
    assert int(raw.headers["x-cachegate-session-cache-write-tokens"]) == write
    assert float(raw.headers["x-cachegate-session-saved-usd"]) == pytest.approx(saved, rel=1e-6)
    last = usages[-1]
    assert float(raw.headers["x-cachegate-prompt-cache-hit-ratio"]) == pytest.approx(
        last.cache_read_input_tokens
        / (last.input_tokens + last.cache_read_input_tokens + last.cache_creation_input_tokens),
        abs=1e-4,
    )
    exposition = gw.metrics()
    assert re.search(r'cachegate_prompt_cache_hit_ratio\{tenant="acme"\} 0\.\d+', exposition)
    assert re.search(r'cachegate_prompt_cache_tokens_total\{kind="read",tenant="acme"\} [1-9]', exposition)
