"""A provider stream that breaks on the LiteLLM path is an error, never an answer (issue #26, finding 10).

LiteLLM skips an event it cannot parse and ends the stream with a made-up `finish_reason: "stop"` and usage
of its own estimate: the gateway used to relay that as a complete answer, record it as a success and store
it in the response cache, which then served the truncated text as an exact hit.

Real gateway on loopback (path forced to LiteLLM, response cache on its memory backend), the simulator's
`malformed_stream` fault (an event cut in the middle of its JSON, then the end of the stream), the official
SDKs. Four LiteLLM stream shapes: acompletion (OpenAI caller, Anthropic provider), the Responses-to-chat
bridge (Responses caller, Anthropic provider), the Anthropic adapter over a chat stream (Anthropic caller,
an OpenAI-compatible vLLM provider) and over a Responses stream (Anthropic caller, OpenAI provider), whose
own error event carried LiteLLM's exception text and was recorded as an answer.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import openai
import pytest

from gateway.sim import SimSettings, create_sim_app
from tests.gateway_harness import RunningGateway, gateway_settings, running_gateway
from tests.response_cache.conftest import metric
from tests.servers import run_app_in_thread

CACHE = "x-cachegate-cache"
MALFORMED = "[[sim:fault malformed_stream]] [[sim:chant 5]]"
OUR_WORDS = r"The (provider sent a malformed stream|gateway lost the provider's stream)\."


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    with run_app_in_thread(create_sim_app(SimSettings())) as sim:
        settings = gateway_settings(path="litellm")
        vllm = {"name": "vllm", "provider": "hosted_vllm", "model": "gpt-4o-mini", "api_base": f"{sim}/v1"}
        settings["models"].append({**vllm, "path": "litellm", "retries": 0})
        with running_gateway(**settings) as gateway:
            yield gateway


def chat(gw: RunningGateway, prompt: str, model: str) -> tuple[str, list[Any]]:
    raw = gw.openai().chat.completions.with_raw_response.create(
        model=model, temperature=0, stream=True, messages=[{"role": "user", "content": prompt}]
    )
    finishes: list[Any] = []
    with pytest.raises(openai.APIError, match=OUR_WORDS):
        for chunk in raw.parse():
            finishes += [choice.finish_reason for choice in chunk.choices if choice.finish_reason]
    return raw.headers[CACHE], finishes


def responses(gw: RunningGateway, prompt: str, model: str) -> tuple[str, list[Any]]:
    raw = gw.openai().responses.with_raw_response.create(model=model, temperature=0, stream=True, input=prompt)
    finishes: list[Any] = []
    with pytest.raises(openai.APIError, match=OUR_WORDS):
        for event in raw.parse():
            finishes += [event.type] if event.type in ("response.completed", "response.incomplete") else []
    return raw.headers[CACHE], finishes


def messages(gw: RunningGateway, prompt: str, model: str) -> tuple[str, list[Any]]:
    raw = gw.anthropic().messages.with_raw_response.create(
        model=model,
        max_tokens=64,
        stream=True,
        messages=[{"role": "user", "content": prompt}],
        extra_body={"temperature": 0},  # not a parameter of this SDK version's create()
    )
    finishes: list[Any] = []
    with pytest.raises(anthropic.APIStatusError) as raised:
        for event in raw.parse():
            finishes += [event.delta.stop_reason] if event.type == "message_delta" else []
    assert re.fullmatch(OUR_WORDS, raised.value.body["error"]["message"])  # type: ignore[index]
    return raw.headers[CACHE], finishes


Sender = Callable[[RunningGateway, str, str], tuple[str, list[Any]]]
CALLERS: dict[str, tuple[Sender, dict[str, str]]] = {
    "openai chat -> anthropic": (chat, {"api": "openai", "model": "claude-sonnet-4-5", "provider": "anthropic"}),
    "responses -> anthropic (chat bridge)": (
        responses,
        {"api": "responses", "model": "claude-sonnet-4-5", "provider": "anthropic"},
    ),
    "anthropic -> vllm (chat adapter)": (
        messages,
        {"api": "anthropic", "model": "vllm", "provider": "hosted_vllm"},
    ),
    "anthropic -> openai (responses adapter)": (
        messages,
        {"api": "anthropic", "model": "gpt-4o-mini", "provider": "openai"},
    ),
}


@pytest.mark.parametrize("caller", sorted(CALLERS))
def test_malformed_stream_is_an_error_and_never_cached(gw: RunningGateway, caller: str) -> None:
    send, route = CALLERS[caller]
    prompt = f"{MALFORMED} {uuid.uuid4().hex}"
    labels = {**route, "tenant": "acme"}
    ok = metric(gw, "cachegate_requests_total", **labels, status="ok")
    failed = metric(gw, "cachegate_requests_total", **labels, status="502")

    cache, finishes = send(gw, prompt, route["model"])
    assert (cache, finishes) == ("miss", [])  # no made-up end of the answer reached the caller
    # Counted as the provider's failure, not as an answered request.
    assert metric(gw, "cachegate_requests_total", **labels, status="502") == failed + 1
    assert metric(gw, "cachegate_requests_total", **labels, status="ok") == ok
    # Not stored: the same request goes to the provider again (and fails again) instead of an exact hit.
    assert send(gw, prompt, route["model"]) == ("miss", [])
