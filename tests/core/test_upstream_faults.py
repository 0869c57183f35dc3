"""Upstream 429/5xx/timeouts/broken streams: retried per config, then surfaced in the caller's shape."""

from __future__ import annotations

import time

import anthropic
import httpx
import openai
import pytest

from tests.gateway_harness import RunningGateway

HI = [{"role": "user", "content": "[[sim:text recovered]]"}]


def test_429_is_retried(any_gateway: RunningGateway) -> None:
    any_gateway.reset_sim()
    any_gateway.queue_faults("429", model="gpt-4o-mini")
    reply = any_gateway.openai().chat.completions.create(model="gpt-4o-mini", messages=HI)  # type: ignore[arg-type]
    assert reply.choices[0].message.content == "recovered"
    assert 'cachegate_upstream_retries_total{model="gpt-4o-mini",reason="429"}' in any_gateway.metrics()


def test_fallback_after_retries(any_gateway: RunningGateway) -> None:
    any_gateway.reset_sim()
    any_gateway.queue_faults("500", "500", model="gpt-4.1-mini")  # 'flaky' has retries=1, then gpt-4o-mini
    reply = any_gateway.openai().chat.completions.create(model="flaky", messages=HI)  # type: ignore[arg-type]
    assert reply.choices[0].message.content == "recovered" and reply.model == "gpt-4o-mini"


def test_exhausted_retries_surface_in_caller_shape(any_gateway: RunningGateway) -> None:
    any_gateway.reset_sim()
    any_gateway.queue_faults("500", "500", "500", model="gpt-4o-mini")
    with pytest.raises(openai.InternalServerError) as error:
        any_gateway.openai().chat.completions.create(model="gpt-4o-mini", messages=HI)  # type: ignore[arg-type]
    assert error.value.status_code == 502 and error.value.type == "api_error"

    any_gateway.queue_faults("529", "529", "529", model="claude-sonnet-4-5")
    with pytest.raises(anthropic.APIStatusError) as ant_error:
        any_gateway.anthropic().messages.create(model="claude-sonnet-4-5", max_tokens=5, messages=HI)  # type: ignore[arg-type]
    assert ant_error.value.status_code == 529
    assert ant_error.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]


def test_upstream_timeout_is_504(gw: RunningGateway) -> None:
    gw.reset_sim()
    started = time.monotonic()
    with pytest.raises(openai.APIStatusError) as error:
        gw.openai().chat.completions.create(
            model="slow", messages=[{"role": "user", "content": "[[sim:fault timeout]]"}]
        )
    assert error.value.status_code == 504 and time.monotonic() - started < 10


@pytest.mark.parametrize("fault", ["malformed_stream", "disconnect"])
def test_broken_stream_ends_with_an_error_event(any_gateway: RunningGateway, fault: str) -> None:
    any_gateway.reset_sim()
    stream = any_gateway.openai().chat.completions.create(
        model="gpt-4o-mini",
        stream=True,
        messages=[{"role": "user", "content": f"[[sim:tokens 60]] [[sim:fault {fault}]]"}],
    )
    with pytest.raises(openai.APIError):
        for _ in stream:
            pass


def test_anthropic_broken_stream_error_event(gw: RunningGateway) -> None:
    gw.reset_sim()
    with (
        pytest.raises(anthropic.APIStatusError) as error,
        gw.anthropic().messages.stream(
            model="claude-sonnet-4-5",
            max_tokens=100,
            messages=[{"role": "user", "content": "[[sim:tokens 60]] [[sim:fault malformed_stream]]"}],
        ) as stream,
    ):
        for _ in stream:
            pass
    assert "malformed" in str(error.value)


def test_client_disconnect_releases_the_stream(gw: RunningGateway) -> None:
    body = {"model": "gpt-4o-mini", "stream": True, "messages": [{"role": "user", "content": "[[sim:tokens 4000]]"}]}
    with httpx.stream(
        "POST", f"{gw.url}/v1/chat/completions", json=body, headers={"authorization": "Bearer sk-acme-test"}
    ) as response:
        next(response.iter_lines())
    deadline = time.monotonic() + 5
    while "cachegate_in_flight_requests 0.0" not in gw.metrics():
        assert time.monotonic() < deadline, "the cancelled stream was never released"
        time.sleep(0.05)
