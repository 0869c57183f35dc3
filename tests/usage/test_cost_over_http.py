"""Cost through the real HTTP server, against loopback stub providers answering with recorded Anthropic
messages (issue #27, item 2): the compaction step in `usage.iterations` is in x-cachegate-cost-usd and in
the tenant's spend, an advisor call read through LiteLLM's conversion (an OpenAI client on an Anthropic
route) is billed at the advisor model's rates, and a model priced nowhere is charged at the fallback
rates, said so in a header, the request record, a metric and one warning per model, never a silent 0.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from typing import Any

import httpx
import pytest

from tests.gateway_harness import TENANT_KEYS, RunningGateway, running_gateway
from tests.security.upstream_probe import trap_listener
from tests.usage.test_billed_parts import M, recorded

COMPACTION = recorded("anthropic_compaction_with_cache")
BILLED = 0.209637  # tests/usage/test_billed_parts.py: the compaction step and the message step
ADVISOR = recorded("anthropic_advisor")
UNPRICED_ROUTE = "cost-test-unlisted"  # the metric's label and the warning's model: the route's name


def route(name: str, model: str, api_base: str, path: str = "lean") -> dict[str, Any]:
    return {"name": name, "provider": "anthropic", "model": model, "api_base": api_base, "path": path, "retries": 0}


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    with (
        trap_listener(status=200, reply=COMPACTION["response"]) as stub,
        trap_listener(status=200, reply=ADVISOR["response"]) as advisor_stub,
    ):
        models = [
            route("claude-sonnet-4-6", "claude-sonnet-4-6", stub.url),
            route(UNPRICED_ROUTE, "claude-cachegate-unlisted", stub.url),
            route("claude-sonnet-5", "claude-sonnet-5", advisor_stub.url, path="litellm"),
        ]
        with running_gateway(models=models) as gateway:
            yield gateway


def ask(gw: RunningGateway, model: str, prompt: str) -> Mapping[str, str]:
    """One answer from the provider (each test's own prompt: the response cache never answers)."""
    raw = gw.anthropic().messages.with_raw_response.create(
        model=model, max_tokens=64, messages=[{"role": "user", "content": prompt}]
    )
    assert raw.http_response.status_code == 200
    return raw.headers


def tenant_cost(gw: RunningGateway, model: str) -> float:
    prefix = f'cachegate_cost_usd_total{{model="{model}",tenant="acme"}} '
    lines = [line for line in gw.metrics().splitlines() if line.startswith(prefix)]
    return float(lines[0].rsplit(" ", 1)[1]) if lines else 0.0


def test_cost_header_is_the_sum_over_iterations(gw: RunningGateway) -> None:
    before = tenant_cost(gw, "claude-sonnet-4-6")
    headers = ask(gw, "claude-sonnet-4-6", "Summarise our session.")
    assert float(headers["x-cachegate-cost-usd"]) == pytest.approx(BILLED, rel=1e-6)
    assert headers["x-cachegate-cache-write-tokens"] == "55096"  # written by the compaction step
    assert "x-cachegate-cost-basis" not in headers
    assert tenant_cost(gw, "claude-sonnet-4-6") - before == pytest.approx(BILLED, rel=1e-6)  # budgets read this


def test_an_advisor_call_through_litellm_is_billed_at_its_own_rates(gw: RunningGateway) -> None:
    """LiteLLM sums the iterations into the OpenAI shape; the advisor's share (claude-opus-4-8, $5/$25 per
    million) is priced apart from the executor's (claude-sonnet-5, $2/$10)."""
    raw = gw.openai().chat.completions.with_raw_response.create(
        model="claude-sonnet-5", messages=[{"role": "user", "content": "What's 2+2? Ask the advisor first."}]
    )
    executor = (1128 + 1262) * 2 * M + (110 + 11) * 10 * M
    advisor = 2518 * 5 * M + 22 * 25 * M
    assert float(raw.headers["x-cachegate-cost-usd"]) == pytest.approx(executor + advisor, rel=1e-6)


def record(gw: RunningGateway, request_id: str) -> dict[str, Any]:
    """The request's record, once the background writer has stored it (polled for up to two seconds)."""
    deadline = time.monotonic() + 2.0
    while True:
        found = httpx.get(f"{gw.url}/v1/requests/{request_id}", headers={"x-api-key": TENANT_KEYS["acme"]})
        if found.status_code != 404 or time.monotonic() > deadline:
            found.raise_for_status()
            body: dict[str, Any] = found.json()
            return body
        time.sleep(0.05)


def test_an_unpriced_model_is_a_warning_and_a_marked_estimate(
    gw: RunningGateway, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="cachegate")
    first, second = ask(gw, UNPRICED_ROUTE, "First question."), ask(gw, UNPRICED_ROUTE, "Second question.")
    # The table's fallback rates ($15 in, $18.75 per 5m write, $75 out per million), never 0.
    fallback = 329 * 15 * M + 55_096 * 18.75 * M + 136 * 75 * M
    for headers in (first, second):
        assert float(headers["x-cachegate-cost-usd"]) == pytest.approx(fallback, rel=1e-6)
        assert headers["x-cachegate-cost-basis"] == "fallback"
    assert record(gw, first["x-request-id"])["cost_basis"] == "fallback"
    assert f'cachegate_unpriced_requests_total{{model="{UNPRICED_ROUTE}"}} 2.0' in gw.metrics()
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and UNPRICED_ROUTE in r.getMessage()]
    assert len(warnings) == 1  # once per model per process
