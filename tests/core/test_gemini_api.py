"""The Gemini API (/v1beta/models/{model}:...) through the gateway: the real google-genai SDK, and the raw
requests Gemini CLI sends (docs/design/clients.md), converted to any configured route (OpenAI- and
Anthropic-backed simulator models), on both upstream paths."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from google import genai
from google.genai import types

from tests.gateway_harness import TENANT_KEYS, RunningGateway

KEY = TENANT_KEYS["acme"]
WEATHER = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(
            name="get_weather",
            description="Weather for a city",
            parameters=types.Schema(
                type=types.Type.OBJECT, properties={"city": types.Schema(type=types.Type.STRING)}, required=["city"]
            ),
        )
    ]
)


CLIENTS: list[genai.Client] = []  # a Client closes its HTTP connection pool when collected


def client(gw: RunningGateway, key: str = KEY, api_version: str = "v1beta") -> genai.Client:
    options = types.HttpOptions(
        base_url=gw.url, api_version=api_version, retry_options=types.HttpRetryOptions(attempts=1)
    )
    CLIENTS.append(genai.Client(api_key=key, http_options=options))
    return CLIENTS[-1]


@pytest.mark.parametrize("model", ["gpt-4o-mini", "claude-sonnet-4-5"])
def test_generate_content(any_gateway: RunningGateway, model: str) -> None:
    response = client(any_gateway).models.generate_content(
        model=model,
        contents="[[sim:text Bonjour from Gemini.]]",
        config=types.GenerateContentConfig(system_instruction="Be brief.", temperature=0.2),
    )
    assert response.text == "Bonjour from Gemini."
    assert response.candidates and response.candidates[0].finish_reason == types.FinishReason.STOP
    usage = response.usage_metadata
    assert usage and usage.prompt_token_count and usage.candidates_token_count
    assert usage.total_token_count == usage.prompt_token_count + usage.candidates_token_count
    sent = any_gateway.sim_requests(1)[-1]
    if sent["api"] == "openai":
        assert sent["body"]["messages"][0] == {"role": "system", "content": "Be brief."}
    else:  # an Anthropic route: the converted request went on through LiteLLM
        assert "Be brief." in json.dumps(sent["body"]["system"])


@pytest.mark.parametrize("model", ["gpt-4o-mini", "claude-sonnet-4-5"])
def test_generate_content_stream(any_gateway: RunningGateway, model: str) -> None:
    chunks = list(
        client(any_gateway).models.generate_content_stream(
            model=model, contents="[[sim:text alpha beta gamma delta epsilon]]"
        )
    )
    assert "".join(c.text or "" for c in chunks) == "alpha beta gamma delta epsilon"
    last = chunks[-1]
    assert last.candidates and last.candidates[0].finish_reason == types.FinishReason.STOP
    assert last.usage_metadata and last.usage_metadata.candidates_token_count


@pytest.mark.parametrize("stream", [False, True])
def test_function_call_round_trip(any_gateway: RunningGateway, stream: bool) -> None:
    gemini = client(any_gateway)
    config = types.GenerateContentConfig(
        tools=[WEATHER], automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)
    )
    ask = types.Content(role="user", parts=[types.Part(text='[[sim:tool get_weather {"city": "Paris"}]]')])
    if stream:
        chunks = list(gemini.models.generate_content_stream(model="gpt-4o-mini", contents=[ask], config=config))
        calls = [c for chunk in chunks for c in chunk.function_calls or []]
        assert chunks[-1].candidates and chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
    else:
        calls = gemini.models.generate_content(model="gpt-4o-mini", contents=[ask], config=config).function_calls or []
    assert [(c.name, c.args) for c in calls] == [("get_weather", {"city": "Paris"})]
    call = calls[0]
    answer = types.Part.from_function_response(name="get_weather", response={"temperature": 21})
    answer.function_response.id = call.id  # type: ignore[union-attr]
    history = [
        ask,
        types.Content(role="model", parts=[types.Part(function_call=call)]),
        types.Content(role="user", parts=[answer, types.Part(text="[[sim:text It is 21 degrees.]]")]),
    ]
    final = gemini.models.generate_content(model="gpt-4o-mini", contents=history, config=config)
    assert final.text == "It is 21 degrees."
    messages = any_gateway.sim_requests(1)[-1]["body"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user"]
    assert messages[1]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    assert messages[2]["tool_call_id"] == messages[1]["tool_calls"][0]["id"]
    assert json.loads(messages[2]["content"]) == {"temperature": 21}
    tools = any_gateway.sim_requests(1)[-1]["body"]["tools"]
    assert tools[0]["function"]["parameters"]["type"] == "object"


def test_count_tokens(gw: RunningGateway) -> None:
    gemini = client(gw)
    before = gw.sim_stats()
    short = gemini.models.count_tokens(model="gpt-4o-mini", contents="hello")
    long = gemini.models.count_tokens(model="gpt-4o-mini", contents="hello " * 200)
    assert short.total_tokens and long.total_tokens and long.total_tokens > short.total_tokens + 150
    assert gw.sim_stats() == before  # answered by the gateway, no provider call


# The request Gemini CLI 0.61 sends for its main turn (docs/design/clients.md), trimmed.
CLI_BODY: dict[str, Any] = {
    "contents": [{"role": "user", "parts": [{"text": "<session_context>cli</session_context>"}, {"text": "say hi"}]}],
    "systemInstruction": {"role": "user", "parts": [{"text": "You are Gemini CLI."}]},
    "tools": [{"functionDeclarations": [{"name": "list_directory", "parametersJsonSchema": {"type": "object"}}]}],
    "generationConfig": {"temperature": 1, "topP": 0.95, "topK": 64, "thinkingConfig": {"includeThoughts": True}},
}


def sse_chunks(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


@pytest.mark.parametrize("where", ["header", "query"])
def test_cli_stream_request(gw: RunningGateway, where: str) -> None:
    headers = {"x-goog-api-key": KEY} if where == "header" else {}
    params = {"alt": "sse", **({"key": KEY} if where == "query" else {})}
    response = httpx.post(
        f"{gw.url}/v1beta/models/gpt-4o-mini:streamGenerateContent", params=params, headers=headers, json=CLI_BODY
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    chunks = sse_chunks(response.text)
    assert chunks and chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert all(c["modelVersion"] == "gpt-4o-mini" for c in chunks)
    assert chunks[-1]["usageMetadata"]["promptTokenCount"] > 0
    sent = gw.sim_requests(1)[-1]["body"]
    assert "topK" not in sent and "thinkingConfig" not in json.dumps(sent) and sent["temperature"] == 1


def test_stream_without_alt_sse_is_a_json_array(gw: RunningGateway) -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "[[sim:text one two]]"}]}]}
    url = f"{gw.url}/v1beta/models/gpt-4o-mini:streamGenerateContent"
    response = httpx.post(url, headers={"x-goog-api-key": KEY}, json=body)
    assert response.status_code == 200 and isinstance(response.json(), list)
    assert response.json()[0]["candidates"][0]["content"]["parts"][0]["text"] == "one two"


def test_wrong_key_is_401_in_googles_shape(gw: RunningGateway) -> None:
    with pytest.raises(genai.errors.ClientError) as raised:
        client(gw, key="sk-wrong").models.generate_content(model="gpt-4o-mini", contents="hi")
    assert raised.value.code == 401 and raised.value.status == "UNAUTHENTICATED"
    url = f"{gw.url}/v1beta/models/gpt-4o-mini:generateContent"
    response = httpx.post(url, params={"key": "sk-wrong"}, json={"contents": [{"parts": [{"text": "hi"}]}]})
    assert response.status_code == 401 and response.json()["error"]["status"] == "UNAUTHENTICATED"
    missing = httpx.post(url, json={"contents": [{"parts": [{"text": "hi"}]}]})
    assert missing.status_code == 401 and set(missing.json()["error"]) == {"code", "message", "status"}


def test_unknown_model_and_method_are_404_in_googles_shape(gw: RunningGateway) -> None:
    with pytest.raises(genai.errors.ClientError) as raised:
        client(gw).models.generate_content(model="gemini-9-ultra", contents="hi")
    assert raised.value.code == 404 and raised.value.status == "NOT_FOUND"
    with pytest.raises(genai.errors.ClientError) as counted:
        client(gw).models.count_tokens(model="gemini-9-ultra", contents="hi")
    assert counted.value.code == 404
    response = httpx.post(f"{gw.url}/v1beta/models/gpt-4o-mini:embedContent", headers={"x-goog-api-key": KEY}, json={})
    assert response.status_code == 404 and response.json()["error"]["status"] == "NOT_FOUND"


def test_bad_body_is_400_invalid_argument(gw: RunningGateway) -> None:
    url = f"{gw.url}/v1beta/models/gpt-4o-mini:generateContent"
    response = httpx.post(url, headers={"x-goog-api-key": KEY}, json={"contents": [{"parts": "hi"}]})
    assert response.status_code == 400
    assert response.json()["error"]["status"] == "INVALID_ARGUMENT" and "contents[0].parts" in response.text


def test_cost_and_metrics(gw: RunningGateway) -> None:
    raw = httpx.post(
        f"{gw.url}/v1beta/models/gpt-4o-mini:generateContent",
        headers={"x-goog-api-key": KEY},
        json={"contents": [{"parts": [{"text": "[[sim:text costed]]"}]}]},
    )
    assert raw.status_code == 200 and float(raw.headers["x-cachegate-cost-usd"]) > 0
    assert 'cachegate_requests_total{api="gemini",model="gpt-4o-mini",provider="openai",status="ok"' in gw.metrics()


@pytest.mark.parametrize("stream", [False, True])
def test_exact_response_cache(stream: bool) -> None:
    """With the response cache on, a repeated Gemini request is answered from it (streamed: replayed as
    Gemini chunks), parsed by google-genai like the provider's answer; usage and cost still work."""
    from tests.core.conftest import CORE_POLICY
    from tests.gateway_harness import gateway_settings, running_gateway

    settings = gateway_settings(policy={**CORE_POLICY, "response_cache": {"enabled": True}})
    config = types.GenerateContentConfig(temperature=0)
    with running_gateway(**settings) as gw:
        gemini = client(gw)
        for _ in range(2):
            if stream:
                chunks = list(
                    gemini.models.generate_content_stream(
                        model="gpt-4o-mini", contents="[[sim:text same]]", config=config
                    )
                )
                assert "".join(c.text or "" for c in chunks) == "same"
            else:
                reply = gemini.models.generate_content(model="gpt-4o-mini", contents="[[sim:text same]]", config=config)
                assert reply.text == "same" and reply.candidates[0].finish_reason == types.FinishReason.STOP  # type: ignore[index]
        assert sum(1 for r in gw.sim_requests(10) if r["api"] == "openai") == 1
        metrics = gw.metrics()
        assert "cachegate_stage_failures_total{" not in metrics
        assert 'cachegate_requests_total{api="gemini",model="gpt-4o-mini"' in metrics
