"""Metrics present after traffic, with bounded labels."""

from __future__ import annotations

from tests.gateway_harness import RunningGateway


def test_metrics_after_traffic(gw: RunningGateway) -> None:
    gw.openai("globex").chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    gw.anthropic("globex").messages.create(
        model="claude-sonnet-4-5", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
    )
    text = gw.metrics()
    for series in (
        'cachegate_requests_total{api="openai",model="gpt-4o-mini",provider="openai",status="ok",tenant="globex"}',
        'cachegate_requests_total{api="anthropic",model="claude-sonnet-4-5",provider="anthropic",status="ok",tenant="globex"}',
        'cachegate_tokens_total{kind="uncached_input",model="gpt-4o-mini",tenant="globex"}',
        'cachegate_tokens_total{kind="output",model="claude-sonnet-4-5",tenant="globex"}',
        'cachegate_cost_usd_total{model="claude-sonnet-4-5",tenant="globex"}',
        "cachegate_request_seconds_bucket",
        "cachegate_overhead_seconds_bucket",
        "cachegate_upstream_seconds_bucket",
    ):
        assert series in text, series


def test_unknown_model_does_not_add_label_values(gw: RunningGateway) -> None:
    import httpx

    for name in ("made-up-1", "made-up-2"):
        httpx.post(
            f"{gw.url}/v1/chat/completions",
            headers={"authorization": "Bearer sk-acme-test"},
            json={"model": name, "messages": [{"role": "user", "content": "x"}]},
        )
    text = gw.metrics()
    assert "made-up" not in text
    assert 'cachegate_errors_total{api="openai",type="not_found"}' in text
