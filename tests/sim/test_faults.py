"""Fault injection and authentication, seen through the official SDKs."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx
import openai
import pytest

from gateway.sim import FaultKind, SimSettings, create_sim_app
from tests.servers import run_app_in_thread
from tests.sim.conftest import SIM_ADMIN

HELLO: list[Any] = [{"role": "user", "content": "hello"}]


def test_429_header_fault_has_retry_after(oai: openai.OpenAI) -> None:
    with pytest.raises(openai.RateLimitError) as raised:
        oai.chat.completions.create(model="gpt-4o-mini", messages=HELLO, extra_headers={"x-sim-fault": "429"})
    assert raised.value.response.headers["retry-after"] == "1"
    assert raised.value.body["code"] == "rate_limit_exceeded"  # type: ignore[index]


def test_529_directive_is_overloaded(claude: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.APIStatusError) as raised:
        claude.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=8,
            messages=[{"role": "user", "content": "[[sim:fault 529]]"}],
        )
    assert raised.value.status_code == 529
    assert raised.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]


def test_fault_queue_then_recovery(oai: openai.OpenAI, sim_url: str) -> None:
    faults = {"faults": ["500"], "model": "gpt-4o-mini"}
    httpx.post(sim_url + "/sim/faults", json=faults, headers=SIM_ADMIN).raise_for_status()
    assert oai.chat.completions.create(model="gpt-4o", messages=HELLO).choices  # other model unaffected
    with pytest.raises(openai.InternalServerError):
        oai.chat.completions.create(model="gpt-4o-mini", messages=HELLO)
    assert oai.chat.completions.create(model="gpt-4o-mini", messages=HELLO).choices
    stats = httpx.get(sim_url + "/sim/stats", headers=SIM_ADMIN).json()
    assert stats["models"]["gpt-4o-mini"] == {**stats["models"]["gpt-4o-mini"], "fault_500": 1, "requests": 1}


def test_malformed_stream(oai: openai.OpenAI) -> None:
    stream = oai.chat.completions.create(
        model="gpt-4o-mini",
        stream=True,
        extra_headers={"x-sim-fault": "malformed_stream"},
        messages=[{"role": "user", "content": "[[sim:chant 5]]"}],
    )
    with pytest.raises(ValueError):
        list(stream)


def test_disconnect_mid_stream(claude: anthropic.Anthropic) -> None:
    messages: Any = [{"role": "user", "content": "[[sim:fault disconnect]] [[sim:chant 5]]"}]
    with pytest.raises(Exception) as raised:  # noqa: SIM117  (the SDK's transport error class)
        with claude.messages.stream(model="claude-sonnet-4-5", max_tokens=64, messages=messages) as stream:
            list(stream)
    assert "RemoteProtocolError" in type(raised.value).__name__ or isinstance(
        raised.value, anthropic.APIConnectionError
    )


def test_timeout_and_random_faults_and_required_key() -> None:
    settings = SimSettings(
        timeout_fault_s=2.0,
        require_key="secret",
        fault_rates={"claude-haiku-4-5": {FaultKind.SERVER_ERROR: 1.0}},
    )
    with run_app_in_thread(create_sim_app(settings)) as url:
        good = openai.OpenAI(base_url=url + "/v1", api_key="secret", max_retries=0, timeout=0.5)
        with pytest.raises(openai.APITimeoutError):
            good.chat.completions.create(model="gpt-4o-mini", messages=HELLO, extra_headers={"x-sim-fault": "timeout"})
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=url + "/v1", api_key="wrong", max_retries=0).chat.completions.create(
                model="gpt-4o-mini", messages=HELLO
            )
        claude = anthropic.Anthropic(base_url=url, api_key="secret", max_retries=0)
        with pytest.raises(anthropic.InternalServerError):
            claude.messages.create(model="claude-haiku-4-5", max_tokens=8, messages=HELLO)
        assert claude.messages.create(model="claude-sonnet-4-5", max_tokens=8, messages=HELLO).content
        with pytest.raises(anthropic.AuthenticationError):
            anthropic.Anthropic(base_url=url, api_key="wrong", max_retries=0).messages.create(
                model="claude-sonnet-4-5", max_tokens=8, messages=HELLO
            )
