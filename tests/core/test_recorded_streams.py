"""OpenAI Chat streams recorded from real providers pass through in order and unchanged; only the usage
chunk the gateway asked for on the client's behalf is removed, and the cost fields (`usage.cachegate`)
reach only clients that asked for usage."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from tests.core.conftest import CORE_POLICY
from tests.gateway_harness import RunningGateway, gateway_settings, running_gateway
from tests.recorded_provider import Recorded, Stub, recorded_provider, routes

ID, MODEL, CREATED = "chatcmpl-BleatwEUn3D8iXsgXpDqeOPEMuW3j", "gpt-4o-2024-08-06", 1750697159
SAFE = {"filtered": False, "severity": "safe"}
FILTERS = {"hate": SAFE, "self_harm": SAFE, "sexual": SAFE, "violence": SAFE}


def _chunk(choice: dict[str, Any], **extra: Any) -> dict[str, Any]:
    head = {"created": CREATED, "id": ID, "model": MODEL, "object": "chat.completion.chunk"}
    return {"choices": [{"finish_reason": None, "index": 0, "logprobs": None, **choice}], **head, **extra}


USAGE = {"completion_tokens": 4, "prompt_tokens": 14, "total_tokens": 18}
# A real Azure OpenAI stream, recorded in quarkiverse/quarkus-langchain4j (model-providers/openai/azure-openai/
# deployment/src/test/java/io/quarkiverse/langchain4j/azure/openai/test/AzureOpenAiStreamingChatModelTest.java,
# "generated from a true API call to Azure OpenAI"): the moderation results come first, in a chunk with
# `"choices": []` and no usage. Its last chunk carries usage as some OpenAI-compatible providers attach it
# to their finish chunk (a Gemini proxy's recorded stream has `{"delta":{},"finish_reason":"stop",...,"usage":
# {...}}`); the client did not ask for it, the provider sent it anyway: it passes as is.
RECORDED: list[dict[str, Any]] = [
    {
        "choices": [],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": FILTERS}],
    },
    _chunk(
        {"content_filter_results": {}, "delta": {"content": "", "refusal": None, "role": "assistant"}},
        system_fingerprint="fp_ee1d74bde0",
    ),
    *(
        _chunk({"content_filter_results": FILTERS, "delta": {"content": text}}, system_fingerprint="fp_ee1d74bde0")
        for text in ("Hallo", " Welt", "!")
    ),
    _chunk(
        {"content_filter_results": {}, "delta": {}, "finish_reason": "stop"},
        system_fingerprint="fp_ee1d74bde0",
        usage=USAGE,
    ),
]
# OpenAI's `include_usage` chunk (no choices, usage only), sent because the gateway asks for it.
USAGE_CHUNK = {"choices": [], "created": CREATED, "id": ID, "model": MODEL, "object": "chat.completion.chunk"}
USAGE_CHUNK |= {"system_fingerprint": "fp_ee1d74bde0", "usage": USAGE}


def _stream(body: dict[str, Any]) -> list[dict[str, Any]]:
    asked = (body.get("stream_options") or {}).get("include_usage")
    return [*copy.deepcopy(RECORDED), *([copy.deepcopy(USAGE_CHUNK)] if asked else [])]


@pytest.fixture(scope="module", params=["lean", "litellm"])
def stub_gateway(request: pytest.FixtureRequest) -> Iterator[tuple[RunningGateway, Stub]]:
    with recorded_provider() as stub:
        stub.answer = Recorded(events=_stream)
        settings = gateway_settings(path=request.param, policy=CORE_POLICY, models=routes(stub.url, request.param))
        with running_gateway(**settings) as gw:
            yield gw, stub


def _chunks(gw: RunningGateway, **options: Any) -> list[dict[str, Any]]:
    stream = gw.openai().chat.completions.create(
        model="gpt-4o",
        messages=[{"role": "user", "content": "Translate to German: Hello world!"}],
        stream=True,
        **options,
    )
    return [chunk.to_dict() for chunk in stream]


def _lean(gw: RunningGateway) -> bool:
    return gw.services.settings.models[0].path == "lean"


def test_without_include_usage_every_chunk_passes_but_the_added_usage_chunk(
    stub_gateway: tuple[RunningGateway, Stub],
) -> None:
    gw, stub = stub_gateway
    chunks = _chunks(gw)
    assert stub.requests[-1]["stream_options"]["include_usage"] is True  # the gateway asked, for its own count
    assert not [c for c in chunks if "cachegate" in (c.get("usage") or {})], chunks
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"]) == "Hallo Welt!"
    if _lean(gw):  # same wire, same bytes (LiteLLM rebuilds each chunk in its own shape)
        assert chunks == RECORDED


def test_with_include_usage_everything_passes_and_the_usage_chunk_carries_the_cost(
    stub_gateway: tuple[RunningGateway, Stub],
) -> None:
    gw, _ = stub_gateway
    chunks = _chunks(gw, stream_options={"include_usage": True})
    last = chunks[-1]
    assert set(last["usage"]["cachegate"]) >= {"cost_usd", "saved_usd"}
    assert not [c for c in chunks[:-1] if "cachegate" in (c.get("usage") or {})]  # once, on the last usage
    assert {k: v for k, v in last["usage"].items() if k in USAGE} == USAGE
    if _lean(gw):
        assert chunks[:-1] == RECORDED
        assert {**last, "usage": {k: v for k, v in last["usage"].items() if k != "cachegate"}} == USAGE_CHUNK
