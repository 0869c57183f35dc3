"""Anthropic's server-side `fallbacks` (beta) make the provider answer with other models than the one asked
for, with the gateway's key: each must be a configured model, the provider's own chain ("default") is
refused, and a reply is billed as the model that answered, so a cheap route cannot carry an expensive
model's tokens past a budget. Refusals are a 400 that clients do not retry, and reach no provider."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from tests.core.conftest import CORE_POLICY
from tests.gateway_harness import RunningGateway, gateway_settings, running_gateway
from tests.recorded_provider import Recorded, Stub, recorded_provider
from tests.security.upstream_probe import assert_refused

# Per-route list prices (USD per million tokens), so a bill shows which route priced it.
SONNET = {"input": 3.0, "output": 15.0}
OPUS = {"input": 15.0, "output": 75.0}


@pytest.fixture(scope="module", params=["lean", "litellm"])
def stub_gateway(request: pytest.FixtureRequest) -> Iterator[tuple[RunningGateway, Stub]]:
    with recorded_provider() as stub:
        common = {"provider": "anthropic", "api_base": stub.url, "path": request.param, "retries": 0}
        models = [
            {"name": "claude-sonnet-4-5", "model": "claude-sonnet-4-5", "prices": SONNET, **common},
            {"name": "claude-opus-4-1", "model": "claude-opus-4-1", "prices": OPUS, **common},
            {"name": "gpt-4o", "provider": "openai", "model": "gpt-4o", "api_base": stub.url, "retries": 0},
        ]
        with running_gateway(**gateway_settings(policy=CORE_POLICY, models=models)) as gw:
            yield gw, stub


def reply(model: str) -> dict[str, Any]:
    """An Anthropic Messages reply as the API sends it, from `model`: 1M input and 1M output tokens."""
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": "Hello."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1_000_000, "output_tokens": 1_000_000},
    }


# An OpenAI Responses API reply as the API sends it (LiteLLM calls OpenAI's Responses API for an Anthropic
# Messages request).
OPENAI_REPLY = {
    "id": "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
    "object": "response",
    "created_at": 1741476542,
    "status": "completed",
    "model": "gpt-4o-2024-08-06",
    "output": [
        {
            "type": "message",
            "id": "msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Hello.", "annotations": []}],
        }
    ],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
    "usage": {
        "input_tokens": 36,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 2,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 38,
    },
}


def ask(gw: RunningGateway, model: str, fallbacks: Any) -> Any:
    return gw.anthropic().messages.with_raw_response.create(
        model=model,
        max_tokens=16,
        messages=[{"role": "user", "content": "hi"}],
        extra_body={"fallbacks": fallbacks},
        extra_headers={"anthropic-beta": "server-side-fallback-2026-07-01"},
    )


@pytest.mark.parametrize(
    ("model", "fallbacks", "named"),
    [
        ("claude-sonnet-4-5", [{"model": "claude-opus-4-1"}, {"model": "claude-unconfigured-9"}], "unconfigured"),
        ("claude-sonnet-4-5", "default", "default"),
    ],
    ids=["unconfigured", "providers-chain"],
)
def test_fallbacks_name_only_configured_models(
    stub_gateway: tuple[RunningGateway, Stub], model: str, fallbacks: Any, named: str
) -> None:
    gw, stub = stub_gateway
    before = len(stub.requests)
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask(gw, model, fallbacks)
    assert_refused(caught, named)
    assert len(stub.requests) == before


def test_a_reply_is_billed_as_the_model_that_answered(stub_gateway: tuple[RunningGateway, Stub]) -> None:
    gw, stub = stub_gateway
    chain = [{"model": "claude-opus-4-1"}]
    stub.answer = Recorded(body=reply("claude-sonnet-4-5"))
    asked = ask(gw, "claude-sonnet-4-5", chain)
    if gw.services.settings.models[0].path == "lean":  # LiteLLM takes `fallbacks` as its own option: dropped
        assert stub.requests[-1]["fallbacks"] == chain  # a configured chain reaches the provider as sent
    stub.answer = Recorded(body=reply("claude-opus-4-1"))  # the provider fell back
    fell_back = ask(gw, "claude-sonnet-4-5", chain)
    assert float(asked.headers["x-cachegate-cost-usd"]) == pytest.approx(SONNET["input"] + SONNET["output"])
    assert float(fell_back.headers["x-cachegate-cost-usd"]) == pytest.approx(OPUS["input"] + OPUS["output"])


def test_another_providers_route_never_gets_the_chain(stub_gateway: tuple[RunningGateway, Stub]) -> None:
    """An Anthropic request routed to an OpenAI model: the chain means nothing there and is left out."""
    gw, stub = stub_gateway
    stub.answer = Recorded(body=OPENAI_REPLY)
    asked = ask(gw, "gpt-4o", [{"model": "claude-unconfigured-9"}])
    assert asked.status_code == 200
    assert "fallbacks" not in stub.requests[-1]
