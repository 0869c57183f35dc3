"""POST /v1/embeddings and /v1/completions through the gateway with the openai SDK (lean and LiteLLM
paths), and unknown paths or methods answered in the shape their path implies."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import openai
import pytest

from tests.gateway_harness import TENANT_KEYS, RunningGateway, gateway_settings, running_gateway

ALIASES = {"gpt-*": "gpt-4o-mini", "text-embedding-*": "embed"}
EMBED = {"provider": "openai", "model": "text-embedding-3-small", "api_base": "embedded-sim"}
EXTRA_MODELS = [
    {"name": "embed", **EMBED},
    {"name": "embed-litellm", **EMBED, "path": "litellm"},
    {
        "name": "gpt-litellm",
        "provider": "openai",
        "model": "gpt-4o-mini",
        "api_base": "embedded-sim",
        "path": "litellm",
    },
]
AUTH = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    settings = gateway_settings(model_aliases=ALIASES)
    settings["models"] = settings["models"] + EXTRA_MODELS
    with running_gateway(**settings) as gw:
        yield gw


@pytest.mark.parametrize("model", ["text-embedding-3-small", "embed-litellm"])
def test_embeddings(gw: RunningGateway, model: str) -> None:
    client = gw.openai()
    first = client.embeddings.create(model=model, input=["hello world", "goodbye"])  # base64 on the wire
    again = client.embeddings.create(model=model, input="hello world", encoding_format="float")
    assert [len(d.embedding) for d in first.data] == [1536, 1536]
    assert first.data[0].embedding == pytest.approx(again.data[0].embedding, abs=1e-6)  # deterministic
    assert first.data[0].embedding != first.data[1].embedding
    assert first.usage.prompt_tokens > 0
    short = client.embeddings.create(model=model, input="x", dimensions=8, encoding_format="float")
    assert len(short.data[0].embedding) == 8
    sent = gw.sim_requests(1)[-1]
    assert sent["path"] == "/sim/v1/embeddings" and sent["body"]["model"] == "text-embedding-3-small"


def test_embeddings_fields_are_filtered_and_errors_are_openai_shaped(gw: RunningGateway) -> None:
    response = httpx.post(
        f"{gw.url}/v1/embeddings",
        headers=AUTH,
        json={"model": "embed", "input": "hi", "api_base": "http://evil.example", "mock_response": "x"},
    )
    assert response.status_code == 200
    assert set(gw.sim_requests(1)[-1]["body"]) == {"model", "input"}
    with pytest.raises(openai.BadRequestError) as bad:
        gw.openai().embeddings.create(model="embed", input=[])
    assert bad.value.param == "input"
    with pytest.raises(openai.NotFoundError) as missing:
        gw.openai().embeddings.create(model="llama-embed", input="hi")
    assert missing.value.code == "model_not_found"


@pytest.mark.parametrize("model", ["gpt-3.5-turbo-instruct", "gpt-litellm"])
def test_legacy_completions(gw: RunningGateway, model: str) -> None:
    client = gw.openai()
    completion = client.completions.create(model=model, prompt="[[sim:text hello from the past]]", max_tokens=30)
    assert completion.choices[0].text == "hello from the past"
    assert completion.usage is not None and completion.usage.completion_tokens > 0
    stream = client.completions.create(
        model=model, prompt="[[sim:text one two three four five six]]", max_tokens=30, stream=True
    )
    assert "".join(chunk.choices[0].text for chunk in stream if chunk.choices) == "one two three four five six"


def test_legacy_completions_honour_max_tokens(gw: RunningGateway) -> None:
    completion = gw.openai().completions.create(model="gpt-4o-mini", prompt="[[sim:tokens 100]]", max_tokens=5)
    assert completion.choices[0].finish_reason == "length"


@pytest.mark.parametrize(
    ("method", "path", "status", "shape"),
    [
        ("POST", "/v1/nope", 404, "openai"),
        ("GET", "/v1/chat/completions", 405, "openai"),
        ("POST", "/v1/messages/batches", 404, "anthropic"),
        ("GET", "/v1/messages", 405, "anthropic"),
        ("POST", "/v1beta/cachedContents", 404, "gemini"),
        ("HEAD", "/api/hello", 404, "openai"),  # Claude Code's connectivity probe
        ("GET", "/v1/embeddings", 405, "openai"),
    ],
)
def test_unknown_paths_answer_in_the_path_shape(
    gw: RunningGateway, method: str, path: str, status: int, shape: str
) -> None:
    before = _unknown_count(gw, status)
    response = httpx.request(method, f"{gw.url}{path}", headers=AUTH, json={"model": "x"})
    assert response.status_code == status
    assert _unknown_count(gw, status) == before + 1
    if method == "HEAD":
        return
    body = response.json()
    assert "detail" not in body
    if shape == "openai":
        assert body["error"]["type"] == "invalid_request_error" and path in body["error"]["message"]
        assert body["error"]["code"] == ("unknown_url" if status == 404 else "method_not_allowed")
    elif shape == "anthropic":
        assert body["type"] == "error"
        assert body["error"]["type"] == ("not_found_error" if status == 404 else "invalid_request_error")
    else:
        assert body == {"error": {"code": 404, "message": body["error"]["message"], "status": "NOT_FOUND"}}


def test_route_raised_errors_keep_their_detail(gw: RunningGateway) -> None:
    headers = {"authorization": "Bearer sk-admin-test"}
    response = httpx.get(f"{gw.url}/admin/dashboard/sessions/acme/nope", headers=headers)
    assert response.status_code == 404 and "detail" in response.json()


def test_unknown_path_echo_is_bounded(gw: RunningGateway) -> None:
    response = httpx.post(f"{gw.url}/v1/" + "a" * 5000, headers=AUTH)
    assert response.status_code == 404 and len(response.json()["error"]["message"]) < 300


def _unknown_count(gw: RunningGateway, status: int) -> float:
    prefix = (
        f'cachegate_requests_total{{api="unknown",model="unknown",provider="none",status="{status}",tenant="unknown"}} '
    )
    for line in gw.metrics().splitlines():
        if line.startswith(prefix):
            return float(line[len(prefix) :])
    return 0.0
